// sonde's web page (docs/ui.md): the fleet table, a monitor's charts and details, and the
// stop/start/reload actions. Plain DOM, no framework; every value goes in as text
// (textContent), never as HTML. The API token, when the agent needs one, is asked once and
// kept in sessionStorage (this tab only), and sent as `Authorization: Bearer`.

const TOKEN_KEY = 'sonde.api-token';
const ROW_H = 34;
const uPlot = window.uPlot;

/**
 * The charts of a monitor page: title, series (name, label, colour), unit, and the y range:
 * `percent` 0–100, else from 0 (rates and counts are never negative).
 */
const CHARTS = [
  { id: 'qps', title: 'Queries per second', unit: '/s', series: [['qps', 'QPS', '#2563eb']] },
  {
    id: 'connections',
    title: 'Connections',
    unit: '',
    series: [
      ['connections', 'used', '#2563eb'],
      ['max_connections', 'max', '#dc2626'],
    ],
  },
  { id: 'repl_lag', title: 'Replication lag', unit: 's', series: [['repl_lag', 'lag', '#9333ea']] },
  {
    id: 'bp_hit',
    title: 'InnoDB buffer pool hit ratio',
    unit: '%',
    range: 'percent',
    series: [['bp_hit', 'hit', '#059669']],
  },
  { id: 'bp_dirty', title: 'InnoDB dirty pages', unit: ' pages', series: [['bp_dirty', 'dirty', '#d97706']] },
  {
    id: 'rows',
    title: 'Row operations',
    unit: '/s',
    series: [
      ['rows_read', 'read', '#2563eb'],
      ['rows_inserted', 'inserted', '#059669'],
      ['rows_updated', 'updated', '#d97706'],
      ['rows_deleted', 'deleted', '#dc2626'],
    ],
  },
  { id: 'slow_queries', title: 'Slow queries', unit: '/s', series: [['slow_queries', 'slow', '#dc2626']] },
  {
    id: 'tmp_disk_tables',
    title: 'Temporary tables on disk',
    unit: '/s',
    series: [['tmp_disk_tables', 'on disk', '#9333ea']],
  },
];

/** Fleet columns: key, title, the value shown, the value sorted on, optional class. */
const COLUMNS = [
  ['id', 'Monitor', (r) => r.id, (r) => r.id],
  ['dsn', 'Address', (r) => r.dsn, (r) => r.dsn, 'wide'],
  ['state', 'State', (r) => r.state, (r) => r.state],
  ['version', 'Server', (r) => serverText(r), (r) => serverText(r), 'wide'],
  ['plan', 'Plan', (r) => planText(r), (r) => planText(r), 'wide'],
  ['age', 'Last', (r) => age(r.lastCollectionAgeS), (r) => r.lastCollectionAgeS ?? Infinity, 'num'],
  ['errors', 'Errors', (r) => String(r.errors), (r) => r.errors, 'num'],
  ['lag', 'Lag', (r) => fmt(r.replLagS, 's'), (r) => r.replLagS ?? -1, 'num'],
  ['qps', 'QPS', (r) => fmt(r.qps, ''), (r) => r.qps ?? -1, 'num'],
  ['conns', 'Conns', (r) => connText(r), (r) => r.connections ?? -1, 'num'],
];

const view = {
  route: '',
  timer: 0,
  fleet: null,
  sort: 'problems',
  desc: false,
  filter: '',
  charts: new Map(),
};

// ---- small helpers -----------------------------------------------------------------------

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

function fmt(v, unit) {
  if (v === null || v === undefined) return '—';
  const abs = Math.abs(v);
  const text = abs >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(abs >= 10 ? 1 : 2);
  return text + unit;
}

function age(s) {
  if (s === null || s === undefined) return '—';
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}

function duration(s) {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}

function bytes(n) {
  return `${(n / 1048576).toFixed(1)} MiB`;
}

// The page's one time format: `YYYY-MM-DD HH:MM:SS` in the browser's time zone, 24-hour
// (the chart axes show its `HH:MM` or `HH:MM:SS` part); durations as `12s ago`.
const pad = (n) => String(n).padStart(2, '0');

function clock(ms, seconds = true) {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
}

