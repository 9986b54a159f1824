/**
 * CPU of one Datadog API send (compressed, as by default) by batch size: the sink's sizing,
 * JSON and gzip of each request, and the HTTP POST to a local receiver that answers 202 as the
 * intake does. With `--compare`, another build's sink in the same rounds, alternating. Prints
 * numbers; asserts nothing.
 *
 *   node dist/bench/datadog-send.js [--series 300,1100,7000,20000] [--rounds 3]
 *     [--compare /abs/other/dist/src/sinks/datadog.js]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MetricType, type MetricValue } from '../src/core/metrics.js';
import type { Sink } from '../src/core/sink.js';
import * as thisBuild from '../src/sinks/datadog.js';
import { metricsAt, sinkContext } from '../src/sinks/receivers.fixture.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const SIZES = arg('series', '300,1100,7000,20000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '3'));
const COMPARE = arg('compare', '');

type Create = typeof thisBuild.createDatadogSink;
const builds: [string, Create][] = [['this build', thisBuild.createDatadogSink]];
if (COMPARE !== '') {
  const other = (await import(COMPARE)) as { createDatadogSink: Create };
  builds.push([COMPARE, other.createDatadogSink]);
}

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(202, { 'Content-Type': 'application/json' }).end('{}'));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/series`;
const keys = { 'api-key-auth': 'bench-api-key', 'app-key-auth': 'bench-app-key' };

/** `n` gauges with two tags each, as a monitor's values become. */
function values(n: number): MetricValue[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `m${i}`,
    value: i / 7,
    type: MetricType.Gauge,
    group: { table: `db${i % 50}.t${i}`, engine: 'innodb' },
  }));
}

/** CPU ms per send of `n` values through `create`'s sink, over enough sends to measure. */
async function perSend(create: Create, n: number): Promise<number> {
  const sink: Sink = create(sinkContext('datadog', keys, { env: 'bench' }), { apiUrl: url });
  const m = metricsAt({ 'status.global': values(n) }, Date.UTC(2026, 11, 7), 50);
  await sink.send(m); // warm-up
  const sends = Math.max(3, Math.round(30_000 / n));
  const t0 = process.cpuUsage();
  for (let i = 0; i < sends; i++) await sink.send(m);
  const u = process.cpuUsage(t0);
  await sink.close?.();
  return (u.user + u.system) / 1000 / sends;
}

console.log(`datadog-send: CPU ms per API send (gzip), ${ROUNDS} rounds, median; node ${process.version}`);
for (const n of SIZES) {
  const runs = new Map<string, number[]>(builds.map(([name]) => [name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? builds : [...builds].reverse();
    for (const [name, create] of order) runs.get(name)?.push(await perSend(create, n));
  }
  for (const [name, ms] of runs) {
    const sorted = [...ms].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
    console.log(`  ${String(n).padStart(6)} series  ${median.toFixed(2).padStart(8)} ms  (${name})`);
  }
}
server.close();
