/**
 * Replication-lag accuracy: sonde's repl.lag (heartbeat writer + reader) against
 * pt-heartbeat, on one throwaway MariaDB primary/replica pair, in the same run.
 *
 *   node dist/bench/lag.js [--freq 1s] [--lags 1,2,5,10] [--reps 3] [--latency 50]
 *
 * Setup: sonde's heartbeat writer updates blip.heartbeat on the primary every `freq`;
 * a repl.lag collector (writer blip, network-latency `latency` ms) reads it on the
 * replica. `pt-heartbeat --update` writes percona.heartbeat on the primary every `freq`
 * too, and `pt-heartbeat --monitor` reads it on the replica every 0.1 s (its latest line
 * goes to a file, which the bench reads).
 *
 * Each injection stops the replica's SQL thread for D seconds (a known lag: at the
 * moment of reading, the replica has applied nothing for exactly D), reads both tools at
 * the same instant, restarts the SQL thread and waits until both are back near 0. The
 * start of each injection is placed at a random phase of the heartbeat period so the
 * errors cover the whole period. error = reported − injected (ms).
 *
 * percona-toolkit comes from Debian (`apt-get install percona-toolkit`); the bench
 * installs it when missing and runs sonde alone, saying why, when it cannot.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReplLagCollector } from '../src/collectors/repl.lag/index.js';
import { ConnectionSpec } from '../src/core/db.js';
import { NO_EVENTS } from '../src/core/events.js';
import type { Plan } from '../src/core/plan.js';
import { createDb, type PooledDb } from '../src/db/pool.js';
import { HEARTBEAT_TABLE_DDL } from '../src/heartbeat/table.js';
import { runHeartbeatWriter } from '../src/heartbeat/writer.js';
import { parseDuration } from '../src/util/duration.js';
import { startReplicationPair, type ReplicationPair } from '../test/helpers/replication.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const FREQ = arg('freq', '1s');
const FREQ_MS = parseDuration(FREQ);
const LAGS_S = arg('lags', '1,2,5,10')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const REPS = Math.max(1, Number(arg('reps', '3')) || 3);
const LATENCY_MS = Number(arg('latency', '50'));

const USER = 'sonde_bench';
const PASSWORD = 'bench-pw';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Find pt-heartbeat, installing percona-toolkit from Debian when missing. */
function ensurePtHeartbeat(): { ok: true } | { ok: false; reason: string } {
  const has = () => spawnSync('sh', ['-c', 'command -v pt-heartbeat'], { encoding: 'utf8' }).status === 0;
  if (!has()) {
    if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
      return {
        ok: false,
        reason: 'pt-heartbeat is not installed and the bench is not root (apt-get install percona-toolkit)',
      };
    }
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'percona-toolkit'], {
        encoding: 'utf8',
        env,
        timeout: 600_000,
      });
    console.log('installing percona-toolkit (apt-get) ...');
    let res = install();
    if (res.status !== 0) {
      spawnSync('apt-get', ['update'], { encoding: 'utf8', env, timeout: 600_000 });
      res = install();
    }
    if (res.status !== 0 || !has()) {
      const tail = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ');
      return { ok: false, reason: `apt-get install percona-toolkit failed: ${tail}` };
    }
  }
  // pt-heartbeat talks to MySQL through Perl DBI + DBD::mysql (a package dependency).
  if (spawnSync('perl', ['-MDBD::mysql', '-e', '1']).status !== 0) {
    return { ok: false, reason: 'Perl DBD::mysql is missing (apt-get install libdbd-mysql-perl)' };
  }
  return { ok: true };
}

/** pt-heartbeat --update on the primary and --monitor on the replica. */
class PtHeartbeat {
  readonly #dir = mkdtempSync(join(tmpdir(), 'sonde-bench-pt-'));
  readonly #file = join(this.#dir, 'monitor.txt');
  readonly #children: ChildProcess[] = [];
  #last: number | undefined;

