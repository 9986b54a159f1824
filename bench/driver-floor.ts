/**
 * The driver's floor for the agent's CPU per collection: a bare mysql2 process that does
 * nothing but what a collection cannot do without. It holds K connections, and each runs a
 * plan's statements one after the other every interval (the connections' phases spread
 * evenly over the interval, as the agent spreads its monitors), reading every row and
 * keeping none: no collectors, no engine, no sink, no HTTP API. Its CPU per collection is
 * what mysql2 and Node's sockets alone cost; `scale.js --driver-floor` runs it beside the
 * agent at each K and prints the agent's figure against it. In its batched form the
 * statements go as one multi-statement request per collection (one round trip), as the
 * agent sends a level's statements once it has seen them succeed.
 *
 * The child is this file run as
 * `driver-floor.js --child <socket> <user> <k> <interval ms> <one|batch> <sql>…`;
 * it prints `ready` once every connection is open, and the number of collections it made so
 * far each time a line arrives on its stdin.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createConnection, type Connection } from 'mysql2/promise';
import { cpuSeconds } from './proc-stats.js';

export interface DriverFloor {
  /** CPU of the driver process over the window, % of one core. */
  cpuPct: number;
  /** CPU ms per collection (one run of every statement on one connection). */
  msPerCollection: number;
  collections: number;
}

/** Collections made so far, asked of the child over its stdin. */
function made(child: ChildProcess, lines: AsyncIterator<string>): Promise<number> {
  child.stdin?.write('?\n');
  return lines.next().then((r) => Number(r.value));
}

/**
 * Run the driver floor with `k` connections for `seconds` against the server at `socket`
 * (user `user`, password `password`), each connection running `sqls` every `intervalMs`;
 * measured from `fromS` seconds to the end, as the agent's run is.
 */
export async function runDriverFloor(
  opts: { socket: string; user: string; password: string },
  k: number,
  sqls: readonly string[],
  intervalMs: number,
  seconds: number,
  fromS: number,
  form: 'one' | 'batch' = 'one',
): Promise<DriverFloor> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    [script, '--child', opts.socket, opts.user, String(k), String(intervalMs), form, ...sqls],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, DRIVER_FLOOR_PASSWORD: opts.password } },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  try {
    const ready = await lines.next();
    if (ready.value !== 'ready') throw new Error(`driver floor: ${String(ready.value)}`);
    await new Promise((r) => setTimeout(r, fromS * 1000));
    const pid = child.pid ?? 0;
    const cpu0 = cpuSeconds(pid);
    const n0 = await made(child, lines);
    await new Promise((r) => setTimeout(r, (seconds - fromS) * 1000));
    const cpu1 = cpuSeconds(pid);
    const n1 = await made(child, lines);
    const cpuMs = (cpu1 - cpu0) * 1000;
    return {
      cpuPct: (cpuMs / 1000 / (seconds - fromS)) * 100,
      msPerCollection: n1 > n0 ? cpuMs / (n1 - n0) : NaN,
      collections: n1 - n0,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

/** The child: K connections, each running the statements every interval, on its own phase. */
async function child(argv: readonly string[]): Promise<void> {
  const [socket = '', user = '', kText = '0', intervalText = '5000', form = 'one', ...sqls] = argv;
  const k = Number(kText);
  const interval = Number(intervalText);
  const password = process.env.DRIVER_FLOOR_PASSWORD ?? '';
  const batch = form === 'batch';
  const conns: Connection[] = [];
  for (let i = 0; i < k; i++)
    conns.push(await createConnection({ socketPath: socket, user, password, multipleStatements: batch }));
  let collections = 0;
  const text = sqls.join('\n;\n');
  const collect = async (conn: Connection): Promise<void> => {
    if (batch) await conn.query(text);
    else for (const sql of sqls) await conn.query(sql);
    collections++;
  };
  conns.forEach((conn, i) => {
    setTimeout(
      () => {
        const run = (): void => {
          collect(conn).catch((err: unknown) => {
            console.error(`driver floor: ${String(err)}`);
            process.exit(1);
          });
        };
        run();
        setInterval(run, interval);
      },
      Math.floor((i * interval) / Math.max(1, k)),
    );
  });
  createInterface({ input: process.stdin }).on('line', () => process.stdout.write(`${collections}\n`));
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write('ready\n');
}

const at = process.argv.indexOf('--child');
if (at >= 0) await child(process.argv.slice(at + 1));
