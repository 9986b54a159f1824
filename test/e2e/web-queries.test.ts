/**
 * The Queries tab in a real browser, over the whole agent: sonde watching a throwaway
 * MariaDB with performance_schema on, a plan collecting query.top, query.sample and
 * lock.wait every second into the log sink. A statement run 1,000 times with a sentinel
 * literal, a slow statement and a row-lock chain with an idle blocker show up on the tab
 * (top queries, the digest's samples, the blocking chain), and the sentinel is in no
 * output: not in the log sink's records, the API's JSON, the page, nor the agent's logs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import type { UiQueries } from '../../src/core/ui.js';
import { startHttpReceiver, type HttpReceiver } from '../../src/sinks/receivers.fixture.js';

const PASSWORD = 'Pw-queries-4k2-SECRET';
const SENTINEL = 'SENTINEL_p4g3_9zq';
const CHROMIUM = '/usr/bin/chromium';

const PLAN = `qa:
  freq: 1s
  collect:
    query.top: {}
    query.sample:
      options:
        threshold: 300ms
    lock.wait: {}
`;

let db: MariaDB;
let agent: Agent;
let otlp: HttpReceiver;
let browser: Browser;
let page: Page;
const conns: Connection[] = [];
const consoleErrors: string[] = [];

async function inPage<T>(expression: string): Promise<T> {
  return (await page.evaluate(expression)) as T;
}

describe('the Queries tab in chromium', { timeout: 120_000 }, () => {
  before(async () => {
    db = await startMariaDB({
      args: [
        '--performance-schema=ON',
        '--performance-schema-consumer-events-statements-current=ON',
        '--performance-schema-consumer-events-statements-history-long=ON',
      ],
    });
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*', 'SELECT ON performance_schema.*']);
    await db.query('CREATE DATABASE app');
    await db.query('CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB');
    await db.query("INSERT INTO app.t VALUES (1, 'a'), (2, 'b')");
    otlp = await startHttpReceiver();
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [plan.yaml]
sinks:
  log: {}
  otlp:
    endpoint: ${otlp.url}
    protocol: http/json
monitors:
  - id: alpha
    socket: ${db.socket}
`,
      { files: { 'plan.yaml': PLAN } },
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
    await page.setViewport({ width: 1280, height: 900 });
  });

  after(async () => {
    for (const c of conns) c.destroy();
    await browser?.close();
    await agent?.stop();
    await otlp?.close();
    await db?.stop();
  });

  it('shows top queries, a digest’s samples and the blocking chain, and no literal anywhere', async () => {
    const app = await createConnection({ host: db.host, port: db.port, user: 'root', database: 'app' });
    const idle = await createConnection({ host: db.host, port: db.port, user: 'root', database: 'app' });
    const waiter = await createConnection({ host: db.host, port: db.port, user: 'root', database: 'app' });
    conns.push(app, idle, waiter);
    // Let query.top take its first (remembering) read before the workload.
    await agent.until(
      'query.top ran',
      async () => (await agent.monitorsStatus())['alpha']?.['domain:query.top'],
    );
    for (let i = 0; i < 1000; i++) await app.query(`SELECT v FROM t WHERE v = '${SENTINEL}' AND id = ${i}`);
    await app.query(`SELECT SLEEP(0.5), '${SENTINEL}' AS s`);
    await idle.query('BEGIN');
    await idle.query(`UPDATE t SET v = '${SENTINEL}-held' WHERE id = 1`);
    const blocked = waiter.query(`UPDATE t SET v = '${SENTINEL}-wait' WHERE id = 1`).catch(() => undefined);

    const q = await agent.until(
      'the Queries JSON has the statement, its sample and the lock',
      async () => {
        const r = await agent.json<UiQueries>('/api/ui/queries?id=alpha');
        const top = r.top.find((t) => t.text === 'SELECT `v` FROM `t` WHERE `v` = ? AND ID = ?');
        // The slow statement's samples, and its digest among the top queries the page lists
        // (query.sample may record it a collection before query.top counts it).
        const sampled = Object.entries(r.samples).some(
          ([digest, s]) =>
            s.some((x) => x.text?.startsWith('SELECT SLEEP')) && r.top.some((t) => t.digest === digest),
        );
        return top !== undefined && top.calls === 1000 && sampled && r.locks.length === 1 ? r : undefined;
      },
      30_000,
    );
    assert.equal(q.locks[0]?.blockingIdle, true);

    await page.goto(`${agent.base}/#/m/alpha`);
    await page.waitForSelector('#tab-queries');
    // A locator, not page.click(): it finds the element again when a live update re-renders
    // it between the lookup and the click ("Node is detached from document").
    await page.locator('#tab-queries').click();
    await page.waitForSelector('table.queries-top tbody tr');
    const texts = await inPage<string[]>(
      `[...document.querySelectorAll('table.queries-top tbody tr td:first-child')].map((td) => td.textContent)`,
    );
    assert.ok(texts.includes('SELECT `v` FROM `t` WHERE `v` = ? AND ID = ?'), texts.join('\n'));
    assert.equal(await inPage<boolean>(`document.getElementById('charts').hidden`), true);
    const lockRow = await inPage<string>(
      `document.querySelector('table.queries-locks tbody tr')?.textContent ?? ''`,
    );
    assert.match(lockRow, /row.*UPDATE t SET v = \? WHERE id = \?.*idle \d+ s.*PRIMARY/);
    // Open the sampled digest: its samples show.
    const sampled = Object.entries(q.samples).find(([, s]) =>
      s.some((x) => x.text?.startsWith('SELECT SLEEP')),
    );
    const sampledRow = `table.queries-top tbody tr[data-digest="${sampled?.[0] ?? ''}"]`;
    await page.waitForSelector(sampledRow);
    await page.locator(sampledRow).click();
    await page.waitForSelector('table.queries-samples tbody tr');
    const sampleText = await inPage<string>(`document.querySelector('table.queries-samples').textContent`);
    assert.match(sampleText, /SELECT SLEEP\(\?\), \? AS s/);

    await idle.query('ROLLBACK');
    await blocked;
    // The OTLP receiver got the records as OTLP logs, under the receiver's event names.
    const logs = otlp.requests.filter((r) => r.url === '/v1/logs').map((r) => r.body.toString('utf8'));
    const events = new Set(logs.flatMap((b) => [...b.matchAll(/"eventName":"([^"]+)"/g)].map((m) => m[1])));
    assert.ok(events.has('db.server.top_query') && events.has('db.server.query_sample'), [...events].join());
    assert.ok(events.has('sonde.lock_wait'), [...events].join());
    const html = await page.content();
    const api = JSON.stringify(q);
    for (const [where, text] of [
      ['page', html],
      ['API', api],
      ['stdout (log sink records)', agent.stdout()],
      ['stderr (logs)', agent.stderr()],
      ['OTLP requests', otlp.requests.map((r) => r.body.toString('utf8')).join('\n')],
    ] as const)
      assert.ok(!text.includes(SENTINEL), `${where} holds the sentinel`);
    assert.match(agent.stdout(), /# record \S+ alpha query\.top db\.server\.top_query info /);
    assert.deepEqual(consoleErrors, []);
  });
});