function dateTime(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(ms)}`;
}

/** A status text with its RFC 3339 timestamps in the page's time format. */
function localTimes(text) {
  if (text === null || text === undefined) return text;
  return text.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g, (ts) => {
    const ms = Date.parse(ts);
    return Number.isNaN(ms) ? ts : dateTime(ms);
  });
}

const serverText = (r) => (r.flavor === null ? '—' : `${r.flavor} ${r.version ?? ''}`.trim());
const planText = (r) => (r.plan === null ? '—' : `${r.plan} (${r.levelState ?? '—'})`);
const connText = (r) =>
  r.connections === null
    ? '—'
    : `${fmt(r.connections, '')}${r.maxConnections === null ? '' : ` / ${fmt(r.maxConnections, '')}`}`;

function notice(text, isError = false) {
  const n = document.getElementById('notice');
  n.textContent = text;
  n.classList.toggle('error', isError);
}

// ---- the API: token, JSON, actions --------------------------------------------------------

function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Ask for the token; resolves once the user has given one. */
function askToken(wrong) {
  const dialog = document.getElementById('login');
  document.getElementById('login-error').textContent = wrong ? 'That token was refused.' : '';
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const token = document.getElementById('login-token').value.trim();
        if (token !== '') sessionStorage.setItem(TOKEN_KEY, token);
        resolve();
      },
      { once: true },
    );
    if (!dialog.open) dialog.showModal();
  });
}

/** Ask for the token first when the agent needs one and this tab has none. */
async function startSession() {
  const res = await fetch('/api/ui/session', { cache: 'no-store' });
  const session = res.ok ? await res.json() : { tokenRequired: false };
  if (session.tokenRequired && sessionStorage.getItem(TOKEN_KEY) === null) await askToken(false);
}

/** GET a JSON answer, asking for the token on 401; throws with the answer's text otherwise. */
async function getJson(path) {
  for (let tries = 0; ; tries++) {
    const res = await fetch(path, { headers: authHeaders(), cache: 'no-store' });
    if (res.status === 401 && tries < 5) {
      await askToken(sessionStorage.getItem(TOKEN_KEY) !== null);
      continue;
    }
    if (!res.ok) throw new Error(`${res.status} ${(await res.text()).trim()}`);
    return res.json();
  }
}

function confirmAction(text) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

/** A POST form to one of the API's state-changing paths, sent by fetch once confirmed. */
function actionForm(label, path, question, danger = false) {
  const button = el('button', { type: 'submit', text: label, class: danger ? 'danger' : '' });
  const form = el('form', { method: 'post', action: path, class: 'action' }, button);
  form.setAttribute('data-action', label.toLowerCase());
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void runAction(form, label, path, question);
  });
  return form;
}

async function runAction(form, label, path, question) {
  if (!(await confirmAction(question))) return;
  form.querySelector('button').disabled = true;
  try {
    const res = await fetch(path, { method: 'POST', headers: authHeaders() });
    if (res.status === 401) await askToken(true);
    else if (!res.ok) notice(`${label}: ${res.status} ${(await res.text()).trim()}`, true);
    else notice(`${label}: done`);
  } catch (err) {
    notice(`${label}: ${err.message}`, true);
  }
  await refresh();
}

function monitorActions(row, readOnly) {
  if (readOnly) return null;
  const q = `?id=${encodeURIComponent(row.id)}`;
  return row.state === 'stopped'
    ? actionForm('Start', `/monitors/start${q}`, `Start monitor ${row.id}?`)
    : actionForm('Stop', `/monitors/stop${q}`, `Stop monitor ${row.id}? It stays loaded.`, true);
}

// ---- the fleet ---------------------------------------------------------------------------

function agentPanel(a) {
  const item = (k, v) => el('div', { class: 'stat' }, el('dt', { text: k }), el('dd', { text: v }));
  const m = a.monitors;
  return el(
    'dl',
    { class: 'agent', id: 'agent' },
    item('Agent', `v${a.version}`),
    item('Uptime', duration(a.uptimeS)),
    item(
      'Monitors',
      `${m.running} running, ${m.starting} starting, ${m.failing} failing, ${m.stopped} stopped`,
    ),
    item('CPU', a.cpuPercent === null ? '—' : `${a.cpuPercent}%`),
    item('Memory', `${bytes(a.rssBytes)} RSS`),
    item('Collections', `${a.collectionsOnTime} on time, ${a.collectionsLate} late`),
  );
}

function rank(r) {
  if (r.state === 'failing') return 0;
  if (r.errors > 0) return 1;
  if (r.state === 'starting') return 2;
  if (r.state === 'stopped') return 3;
  return 4;
}

function sortedRows(rows) {
  const f = view.filter.toLowerCase();
  const shown =
    f === '' ? [...rows] : rows.filter((r) => COLUMNS.some((c) => String(c[2](r)).toLowerCase().includes(f)));
  const col = COLUMNS.find((c) => c[0] === view.sort);
  const key = col ? col[3] : rank;
  shown.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    const c = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return view.desc ? -c : c;
  });
  return shown;
}

function fleetRowEl(r, readOnly) {
  const tr = el('tr', { class: `state-${r.state}` });
  tr.setAttribute('data-id', r.id);
  for (const [key, , show, , cls] of COLUMNS) {
    const td = el('td', { class: `col-${key} ${cls ?? ''}` });
    if (key === 'id') td.append(el('a', { href: `#/m/${encodeURIComponent(r.id)}`, text: r.id }));
    else if (key === 'state') td.append(el('span', { class: `badge ${r.state}`, text: r.state }));
    else td.textContent = show(r);
    if (key === 'dsn' || key === 'state') td.title = key === 'state' ? stateTitle(r) : r.dsn;
    td.setAttribute('data-label', COLUMNS.find((c) => c[0] === key)?.[1] ?? '');
    tr.append(td);
  }
  tr.append(el('td', { class: 'col-actions' }, monitorActions(r, readOnly)));
  return tr;
}

