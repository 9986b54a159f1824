/**
 * The web page in a real browser: sonde watching two throwaway MariaDB servers (and a third
 * monitor with a wrong password), Debian's chromium driven headless through puppeteer-core.
 * The page asks for the API token, lists every monitor with its state (the one that cannot
 * connect is failing: red, counted, first, and so in /status/monitors and /status, while
 * /readyz stays ready), draws a monitor's charts whose last point is the value the log sink
 * printed for that collection, says why each empty chart is empty, fits the axes to their
 * units, shows one time format and every sink's last send, clips no column at 1280 px,
 * shows every fleet column at 390 px, keeps the latest value under a chart when the newest
 * point lacks it, stops a monitor from the page, shows no action when the API is read-only,
 * and logs no console error. Its screenshots go to a temp dir, or to SONDE_SCREENSHOTS when
 * set (`npm run screenshots` sets docs/img to refresh the committed ones): a test run leaves
 * the work tree as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { ROOT, startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Pw-web-7f3k2-SECRET';
const TOKEN = 'ui-token-5d8e1c0a9b';
const CHROMIUM = '/usr/bin/chromium';
const MAX_CONNECTIONS: Record<string, number> = { alpha: 77, beta: 88 };

const PLAN = `fast:
  freq: 1s
  collect:
    status.global:
      metrics: [queries, threads_connected, innodb_buffer_pool_read_requests, innodb_buffer_pool_reads,
        innodb_buffer_pool_pages_dirty, innodb_rows_read, innodb_rows_inserted, innodb_rows_updated,
        innodb_rows_deleted, rows_read, handler_write, handler_update, handler_delete, slow_queries,
        created_tmp_disk_tables]
    var.global:
      metrics: [max_connections]
    size.binlog:
`;

/** Where the screenshots go: SONDE_SCREENSHOTS, else a temp dir removed at the end. */
const SHOTS = process.env.SONDE_SCREENSHOTS || mkdtempSync(join(tmpdir(), 'sonde-shots-'));
const DOCS_IMG = join(ROOT, 'docs/img');

/** Each committed image's modification time: a test run must not rewrite them. */
function docsImages(): Record<string, number> {
  return Object.fromEntries(readdirSync(DOCS_IMG).map((f) => [f, statSync(join(DOCS_IMG, f)).mtimeMs]));
}
const imagesBefore = docsImages();

let dbs: MariaDB[] = [];
let agent: Agent;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

/** The log sink's blocks of one monitor: collection time (epoch ms) → metric → value. */
function logBlocks(id: string): Map<number, Map<string, number>> {
  const out = new Map<number, Map<string, number>>();
  for (const block of agent.stdout().split('\n\n')) {
    if (!block.includes(`# monitor:  ${id}\n`)) continue;
    const ts = /^# ts:\s+(\S+)$/m.exec(block)?.[1];
    if (ts === undefined) continue;
    const values = new Map<string, number>();
    for (const m of block.matchAll(/^([a-z_.]+) = (-?\d+)/gm)) values.set(m[1] ?? '', Number(m[2]));
    out.set(Date.parse(ts), values);
  }
  return out;
}

/** Wait in the page until `fn` (run there) returns a truthy value. */
async function waitFor(what: string, fn: string, timeout = 20_000): Promise<void> {
  try {
    await page.waitForFunction(fn, { timeout, polling: 200 });
  } catch (err) {
    throw new Error(`timed out waiting for ${what}: ${(err as Error).message}`, { cause: err });
  }
}

/** Evaluate an expression in the page (written as text: the tests compile without DOM types). */
async function inPage<T>(expression: string): Promise<T> {
  return (await page.evaluate(expression)) as T;
}

/** Each fleet row's monitor id and state badge. */
function fleetStates(): Promise<Record<string, string>> {
  return inPage(`Object.fromEntries([...document.querySelectorAll('#fleet-body tr[data-id]')]
    .map((r) => [r.getAttribute('data-id'), r.querySelector('.badge')?.textContent]))`);
}

/** The page is no wider than the window (nothing to scroll sideways but the fleet table). */
function pageWidth(): Promise<number> {
  return inPage('document.documentElement.scrollWidth');
}