  /** Start --update on the primary, wait until its table has replicated, then start --monitor. */
  static async start(pair: ReplicationPair): Promise<PtHeartbeat> {
    const pt = new PtHeartbeat();
    const interval = String(FREQ_MS / 1000);
    const common = ['-D', 'percona', '--utc'];
    pt.#start([
      '--update',
      '--create-table',
      '--interval',
      interval,
      ...common,
      `S=${pair.primary.socket},u=root`,
    ]);
    const deadline = Date.now() + 20_000;
    while ((await pair.replica.query("SHOW TABLES FROM percona LIKE 'heartbeat'")).length === 0) {
      if (Date.now() > deadline) throw new Error('pt-heartbeat --update did not create percona.heartbeat');
      await sleep(100);
    }
    // --master-server-id: read the primary's row (else it asks SHOW SLAVE STATUS for it).
    pt.#start([
      '--monitor',
      '--interval',
      '0.1',
      '--master-server-id',
      '1',
      '--file',
      pt.#file,
      ...common,
      `S=${pair.replica.socket},u=root`,
    ]);
    return pt;
  }

  #start(args: string[]): void {
    const child = spawn('pt-heartbeat', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (b: Buffer) => process.stderr.write(`pt-heartbeat: ${b.toString()}`));
    this.#children.push(child);
  }

  /**
   * Latest --monitor lag in ms. The file holds `1.50s [ 0.20s, 0.04s, 0.01s ]` (current, then
   * 1/5/15-minute averages); it is rewritten every 0.1 s, so a read may find it empty: keep the
   * previous value then.
   */
  lagMs(): number | undefined {
    try {
      const m = /^\s*(\d+(?:\.\d+)?)s/.exec(readFileSync(this.#file, 'utf8'));
      if (m !== null) this.#last = Math.round(Number(m[1]) * 1000);
    } catch {
      // not written yet
    }
    return this.#last;
  }

  stop(): void {
    for (const c of this.#children) c.kill('SIGTERM');
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

interface Sample {
  injectedMs: number;
  sonde: number | undefined;
  pt: number | undefined;
  /** sonde: ms from START SLAVE SQL_THREAD until repl.lag.current < 100 again */
  recoveryMs: number | undefined;
}

const fmt = (v: number | undefined, w = 8): string =>
  (v === undefined ? '-' : String(Math.round(v))).padStart(w);
const err = (v: number | undefined, injected: number): number | undefined =>
  v === undefined ? undefined : v - injected;

function stats(xs: number[]): { mean: number; meanAbs: number; maxAbs: number } {
  if (xs.length === 0) return { mean: NaN, meanAbs: NaN, maxAbs: NaN };
  const sum = xs.reduce((a, b) => a + b, 0);
  const abs = xs.map(Math.abs);
  return {
    mean: sum / xs.length,
    meanAbs: abs.reduce((a, b) => a + b, 0) / xs.length,
    maxAbs: Math.max(...abs),
  };
}

async function main(): Promise<void> {
  const pt = ensurePtHeartbeat();
  if (!pt.ok) console.log(`pt-heartbeat: not run: ${pt.reason}`);

  console.log(`starting a MariaDB primary/replica pair ...`);
  const pair = await startReplicationPair();
  let primaryDb: PooledDb | undefined;
  let replicaDb: PooledDb | undefined;
  let ptHb: PtHeartbeat | undefined;
  let collector: ReplLagCollector | undefined;
  const writerStop = new AbortController();
  let writer: Promise<void> | undefined;
  try {
    const p = pair.primary;
    await p.query('CREATE DATABASE blip');
    await p.query('CREATE DATABASE percona');
    await p.query(HEARTBEAT_TABLE_DDL.replace('heartbeat (', 'blip.heartbeat ('));
    await p.createUser(USER, PASSWORD, ['SELECT, INSERT, UPDATE, DELETE ON blip.heartbeat']);
    await pair.waitCaughtUp();
    const spec = (port: number) =>
      new ConnectionSpec({
        username: USER,
        password: PASSWORD,
        host: '127.0.0.1',
        port,
        connectTimeoutMs: 5000,
        redactedDsn: `${USER}:...@tcp(127.0.0.1:${port})/`,
      });
    primaryDb = createDb(spec(p.port));
    replicaDb = createDb(spec(pair.replica.port));

    writer = runHeartbeatWriter({
      monitorId: 'db1',
      db: primaryDb,
      status: { set: () => undefined, delete: () => undefined },
      events: NO_EVENTS,
      freq: FREQ,
      signal: writerStop.signal,
    });
    if (pt.ok) ptHb = await PtHeartbeat.start(pair);
    collector = new ReplLagCollector({ monitorId: 'db2', db: replicaDb });
    const plan: Plan = {
      name: 'bench',
      source: 'bench',
      levels: {
        l: {
          name: 'l',
          freq: '1s',
          freqMs: 1000,
          collect: {
            'repl.lag': {
              metrics: [],
              options: { writer: 'blip', 'source-id': 'db1', 'network-latency': String(LATENCY_MS) },
              errors: {},
            },
          },
        },
      },
    };
    await collector.prepare(plan, new AbortController().signal);
    const c = collector;
    const sondeLag = async (): Promise<number | undefined> => {
      const res = await c.collect('l', new AbortController().signal);
      return res.values.find((v) => v.name === 'current')?.value;
    };

    console.log(
      `heartbeat freq ${FREQ} (sonde writer and pt-heartbeat --update), sonde network-latency ${LATENCY_MS} ms, ` +
        `pt-heartbeat --monitor --interval 0.1; lags ${LAGS_S.join(', ')} s × ${REPS}`,
    );
    await sleep(3 * FREQ_MS + 3000); // both writers running, sonde's reader past its first "no heartbeat" retry

    // Steady state: no injected lag.
    const steadyS: number[] = [];
    const steadyP: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = await sondeLag();
      const q = ptHb?.lagMs();
      if (s !== undefined) steadyS.push(s);
      if (q !== undefined) steadyP.push(q);
      await sleep(FREQ_MS / 4 + 37);
    }

    const samples: Sample[] = [];
    for (const lagS of LAGS_S) {
      for (let rep = 0; rep < REPS; rep++) {
        await sleep(Math.random() * FREQ_MS); // random phase against the heartbeat period
        const injectedMs = lagS * 1000;
        const t0 = Date.now();
        await pair.stopSqlThread();
        await sleep(Math.max(0, t0 + injectedMs - Date.now()));
        const [sonde, ptv] = [await sondeLag(), ptHb?.lagMs()];
        const injected = Date.now() - t0;
        const tStart = Date.now();
        await pair.startSqlThread();
        await pair.waitCaughtUp();
        let recoveryMs: number | undefined;
        while (Date.now() - tStart < 15_000) {
          const s = await sondeLag();
          if (recoveryMs === undefined && s !== undefined && s < 100) recoveryMs = Date.now() - tStart;
          const q = ptHb?.lagMs();
          if (recoveryMs !== undefined && (q === undefined || q < 200)) break;
          await sleep(25);
        }
        samples.push({ injectedMs: injected, sonde, pt: ptv, recoveryMs });
        console.log(
          `  injected ${fmt(injected, 6)} ms: sonde ${fmt(sonde, 6)} (err ${fmt(err(sonde, injected), 5)})` +
            `  pt-heartbeat ${fmt(ptv, 6)} (err ${fmt(err(ptv, injected), 5)})  sonde back < 100 ms after ${fmt(recoveryMs, 5)} ms`,
        );
      }
    }

    const s1 = stats(steadyS);
    const p1 = stats(steadyP);
    console.log('');
    console.log('steady state (no injected lag), 20 reads:');
    console.log(`  sonde        mean ${s1.mean.toFixed(1)} ms, max ${s1.maxAbs.toFixed(0)} ms`);
    console.log(
      ptHb
        ? `  pt-heartbeat mean ${p1.mean.toFixed(1)} ms, max ${p1.maxAbs.toFixed(0)} ms`
        : '  pt-heartbeat not run',
    );
    console.log('');
    console.log('error = reported - injected, ms (mean / mean |err| / max |err|):');
    console.log('  injected |              sonde repl.lag |                pt-heartbeat | sonde recovery');
    for (const lagS of LAGS_S) {
      const group = samples.filter((s) => Math.round(s.injectedMs / 1000) === lagS);
      const se = stats(group.flatMap((s) => (s.sonde === undefined ? [] : [s.sonde - s.injectedMs])));
      const pe = stats(group.flatMap((s) => (s.pt === undefined ? [] : [s.pt - s.injectedMs])));
      const rec = stats(group.flatMap((s) => (s.recoveryMs === undefined ? [] : [s.recoveryMs])));
      const cell = (x: ReturnType<typeof stats>) =>
        Number.isNaN(x.mean) ? '-'.padStart(27) : `${fmt(x.mean)} / ${fmt(x.meanAbs)} / ${fmt(x.maxAbs)}`;
      console.log(
        `  ${String(lagS * 1000).padStart(6)} ms | ${cell(se)} | ${cell(pe)} | ${fmt(rec.mean, 6)} ms`,
      );
    }
    const all = (k: 'sonde' | 'pt') =>
      stats(samples.flatMap((s) => (s[k] === undefined ? [] : [s[k] - s.injectedMs])));
    const sa = all('sonde');
    const pa = all('pt');
    console.log(
      `  all       | ${fmt(sa.mean)} / ${fmt(sa.meanAbs)} / ${fmt(sa.maxAbs)} | ${ptHb ? `${fmt(pa.mean)} / ${fmt(pa.meanAbs)} / ${fmt(pa.maxAbs)}` : '-'.padStart(27)} |`,
    );
  } finally {
    await collector?.close();
    writerStop.abort();
    await writer;
    ptHb?.stop();
    await primaryDb?.close();
    await replicaDb?.close();
    await pair.stop();
  }
}

if (!existsSync('/usr/sbin/mariadbd')) {
  console.log('lag bench: /usr/sbin/mariadbd is missing (apt-get install mariadb-server)');
  process.exitCode = 1;
} else {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
