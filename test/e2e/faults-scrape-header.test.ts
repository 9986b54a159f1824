/**
 * A hostile (or mistaken) `X-Prometheus-Scrape-Timeout-Seconds` header: a value past what a
 * timer can hold (2^31 ms) must not turn into an immediate timeout, a failed scrape and a
 * `mysql_up 0`; it is clamped to the documented maximum. On the exporter's `/metrics` and on
 * the probe listener's `/probe`, against a real MariaDB and the built agent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Header-88-pass';
/** Seconds: 2^31 ms and a little more, the smallest value Node's timers cannot hold. */
const HOSTILE = ['2147484', '1e12', '9007199254740993'];

let db: MariaDB;
let agent: Agent;
let exporterPort: number;
let probePort: number;

function scrape(port: number, path: string, timeout: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { 'X-Prometheus-Scrape-Timeout-Seconds': timeout } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve(body));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end();
  });
}

function sample(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('faults: hostile scrape-timeout headers', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    [exporterPort, probePort] = [await freePort(), await freePort()];
    agent = await startAgent(
      `api:
  bind: {{API}}
probe:
  bind: 127.0.0.1:${probePort}
mysql:
  username: sonde
  password: ${PASSWORD}
monitors:
  - id: db
    hostname: 127.0.0.1:${db.port}
    exporter:
      mode: legacy
      flags:
        web.listen-address: 127.0.0.1:${exporterPort}
`,
    );
  });

  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  for (const [where, path] of [
    ['/metrics', '/metrics'],
    ['/probe', '/probe?target=db'],
  ] as const) {
    it(`scrapes normally on ${where} whatever the header says`, async () => {
      const port = where === '/metrics' ? exporterPort : probePort;
      for (const timeout of HOSTILE) {
        const body = await scrape(port, path, timeout);
        assert.equal(sample(body, 'mysql_up'), 1, `${where} with ${timeout}: ${body.slice(0, 300)}`);
        assert.equal(sample(body, 'mysql_exporter_last_scrape_error'), 0, `${where} with ${timeout}`);
      }
      assert.doesNotMatch(agent.stderr(), /TimeoutOverflowWarning/);
    });
  }
});