describe('the web page in chromium', { timeout: 120_000 }, () => {
  before(async () => {
    dbs = await Promise.all([startMariaDB(), startMariaDB()]);
    for (const [i, db] of dbs.entries()) {
      await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
      await db.query(`SET GLOBAL max_connections = ${Object.values(MAX_CONNECTIONS)[i]}`);
    }
    const [a, b] = dbs;
    agent = await startAgent(
      `api:
  bind: {{API}}
  token-file: token.txt
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [plan.yaml]
monitors:
  - id: alpha
    socket: ${a?.socket}
  - id: beta
    hostname: 127.0.0.1:${b?.port}
  - id: delta
    hostname: 127.0.0.1:${b?.port}
    password: not-the-password
`,
      {
        files: { 'plan.yaml': PLAN, 'token.txt': `${TOKEN}\n` },
        headers: { authorization: `Bearer ${TOKEN}` },
      },
    );
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    page = await browser.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(String(err)));
    await page.setViewport({ width: 1280, height: 800 });
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await Promise.all(dbs.map((db) => db.stop()));
  });

  it('asks for the token, then lists every monitor with its state', async () => {
    await page.goto(agent.base + '/');
    await page.waitForSelector('#login[open]');
    await page.type('#login-token', TOKEN);
    await page.locator('#login-ok').click();
    await waitFor(
      'two monitors running, one failing',
      `document.querySelectorAll('#fleet-body .badge.running').length === 2 &&
        document.querySelectorAll('#fleet-body .badge.failing').length === 1`,
    );
    assert.deepEqual(await fleetStates(), { alpha: 'running', beta: 'running', delta: 'failing' });
    assert.ok(!page.url().includes(TOKEN), 'the token is never in the URL');
    const agentText = await inPage<string>(`document.querySelector('#agent').textContent`);
    assert.match(agentText, /2 running, 0 starting, 1 failing, 0 stopped/);
    assert.match(agentText, /\d+ on time, \d+ late/);
  });

  it('shows a monitor that cannot connect as failing: red, counted, first, in the API too', async () => {
    const first = await inPage<string>(
      `document.querySelector('#fleet-body tr[data-id]').getAttribute('data-id')`,
    );
    assert.equal(first, 'delta', 'problems first');
    const colour = await inPage<string>(
      `getComputedStyle(document.querySelector('#fleet-body tr[data-id="delta"] .badge')).backgroundColor`,
    );
    assert.equal(colour, 'rgb(254, 226, 226)');
    const title = await inPage<string>(
      `document.querySelector('#fleet-body tr[data-id="delta"] .col-state').title`,
    );
    assert.match(title, /^failing: .*Access denied/);
    const status = await agent.monitorsStatus();
    assert.match(status.delta?.health ?? '', /^failing: .*Access denied/);
    assert.match(status.delta?.monitor ?? '', /^running since /, 'the monitor key keeps its contract');
    assert.equal(status.alpha?.health, 'ok');
    const server = await agent.json<Record<string, string>>('/status');
    assert.equal(server['monitors-health'], '2 ok, 1 failing (delta), 0 starting, 0 stopped');
    const ready = await agent.http('GET', '/readyz');
    assert.deepEqual(
      [ready.status, ready.body],
      [200, 'ready\n'],
      'one unreachable database keeps the agent in service',
    );
  });

  it("draws a monitor's charts whose last point is the value sonde collected", async () => {
    // A locator, not page.click(): it finds the row again when a live update re-renders it
    // between the lookup and the click.
    await page.locator('#fleet-body tr[data-id="alpha"] a').click();
    // Three 10-second slots, so the charts (and the screenshot) have lines.
    await waitFor(
      'three points in the connections chart',
      `Number(document.querySelector('#chart-connections')?.getAttribute('data-points')) >= 3 &&
        document.querySelector('#chart-connections canvas') !== null`,
      35_000,
    );
    const last = async (chart: string): Promise<Record<string, number | null>> =>
      JSON.parse(
        await inPage<string>(`document.querySelector('#chart-${chart}').getAttribute('data-last') ?? '{}'`),
      ) as Record<string, number | null>;
    const conns = await last('connections');
    assert.equal(conns.max_connections, MAX_CONNECTIONS.alpha);
    const t = conns.t ?? NaN;
    const blocks = await agent.until('the log block of that collection', async () => {
      const b = logBlocks('alpha');
      return b.has(t) ? b : undefined;
    });
    assert.equal(conns.connections, blocks.get(t)?.get('status.global.threads_connected'));
    // QPS at that point: the queries counter between the previous collection and this one.
    const qps = await last('qps');
    assert.equal(qps.t, t, 'both charts end at the same collection');
    const times = [...blocks.keys()].filter((x) => x < t).sort((x, y) => x - y);
    const prev = times.at(-1) ?? NaN;
    const dq =
      (blocks.get(t)?.get('status.global.queries') ?? NaN) -
      (blocks.get(prev)?.get('status.global.queries') ?? NaN);
    assert.ok(
      Math.abs((qps.qps ?? NaN) - (dq * 1000) / (t - prev)) < 1e-9,
      `qps ${qps.qps} from ${dq} queries`,
    );
    for (const id of ['qps', 'connections', 'bp_hit', 'bp_dirty', 'rows', 'slow_queries', 'tmp_disk_tables'])
      assert.ok(await page.$(`#chart-${id} canvas`), `chart ${id} drawn`);
    const domains = await inPage<string[]>(
      `[...document.querySelectorAll('table.domains tbody tr td:first-child')].map((td) => td.textContent)`,
    );
    assert.deepEqual(domains, ['size.binlog', 'status.global', 'var.global']);
    const binlogError = await inPage<string>(
      `[...document.querySelectorAll('table.domains tbody tr')].find((tr) => tr.firstChild.textContent === 'size.binlog').lastChild.textContent`,
    );
    assert.ok(binlogError.length > 10, `size.binlog fails on a server without a binary log: ${binlogError}`);
    // Every empty chart says why; the axes fit their units.
    const charts = JSON.parse(
      await inPage<string>(`JSON.stringify([...document.querySelectorAll('figure.chart')].map((f) => ({
        id: f.id, points: f.getAttribute('data-points'), empty: f.getAttribute('data-empty'),
        now: f.querySelector('.now').textContent, y: JSON.parse(f.getAttribute('data-y')),
        ticks: JSON.parse(f.getAttribute('data-xticks') ?? '[]') })))`),
    ) as {
      id: string;
      points: string;
      empty: string | null;
      now: string;
      y: [number, number];
      ticks: string[];
    }[];
    const byId = Object.fromEntries(charts.map((c) => [c.id, c]));
    assert.match(
      byId['chart-repl_lag']?.empty ?? '',
      /^not in the plan: add repl\.lag\.current to a level of plan plan\.yaml$/,
    );
    assert.equal(byId['chart-repl_lag']?.now, byId['chart-repl_lag']?.empty, 'the reason is shown');
    for (const c of charts) {
      if (c.now.startsWith('now: ')) continue;
      assert.ok(
        c.empty !== null && c.empty !== '' && c.empty !== 'no data yet',
        `${c.id} says why it is empty`,
      );
    }
    assert.deepEqual(byId['chart-bp_hit']?.y, [0, 100], 'a ratio runs 0-100 %');
    for (const id of ['qps', 'connections', 'rows', 'slow_queries', 'tmp_disk_tables', 'bp_dirty'])
      assert.equal(byId[`chart-${id}`]?.y[0], 0, `${id} starts at 0`);
    // One time format: 24-hour clock on the axes, `YYYY-MM-DD HH:MM:SS` in the texts.
    for (const t of byId['chart-qps']?.ticks ?? []) assert.match(t, /^\d\d:\d\d(:\d\d)?$/);
    assert.ok((byId['chart-qps']?.ticks.length ?? 0) > 0, 'axis ticks recorded');
    const text = await inPage<string>('document.body.innerText');
    assert.doesNotMatch(text, /\d{4}-\d\d-\d\dT\d\d|\d\s?(am|pm)\b/i, 'no second time format');
    assert.match(text, /running since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    // Every sink shows its last send.
    const sinks = JSON.parse(
      await inPage<string>(`JSON.stringify([...document.querySelectorAll('table.sinks tbody tr')]
        .map((tr) => [...tr.children].map((td) => td.textContent)))`),
    ) as string[][];
    assert.ok(sinks.length > 0);
    for (const [name, last] of sinks)
      assert.match(last ?? '', /^last sent \d+ metrics at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, `${name}`);
    // No clipped column at 1280 px: no details table is wider than its box.
    const clipped = await inPage<string[]>(`[...document.querySelectorAll('#monitor-details table')]
      .filter((t) => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1).map((t) => t.className)`);
    assert.deepEqual(clipped, []);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'ui-monitor.png'), fullPage: true });
  });

  it('stops a monitor from the page, after a confirmation, and its row changes', async () => {
    await page.locator('form[data-action="stop"] button').click();
    await page.waitForSelector('#confirm[open]');
    await page.locator('#confirm-ok').click();
    await waitFor('alpha stopped', `document.querySelector('#monitor-state')?.textContent === 'stopped'`);
    const status = await agent.monitorsStatus();
    assert.match(status.alpha?.monitor ?? '', /^stopped at /);
    await page.goto(agent.base + '/#/');
    await waitFor(
      'the fleet with alpha stopped',
      `document.querySelector('#fleet-body tr[data-id="alpha"] .badge')?.textContent === 'stopped'`,
    );
    assert.deepEqual(await fleetStates(), { alpha: 'stopped', beta: 'running', delta: 'failing' });
    assert.ok(
      await page.$('#fleet-body tr[data-id="alpha"] form[data-action="start"]'),
      'a start button instead',
    );
    await page.screenshot({ path: join(SHOTS, 'ui-fleet.png') });
    assert.ok((await pageWidth()) <= 1280);
  });

  it('works at 390 px wide', async () => {
    await page.setViewport({ width: 390, height: 844 });
    await page.goto(agent.base + '/#/');
    await waitFor('the fleet at 390 px', `document.querySelectorAll('#fleet-body tr[data-id]').length === 3`);
    assert.ok((await pageWidth()) <= 390, `page width ${await pageWidth()}`);
    // Usable: every column of every monitor is shown, labelled, and nothing scrolls sideways.
    const hidden = await inPage<string[]>(`[...document.querySelectorAll('#fleet-body tr[data-id] td')]
      .filter((td) => !td.classList.contains('col-actions') && (td.offsetParent === null || td.getBoundingClientRect().width < 20))
      .map((td) => td.className)`);
    assert.deepEqual(hidden, []);
    const cells = await inPage<number>(
      `document.querySelectorAll('#fleet-body tr[data-id="beta"] td').length`,
    );
    assert.equal(cells, 11);
    const fleetBox = await inPage<[number, number]>(
      `[document.querySelector('#fleet-box').scrollWidth, document.querySelector('#fleet-box').clientWidth]`,
    );
    assert.ok(fleetBox[0] <= fleetBox[1] + 1, `fleet box ${fleetBox[0]} wide in ${fleetBox[1]}`);
    const labels = await inPage<string[]>(`[...document.querySelectorAll('#fleet-body tr[data-id="beta"] td')]
      .filter((td) => !td.classList.contains('col-actions'))
      .map((td) => td.getAttribute('data-label') + '|' + getComputedStyle(td, '::before').content)`);
    assert.equal(labels[1]?.split('|')[0], 'Address');
    await page.screenshot({ path: join(SHOTS, 'ui-fleet-narrow.png') });
    for (const l of labels) assert.doesNotMatch(l, /^\||\|none$/, `a labelled cell: ${l}`);
    await page.goto(agent.base + '/#/m/beta');
    await waitFor('beta charts at 390 px', `document.querySelector('#chart-connections canvas') !== null`);
    assert.ok((await pageWidth()) <= 390, `page width ${await pageWidth()}`);
    await page.goto(agent.base + '/#/m/delta');
    await waitFor(
      'delta charts',
      `document.querySelector('#chart-qps')?.getAttribute('data-empty') !== null &&
      document.querySelector('#chart-qps')?.getAttribute('data-empty') !== undefined`,
    );
    const why = await inPage<string>(`document.querySelector('#chart-qps').getAttribute('data-empty')`);
    assert.match(why, /^no data: the monitor is failing: .*Access denied/);
    const box = await inPage<number>(
      `document.querySelector('#chart-connections').getBoundingClientRect().width`,
    );
    assert.ok(box > 200 && box <= 390, `chart width ${box}`);
  });

  it('keeps the latest value under a chart when the newest point lacks it (no flicker to —)', async () => {
    await page.setViewport({ width: 1280, height: 800 });
    await page.setRequestInterception(true);
    // The newest point of beta's answer loses its connections value, as a collection of a
    // level without status.global leaves it.
    const handler = (req: HTTPRequest): void => {
      if (!req.url().includes('/api/ui/monitor?id=beta')) {
        void req.continue();
        return;
      }
      void (async () => {
        const res = await fetch(req.url(), { headers: { authorization: `Bearer ${TOKEN}` } });
        const body = (await res.json()) as { series: { values: { connections: (number | null)[] } } };
        const c = body.series.values.connections;
        c[c.length - 1] = null;
        await req.respond({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
      })();
    };
    page.on('request', handler);
    try {
      await page.goto(agent.base + '/#/m/beta');
      await waitFor(
        'beta connections drawn',
        `Number(document.querySelector('#chart-connections')?.getAttribute('data-points')) >= 2`,
      );
      const last = JSON.parse(
        await inPage<string>(`document.querySelector('#chart-connections').getAttribute('data-last')`),
      ) as Record<string, number | null>;
      assert.equal(last.connections, null, 'the newest point lacks the value');
      const now = await inPage<string>(`document.querySelector('#chart-connections .now').textContent`);
      assert.match(now, /^now: used \d+ · max 88$/);
    } finally {
      page.off('request', handler);
      await page.setRequestInterception(false);
    }
  });

  it('shows no action when the API is read-only, and the API refuses the POST', async () => {
    const ro = await startAgent(
      `api:
  bind: {{API}}
  read-only: true
mysql:
  username: sonde
  password: ${PASSWORD}
monitors:
  - id: gamma
    hostname: 127.0.0.1:${dbs[1]?.port}
`,
    );
    try {
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(ro.base + '/#/');
      await waitFor('gamma running', `document.querySelector('#fleet-body .badge.running') !== null`);
      const forms = (): Promise<number> => inPage('document.querySelectorAll("form[data-action]").length');
      assert.equal(await forms(), 0, 'no stop, start or reload form in the fleet view');
      await page.goto(ro.base + '/#/m/gamma');
      await waitFor(
        'the gamma monitor view',
        `document.querySelector('#monitor-state')?.textContent === 'running'`,
      );
      assert.equal(await forms(), 0, 'no action form in the monitor view');
      const res = await fetch(`${ro.base}/monitors/stop?id=gamma`, { method: 'POST' });
      assert.equal(res.status, 403);
      assert.equal(await res.text(), 'read-only API: state changes are turned off (api.read-only)\n');
      assert.match((await ro.monitorsStatus()).gamma?.monitor ?? '', /^running since /);
    } finally {
      await page.goto('about:blank'); // no poll reaches the agent while it shuts down
      await ro.stop();
    }
  });

  it('logged no console error', () => {
    assert.deepEqual(consoleErrors, []);
  });

  it('wrote its screenshots outside the work tree, unless asked to refresh docs/img', () => {
    const shots = readdirSync(SHOTS);
    assert.ok(shots.includes('ui-monitor.png') && shots.includes('ui-fleet.png'), shots.join());
    if (process.env.SONDE_SCREENSHOTS) return;
    assert.ok(relative(ROOT, SHOTS).startsWith('..'), `screenshots in ${SHOTS}`);
    assert.deepEqual(docsImages(), imagesBefore, 'docs/img was rewritten');
    rmSync(SHOTS, { recursive: true, force: true });
  });
});
