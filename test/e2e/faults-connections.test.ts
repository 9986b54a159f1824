/**
 * A flood of idle clients on the exporter: 520 real connections, each asks for the landing
 * page with keep-alive and then stays open, idle, past the listener's 512-connection cap.
 * Prometheus' next scrape, on a new connection, must still be answered within a few seconds:
 * idle kept-alive connections are reclaimed first when the cap is reached. Also the same
 * with 520 connections that never send a byte.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Flood-52-pass';
const CLIENTS = 520;
/** How long Prometheus may be refused: "a few seconds". */
const SCRAPE_WITHIN_MS = 5000;

let db: MariaDB;
let agent: Agent;
let exporterPort: number;
const sockets: Socket[] = [];

/** One connection that asks for `/` with keep-alive, reads the answer, then idles; resolves once answered. */
function idleClient(port: number, ask: boolean): Promise<Socket> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sockets.push(sock);
    sock.on('error', () => resolve(sock));
    sock.on('close', () => resolve(sock));
    if (!ask) {
      sock.on('connect', () => resolve(sock));
      return;
    }
    let got = '';
    sock.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (/\r\n\r\n[\s\S]*<\/html>/i.test(got)) resolve(sock);
    });
    sock.on('connect', () =>
      sock.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n'),
    );
  });
}

/** One scrape on a new connection, retried until `withinMs`; resolves with how long it took and mysql_up. */
async function scrapeWithin(
  withinMs: number,
): Promise<{ ms: number; up: number | undefined; tries: number }> {
  const started = Date.now();
  let tries = 0;
  for (;;) {
    tries++;
    try {
      const res = await fetch(`http://127.0.0.1:${exporterPort}/metrics`, {
        signal: AbortSignal.timeout(Math.max(500, withinMs - (Date.now() - started))),
      });
      const body = await res.text();
      const line = body.split('\n').find((l) => l.startsWith('mysql_up '));
      return { ms: Date.now() - started, up: line === undefined ? undefined : Number(line.slice(9)), tries };
    } catch {
      if (Date.now() - started > withinMs) return { ms: Date.now() - started, up: undefined, tries };
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function closeAll(): void {
  for (const s of sockets.splice(0)) s.destroy();
}

describe('faults: idle connections flood the exporter', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    exporterPort = await freePort();
    agent = await startAgent(
      `api:
  bind: {{API}}
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
    closeAll();
    await agent?.stop();
    await db?.stop();
  });

  it(`answers a scrape within ${SCRAPE_WITHIN_MS / 1000} s while ${CLIENTS} kept-alive clients idle`, async (t) => {
    try {
      await Promise.all(Array.from({ length: CLIENTS }, () => idleClient(exporterPort, true)));
      const open = sockets.filter((s) => !s.destroyed).length;
      const r = await scrapeWithin(SCRAPE_WITHIN_MS);
      t.diagnostic(
        `${open} idle clients open; scrape after ${r.ms} ms (${r.tries} tries), mysql_up ${String(r.up)}`,
      );
      assert.equal(r.up, 1, `no scrape answered within ${r.ms} ms`);
      assert.ok(r.ms < SCRAPE_WITHIN_MS, `scrape took ${r.ms} ms`);
    } finally {
      closeAll();
    }
  });

  it(`answers a scrape within ${SCRAPE_WITHIN_MS / 1000} s while ${CLIENTS} clients connected and sent nothing`, async (t) => {
    try {
      await Promise.all(Array.from({ length: CLIENTS }, () => idleClient(exporterPort, false)));
      // Past the grace a new connection gets to send its request.
      await new Promise((r) => setTimeout(r, 1500));
      const r = await scrapeWithin(SCRAPE_WITHIN_MS);
      t.diagnostic(`scrape after ${r.ms} ms (${r.tries} tries), mysql_up ${String(r.up)}`);
      assert.equal(r.up, 1, `no scrape answered within ${r.ms} ms`);
      assert.ok(r.ms < SCRAPE_WITHIN_MS, `scrape took ${r.ms} ms`);
    } finally {
      closeAll();
    }
  });
});