/** The state's explanation: why it fails, else the run loop's text. */
function stateTitle(r) {
  return localTimes(r.state === 'failing' ? `failing: ${r.failingWhy}` : r.stateText);
}

/** A fleet row's height: a table row, or a card on narrow screens (app.css keeps them equal). */
const CARD_H = 168;
const narrow = window.matchMedia('(max-width: 700px)');
const rowHeight = () => (narrow.matches ? CARD_H : ROW_H);

/** Draw the rows in view only: thousands of monitors stay fast. */
function drawRows() {
  const box = document.getElementById('fleet-box');
  const body = document.getElementById('fleet-body');
  if (!box || !body || !view.fleet) return;
  const rows = sortedRows(view.fleet.monitors);
  const h = rowHeight();
  const first = Math.max(0, Math.floor(box.scrollTop / h) - 5);
  const count = Math.ceil(box.clientHeight / h) + 10;
  const top = el('tr', { class: 'spacer' });
  top.style.height = `${first * h}px`;
  const bottom = el('tr', { class: 'spacer' });
  bottom.style.height = `${Math.max(0, rows.length - first - count) * h}px`;
  const visible = rows.slice(first, first + count).map((r) => fleetRowEl(r, view.fleet.readOnly));
  body.replaceChildren(top, ...visible, bottom);
  document.getElementById('fleet-count').textContent =
    `${rows.length} of ${view.fleet.monitors.length} monitors`;
}

function fleetHead() {
  const tr = el('tr');
  for (const [key, title, , , cls] of COLUMNS) {
    const mark = view.sort === key ? (view.desc ? ' ▼' : ' ▲') : '';
    const b = el('button', { type: 'button', class: 'sort', text: title + mark });
    b.addEventListener('click', () => {
      view.desc = view.sort === key ? !view.desc : false;
      view.sort = key;
      renderFleetShell();
    });
    tr.append(el('th', { class: `col-${key} ${cls ?? ''}`, scope: 'col' }, b));
  }
  tr.append(el('th', { class: 'col-actions', scope: 'col', text: '' }));
  return el('thead', {}, tr);
}

function renderFleetShell() {
  const fleet = view.fleet;
  const filter = el('input', {
    type: 'search',
    id: 'filter',
    placeholder: 'Filter monitors',
    value: view.filter,
  });
  filter.addEventListener('input', () => {
    view.filter = filter.value;
    drawRows();
  });
  const problems = el('button', { type: 'button', text: 'Problems first', class: 'link' });
  problems.addEventListener('click', () => {
    view.sort = 'problems';
    view.desc = false;
    renderFleetShell();
  });
  const reload = fleet.readOnly
    ? null
    : actionForm('Reload', '/monitors/reload', 'Reload the monitors from their sources?');
  const table = el('table', { class: 'fleet', id: 'fleet' }, fleetHead(), el('tbody', { id: 'fleet-body' }));
  const box = el('div', { class: 'fleet-box', id: 'fleet-box' }, table);
  box.addEventListener('scroll', () => requestAnimationFrame(drawRows));
  const tools = el(
    'div',
    { class: 'tools' },
    filter,
    problems,
    el('span', { id: 'fleet-count', class: 'muted' }),
    reload,
  );
  document.getElementById('main').replaceChildren(agentPanel(fleet.agent), tools, box);
  drawRows();
}

