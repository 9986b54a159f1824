/**
 * The built agent against a real MariaDB with one monitor and two network sinks: `otlp`
 * points at a receiver that accepts connections and never answers, `chronosphere` at a
 * good one. The good sink gets every collection on time, the hung one holds at most one
 * socket, logs one line per backoff step naming itself, and /status/monitors shows its
 * error and how many collections it dropped.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';
import { startCaptureServer, type CaptureServer } from '../helpers/capture-http.js';

const PASSWORD = 'Pw-e2e-faults-SECRET';

const PLAN = `fast:
  freq: 1s
  collect:
    status.global:
      metrics: [threads_connected, com_select]
`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a hung sink next to a good one in the running agent', () => {
  let db: MariaDB;
  let agent: Agent;
  let good: CaptureServer;
  let hung: net.Server;
  const open = new Set<net.Socket>();
  let accepted = 0;

  before(async () => {
    hung = net.createServer((s) => {
      accepted++;
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
      s.resume();
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const hungPort = (hung.address() as net.AddressInfo).port;
    [db, good] = await Promise.all([startMariaDB(), startCaptureServer()]);
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    agent = await startAgent(
      `${agentConfigHead(PASSWORD)}monitors:
  - id: m1
    socket: ${db.socket}
    sinks:
      otlp:
        endpoint: http://u:otlp-s3cret@127.0.0.1:${hungPort}
        send-timeout: 500ms
        buffer-size: "2"
      chronosphere:
        url: ${good.base}/openmetrics/write
`,
      { files: { 'plan.yaml': PLAN } },
    );
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    for (const s of open) s.destroy();
    await Promise.all([
      db?.stop(),
      good?.close(),
      new Promise<void>((resolve) => (hung ? hung.close(() => resolve()) : resolve())),
    ]);
  });

  it('delivers every collection to the good sink while the other hangs, and shows the hung one in status', async () => {
    await agent.until('the good sink received a collection', async () => good.requests.length > 0, 30_000);
    const fdsOf = (): number => readdirSync(`/proc/${agent.proc.pid ?? 0}/fd`).length;
    const fds = fdsOf();
    const from = good.requests.length;
    const t0 = Date.now();
    let mostOpen = 0;
    while (Date.now() - t0 < 10_000) {
      mostOpen = Math.max(mostOpen, open.size);
      await sleep(100);
    }
    const seconds = (Date.now() - t0) / 1000;
    const got = good.requests.length - from;
    // One collection a second; a generous margin for a loaded machine.
    assert.ok(got >= seconds - 3, `${got} collections in ${seconds} s`);
    assert.ok(mostOpen <= 2, `${mostOpen} sockets open at the hung receiver`);
    assert.ok(accepted >= 3, `${accepted} attempts`);
    assert.ok(fdsOf() <= fds + 5, `descriptors of the agent: ${fds} → ${fdsOf()}`);

    const st = (await agent.monitorsStatus())['m1'] ?? {};
    assert.match(
      st['error:otlp-send'] ?? '',
      /^at \S+: otlp :(POST http:\/\/127\.0\.0\.1:\d+\/v1\/metrics: request aborted: )?send-timeout 500ms exceeded \(2 buffered; \d+ collections dropped since \S+\)$/,
    );
    assert.match(st['otlp'] ?? '', /; \d+ collections dropped since \S+$/);
    assert.match(st['chronosphere'] ?? '', /^last sent \d+ metrics at /);
    assert.equal(st['error:chronosphere-send'], undefined);

    const lines = agent
      .stderr()
      .split('\n')
      .filter((l) => l.includes('[sink-send-error'));
    assert.ok(lines.length >= 2, lines.join('\n'));
    for (const l of lines) assert.match(l, /\[m1\] ERROR: otlp :/);
    // Backoff: 0.5 s, 0.75 s, 1.1 s… between attempts of 0.5 s each: far fewer lines than
    // the two a second of a fixed 200 ms pace.
    const elapsed = (Date.now() - t0) / 1000 + 10;
    assert.ok(lines.length < elapsed, `${lines.length} lines in about ${elapsed} s`);
    assert.doesNotMatch(agent.stderr(), /otlp-s3cret/);
  });
});
