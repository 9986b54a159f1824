// The monitor view's Queries tab (docs/ui.md): top queries of the last hour, a digest's
// samples and current plan, and the blocking chains now, from GET /api/ui/queries?id=ID.
// app.js calls window.sondeQueries.show(id, getJson) each time it draws a monitor; this
// file adds the tab bar (Overview | Queries) above the charts and owns the tab's content.
// Every text is set with textContent: nothing from the server is parsed as HTML.

const tabs = { tab: 'overview', digest: null, id: null };

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

const num = (v, digits = 1) => (v === null || v === undefined ? '—' : Number(v).toFixed(digits));
const pct = (v) => `${(v * 100).toFixed(1)} %`;
const short = (t, n = 160) => (t === null || t === undefined ? '—' : t.length > n ? `${t.slice(0, n)}…` : t);

function table(head, rows, cls) {
  const tr = el('tr', {}, ...head.map((h) => el('th', { text: h, scope: 'col' })));
  return el('table', { class: `details ${cls}` }, el('thead', {}, tr), el('tbody', {}, ...rows));
}

function cells(values) {
  return values.map((v) => el('td', { text: v ?? '—' }));
}

function topTable(q) {
  const rows = q.top.map((t) => {
    const tr = el(
      'tr',
      { class: t.digest === tabs.digest ? 'selected' : '', 'data-digest': t.digest },
      ...cells([
        t.text === null ? '(other digests)' : short(t.text),
        t.schema,
        num(t.callsPerS, 3),
        t.meanMs === null ? '—' : `${num(t.meanMs, 2)} ms`,
        pct(t.share),
        num(t.examinedPerSent, 1),
      ]),
    );
    tr.addEventListener('click', () => {
      tabs.digest = t.digest;
      render(q);
    });
    return tr;
  });
  const head = ['Query', 'Schema', 'Calls/s', 'Mean latency', 'Share of time', 'Rows examined per sent'];
  return el(
    'div',
    {},
    el('h2', { text: `Top queries (last ${Math.round(q.windowS / 60)} min)` }),
    q.top.length === 0
      ? el('p', { class: 'muted', text: 'No top-query records yet (domain query.top).' })
      : table(head, rows, 'queries-top'),
  );
}

function digestDetail(q) {
  if (tabs.digest === null) return null;
  const samples = q.samples[tabs.digest] ?? [];
  const plan = q.plans[tabs.digest];
  const rows = samples.map((s) =>
    el(
      'tr',
      {},
      ...cells([
        new Date(s.time).toLocaleTimeString(),
        `${num(s.durationS, 3)} s`,
        s.user,
        num(s.rowsExamined, 0),
        num(s.rowsSent, 0),
        s.wait,
        short(s.text, 300),
      ]),
    ),
  );
  return el(
    'div',
    { id: 'queries-digest' },
    el('h2', { text: `Digest ${tabs.digest}` }),
    samples.length === 0
      ? el('p', { class: 'muted', text: 'No samples of this digest (domain query.sample).' })
      : table(
          ['Ended', 'Duration', 'User', 'Rows examined', 'Rows sent', 'Top wait', 'Statement'],
          rows,
          'queries-samples',
        ),
    el('h3', { text: 'Current plan' }),
    plan === undefined
      ? el('p', { class: 'muted', text: 'No plan seen for this digest (domain query.plan).' })
      : el('pre', { class: 'plan', id: 'queries-plan', text: prettyPlan(plan.plan) }),
  );
}

function prettyPlan(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function plansList(q) {
  const list = Object.values(q.plans);
  if (list.length === 0) return null;
  const rows = list.map((p) =>
    el(
      'tr',
      {},
      ...cells([new Date(p.time).toLocaleTimeString(), p.digest, p.hash.slice(0, 12), short(p.text)]),
    ),
  );
  return el(
    'div',
    {},
    el('h2', { text: 'Plans seen' }),
    table(['Seen', 'Digest', 'Plan hash', 'Statement'], rows, 'queries-plans'),
  );
}

function locksTable(q) {
  const rows = q.locks.map((l) =>
    el(
      'tr',
      {},
      ...cells([
        l.type,
        `${l.waitingId ?? '—'} (${l.waitingUser ?? '?'})`,
        short(l.waitingText),
        `${l.blockingId ?? '—'} (${l.blockingUser ?? '?'})${l.blockingIdle ? `, idle ${num(l.blockingIdleS, 0)} s` : ''}`,
        short(l.blockingText),
        l.table,
        l.index,
        `${num(l.waitS, 0)} s`,
      ]),
    ),
  );
  const head = [
    'Lock',
    'Waiting',
    'Waiting statement',
    'Blocked by',
    'Blocker statement',
    'Table',
    'Index',
    'Waiting for',
  ];
  return el(
    'div',
    {},
    el('h2', { text: 'Blocking now' }),
    q.locksAt === null
      ? el('p', { class: 'muted', text: 'No lock-wait reading yet (domain lock.wait).' })
      : q.locks.length === 0
        ? el('p', { class: 'muted', text: 'No connection is waiting for a lock.' })
        : table(head, rows, 'queries-locks'),
  );
}

function render(q) {
  const box = document.getElementById('queries');
  if (!box) return;
  box.replaceChildren(topTable(q), digestDetail(q), locksTable(q), plansList(q));
}

function tabBar() {
  const bar = el('nav', { class: 'tabs', id: 'monitor-tabs' });
  for (const [name, label] of [
    ['overview', 'Overview'],
    ['queries', 'Queries'],
  ]) {
    const b = el('button', { type: 'button', text: label, id: `tab-${name}` });
    b.setAttribute('aria-pressed', String(tabs.tab === name));
    b.addEventListener('click', () => {
      tabs.tab = name;
      void window.sondeQueries.show(tabs.id, tabs.getJson);
    });
    bar.append(b);
  }
  return bar;
}

function place() {
  const main = document.getElementById('main');
  const charts = document.getElementById('charts');
  if (!main || !charts) return;
  document.getElementById('monitor-tabs')?.remove();
  charts.before(tabBar());
  let box = document.getElementById('queries');
  if (!box) {
    box = el('section', { id: 'queries', class: 'queries' });
    main.append(box);
  }
  const queries = tabs.tab === 'queries';
  box.hidden = !queries;
  charts.hidden = queries;
  const details = document.getElementById('monitor-details');
  if (details) details.hidden = queries;
}

window.sondeQueries = {
  /** Draw the tab bar for monitor `id`, and the Queries tab when it is the open one. */
  async show(id, getJson) {
    if (tabs.id !== id) {
      tabs.id = id;
      tabs.digest = null;
      document.getElementById('queries')?.remove();
    }
    tabs.getJson = getJson;
    place();
    if (tabs.tab !== 'queries') return;
    render(await getJson(`/api/ui/queries?id=${encodeURIComponent(id)}`));
  },
};