async function showFleet() {
  const fleet = await getJson('/api/ui/fleet');
  const first = view.fleet === null || !document.getElementById('fleet-box');
  view.fleet = fleet;
  if (first) renderFleetShell();
  else {
    document.getElementById('agent').replaceWith(agentPanel(fleet.agent));
    drawRows();
  }
  return fleet.refreshS;
}

// ---- a monitor ---------------------------------------------------------------------------

/** The y range: 0–100 for a percent, else from 0 to a little above the largest value. */
function yRange(def) {
  if (def.range === 'percent') return () => [0, 100];
  return (u, min, max) => [0, max > 0 ? max * 1.1 : 1];
}

/** X tick labels in the page's time format; kept on the figure for readers and tests. */
function xTicks(fig) {
  return (u, ticks) => {
    const seconds = ticks.some((t) => t % 60 !== 0);
    const labels = ticks.map((t) => clock(t * 1000, seconds));
    fig.setAttribute('data-xticks', JSON.stringify(labels));
    return labels;
  };
}

function chartOptions(def, width, fig) {
  return {
    width,
    height: 170,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: yRange(def) } },
    axes: [{ values: xTicks(fig) }, { size: 56, values: (u, ticks) => ticks.map((t) => fmt(t, '')) }],
    series: [
      {},
      ...def.series.map(([, label, stroke]) => ({
        label,
        stroke,
        width: 1.5,
        spanGaps: true,
        points: { show: false },
      })),
    ],
  };
}

/** The newest non-missing value of a series (a slot may lack one series: no flicker to —). */
function latestOf(values) {
  for (let i = values.length - 1; i >= 0; i--)
    if (values[i] !== null && values[i] !== undefined) return values[i];
  return null;
}

/**
 * The chart's data, its last point (from uPlot's own data) and y range on the figure for
 * readers and tests, and under the title the latest values, or why there are none.
 */
function setChart(fig, u, data, def, empty) {
  u.setData(data);
  const n = u.data[0].length;
  const last = { t: n > 0 ? u.data[0][n - 1] * 1000 : null };
  def.series.forEach(([name], i) => (last[name] = n > 0 ? u.data[i + 1][n - 1] : null));
  fig.setAttribute('data-last', JSON.stringify(last));
  fig.setAttribute('data-points', String(n));
  fig.setAttribute('data-y', JSON.stringify([u.scales.y.min, u.scales.y.max]));
  const latest = def.series.map((_, i) => latestOf(u.data[i + 1]));
  const why = def.series.map(([name]) => empty[name]).find((w) => w !== undefined);
  const now = def.series.map(([, label], i) => `${label} ${fmt(latest[i], def.unit)}`).join(' · ');
  const text = latest.some((v) => v !== null) ? `now: ${now}` : (why ?? 'no data yet');
  fig.querySelector('.now').textContent = text;
  if (latest.some((v) => v !== null)) fig.removeAttribute('data-empty');
  else fig.setAttribute('data-empty', why ?? 'no data yet');
}

/** Charts follow their box's width. */
const resizer = new ResizeObserver((entries) => {
  for (const e of entries) {
    const c = [...view.charts.values()].find((x) => x.plot === e.target);
    const w = Math.floor(e.contentRect.width);
    if (c && w > 0 && Math.abs(c.u.width - w) > 1) c.u.setSize({ width: w, height: c.u.height });
  }
});

function clearCharts() {
  resizer.disconnect();
  view.charts.clear();
}

function drawCharts(box, series, empty) {
  const t = series.t.map((x) => x / 1000);
  for (const def of CHARTS) {
    const data = [t, ...def.series.map(([name]) => series.values[name])];
    const has = data.slice(1).some((a) => a.some((v) => v !== null));
    let c = view.charts.get(def.id);
    if (!c) {
      const fig = el(
        'figure',
        { class: 'chart', id: `chart-${def.id}` },
        el('figcaption', { text: def.title }),
        el('div', { class: 'now muted' }),
      );
      const plot = el('div', { class: 'plot' });
      fig.append(plot);
      box.append(fig);
      c = { fig, plot, u: new uPlot(chartOptions(def, Math.max(200, plot.clientWidth), fig), data, plot) };
      view.charts.set(def.id, c);
      resizer.observe(plot);
    }
    c.fig.classList.toggle('empty', !has);
    setChart(c.fig, c.u, data, def, empty);
  }
}

function table(head, rows, cls) {
  const tr = el('tr', {}, ...head.map((h) => el('th', { text: h, scope: 'col' })));
  const body = rows.map((r) => el('tr', {}, ...r.map((v) => el('td', { text: localTimes(v) ?? '—' }))));
  return el('table', { class: `details ${cls}` }, el('thead', {}, tr), el('tbody', {}, ...body));
}

function monitorHeader(m) {
  const r = m.row;
  const facts = el(
    'dl',
    { class: 'agent' },
    ...[
      ['State', stateTitle(r) || r.state],
      ['Address', r.dsn],
      ['Server', serverText(r)],
      ['Plan', planText(r)],
      ['Last collection', age(r.lastCollectionAgeS)],
      ['Errors', String(r.errors)],
    ].map(([k, v]) => el('div', { class: 'stat' }, el('dt', { text: k }), el('dd', { text: v }))),
  );
  const title = el(
    'h1',
    {},
    el('span', { text: r.id }),
    ' ',
    el('span', { class: `badge ${r.state}`, id: 'monitor-state', text: r.state }),
  );
  return el(
    'section',
    { class: 'monitor-head', id: 'monitor-head' },
    title,
    el('div', { class: 'tools' }, monitorActions(r, m.readOnly)),
    facts,
  );
}

function monitorDetails(m) {
  const ago = (at) => (at === null ? null : age(Math.max(0, Math.round((Date.now() - at) / 1000))));
  const domains = m.domains.map((d) => [
    d.domain,
    ago(d.at),
    d.ms === null ? null : `${d.ms.toFixed(1)} ms`,
    d.ok === null ? null : d.ok ? `ok, ${d.metrics} metrics` : 'failed',
    d.error,
  ]);
  const levels = (m.plan?.levels ?? []).map((l) => [l.name, l.freq, l.domains.join(', ')]);
  const sinks = m.sinks.map((s) => [s.name, s.last, s.error]);
  const errors = Object.entries(m.errors);
  return el(
    'section',
    { class: 'details-grid', id: 'monitor-details' },
    el(
      'div',
      { class: 'full' },
      el('h2', { text: 'Domains' }),
      table(['Domain', 'Last run', 'Duration', 'Result', 'Error'], domains, 'domains'),
    ),
    el(
      'div',
      {},
      el('h2', { text: `Plan ${m.plan?.name ?? '—'}` }),
      table(['Level', 'Every', 'Domains'], levels, 'levels'),
    ),
    el('div', {}, el('h2', { text: 'Sinks' }), table(['Sink', 'Last send', 'Error'], sinks, 'sinks')),
    errors.length === 0
      ? null
      : el('div', {}, el('h2', { text: 'Errors' }), table(['Key', 'Text'], errors, 'errors')),
  );
}

async function showMonitor(id) {
  const m = await getJson(`/api/ui/monitor?id=${encodeURIComponent(id)}`);
  let box = document.getElementById('charts');
  if (!box || box.getAttribute('data-id') !== id) {
    clearCharts();
    box = el('section', { class: 'charts', id: 'charts' });
    box.setAttribute('data-id', id);
    document
      .getElementById('main')
      .replaceChildren(el('div', { id: 'monitor-head' }), box, el('div', { id: 'monitor-details' }));
  }
  document.getElementById('monitor-head').replaceWith(monitorHeader(m));
  document.getElementById('monitor-details').replaceWith(monitorDetails(m));
  if (m.series === null)
    box.replaceChildren(
      el('p', { class: 'muted', text: 'Chart history is off for this monitor (ui-history: false).' }),
    );
  else drawCharts(box, m.series, m.empty ?? {});
  // The Queries tab (web/queries.js) adds its tab bar and content.
  await window.sondeQueries?.show(id, getJson);
  return m.refreshS;
}

// ---- routing and refresh -----------------------------------------------------------------

async function refresh() {
  clearTimeout(view.timer);
  const route = location.hash.replace(/^#/, '') || '/';
  if (route !== view.route) {
    view.route = route;
    view.fleet = null;
    clearCharts();
  }
  let next = 5;
  try {
    next = route.startsWith('/m/')
      ? await showMonitor(decodeURIComponent(route.slice(3)))
      : await showFleet();
    if (document.getElementById('notice').classList.contains('error')) notice('');
  } catch (err) {
    notice(err.message, true);
  }
  view.timer = setTimeout(() => void refresh(), next * 1000);
}

window.addEventListener('hashchange', () => void refresh());
startSession()
  .catch((err) => notice(err.message, true))
  .finally(() => void refresh());
