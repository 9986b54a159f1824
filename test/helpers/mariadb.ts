/**
 * A throwaway MariaDB server for integration tests.
 *
 * Each call to startMariaDB() initialises a fresh datadir under os.tmpdir(), starts
 * /usr/sbin/mariadbd on a free 127.0.0.1 port plus a unix socket in the same temp dir, and
 * waits until it accepts connections. Root has no password and is reached over the socket.
 *
 * Cleanup is belt and braces: stop() removes everything; a process 'exit' hook SIGKILLs any
 * server still running; and where util-linux `setpriv` exists the server is started with a
 * parent-death signal, so even a test process killed by a signal takes its servers with it.
 *
 * Typical use, one server per test file:
 *
 * ```ts
 * let db: MariaDB;
 * before(async () => { db = await startMariaDB(); });
 * after(async () => { await db.stop(); });
 * ```
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, type Pool } from 'mysql2/promise';
import { ConnectionSpec } from '../../src/core/db.js';
import { createDb, type PooledDb } from '../../src/db/pool.js';

const MARIADBD = '/usr/sbin/mariadbd';
const INSTALL_DB_CANDIDATES = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'];
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;

/** A running throwaway server. All methods are safe to call in any order. */
export interface MariaDB {
  port: number;
  /** Absolute path of the unix socket. */
  socket: string;
  /** PID of the current mariadbd process (changes after restart()). */
  pid: number;
  datadir: string;
  host: '127.0.0.1';
  /** Path of the server's error log (handy when a test fails). */
  errorLog: string;
  /**
   * Run one statement as root over the socket. Returns the rows (mysql2's default typing)
   * or [] for statements without a result set. `?` placeholders are filled client-side.
   */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** CREATE USER 'user'@'%' IDENTIFIED BY password, then GRANT each entry, e.g. 'PROCESS ON *.*'. */
  createUser(user: string, password: string, grants?: string[]): Promise<void>;
  /** SIGTERM the server, wait for it to exit, remove the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL the server and wait for it to die; the datadir is kept for restart(). */
  kill(): Promise<void>;
  /** Start again on the same datadir, port and socket (after kill(), or while running). */
  restart(): Promise<void>;
}

export interface StartOptions {
  /** Extra mariadbd arguments, appended last so they override the defaults (e.g. '--log-bin=mysql-bin'). */
  args?: string[];
  /** Where the temp dir is created; default os.tmpdir(). */
  tmpRoot?: string;
}

/** Every server started by this process, killed on exit if still alive. */
const livePids = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of livePids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Every port {@link freePort} has handed out in this process. */
const handedOut = new Set<number>();

/**
 * A TCP port that was free a moment ago: listen on port 0, read the port, close. The kernel
 * may hand the same port out again once it is closed, so a port this process was already
 * given (and may be about to bind, as a test that picks several ports before starting
 * anything does) is never returned twice.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = await anyFreePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no port free that this process was not already given, after 100 tries');
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error('could not read the listening port'));
        return;
      }
      const port = addr.port;
      srv.close(() => resolve(port));
    });
  });
}

function installDbBinary(): string {
  const found = INSTALL_DB_CANDIDATES.find((p) => existsSync(p));
  if (found === undefined) throw new Error(`none of ${INSTALL_DB_CANDIDATES.join(', ')} exists`);
  return found;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** setpriv --pdeathsig makes the kernel SIGKILL the server when this process dies. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no error log)';
  }
}

/** Options shared by the bootstrap and the server: small memory, nothing from my.cnf. */
function smallServerArgs(): string[] {
  return [
    '--innodb-buffer-pool-size=16M',
    '--innodb-log-file-size=4M',
    '--innodb-log-buffer-size=1M',
    '--innodb-use-native-aio=0',
    '--key-buffer-size=1M',
    '--aria-pagecache-buffer-size=2M',
    '--query-cache-size=0',
    '--table-open-cache=200',
  ];
}

function initDatadir(base: string, datadir: string): void {
  const args = [
    '--no-defaults',
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    `--datadir=${datadir}`,
    // Its own tmpdir: bootstraps running side by side must not share /tmp temp tables.
    `--tmpdir=${base}`,
    ...(isRoot() ? ['--user=root'] : []),
    ...smallServerArgs(),
  ];
  let res = spawnSync(installDbBinary(), args, { encoding: 'utf8', timeout: 60_000 });
  if (res.status !== 0) {
    // One retry on a clean datadir: a loaded machine can trip the bootstrap once.
    rmSync(datadir, { recursive: true, force: true });
    res = spawnSync(installDbBinary(), args, { encoding: 'utf8', timeout: 60_000 });
  }
  if (res.status !== 0) {
    const out = `${res.stdout ?? ''}\n${res.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    writeFileSync(join(base, 'install.log'), out);
    throw new Error(`mariadb-install-db failed (status ${String(res.status)}): ${out}`);
  }
}

async function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Start a throwaway mariadbd and wait until it accepts connections. */
export async function startMariaDB(opts: StartOptions = {}): Promise<MariaDB> {
  installExitHook();
  const base = mkdtempSync(join(opts.tmpRoot ?? tmpdir(), 'sonde-mariadb-'));
  const datadir = join(base, 'data');
  const socket = join(base, 'mysqld.sock');
  const errorLog = join(base, 'error.log');
  try {
    initDatadir(base, datadir);
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  // The port is free when we look; another process may take it before mariadbd binds, so a
  // failed bind is retried on a new port (see the first launch below).
  let port = await freePort();

  const serverArgs = () => [
    '--no-defaults',
    `--datadir=${datadir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${socket}`,
    `--pid-file=${join(base, 'mysqld.pid')}`,
    `--log-error=${errorLog}`,
    `--tmpdir=${base}`,
    '--skip-name-resolve',
    '--max-connections=100',
    ...(isRoot() ? ['--user=root'] : []),
    ...smallServerArgs(),
    ...(opts.args ?? []),
  ];

  let child: ChildProcess | undefined;
  let stopped = false;
  let rootPool: Pool | undefined;

  const closeRootPool = async (): Promise<void> => {
    const p = rootPool;
    rootPool = undefined;
    if (p !== undefined) await p.end().catch(() => undefined);
  };

  const launch = async (): Promise<void> => {
    const [cmd, args] =
      SETPRIV !== undefined
        ? [SETPRIV, ['--pdeathsig', 'KILL', MARIADBD, ...serverArgs()]]
        : [MARIADBD, serverArgs()];
    const proc = spawn(cmd, args, { stdio: 'ignore' });
    child = proc;
    const pid = proc.pid;
    if (pid === undefined) throw new Error(`could not start ${MARIADBD}`);
    livePids.add(pid);
    proc.once('exit', () => livePids.delete(pid));
    // Poll: connect over the socket until the server answers, fail fast if it exits.
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastErr = '';
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(
          `mariadbd exited during startup (code ${String(proc.exitCode)}); error log tail:\n${tail(errorLog)}`,
        );
      }
      // A pool of one, not a plain connection: once a process has seen one plain mysql2
      // Connection beside pooled ones, V8 reads its packet handler's properties the slow way
      // for every later packet, and the benches that start MariaDB here measure sonde's pool.
      const probe = createPool({
        socketPath: socket,
        user: 'root',
        connectTimeout: 2000,
        connectionLimit: 1,
      });
      try {
        await probe.query('SELECT 1');
        return;
      } catch (err) {
        lastErr = err instanceof Error ? err.message : String(err);
      } finally {
        await probe.end().catch(() => undefined);
      }
      await sleep(100);
    }
    proc.kill('SIGKILL');
    await waitExit(proc, 5000);
    throw new Error(
      `mariadbd did not accept connections within ${START_TIMEOUT_MS / 1000}s (last error: ${lastErr}); error log tail:\n${tail(errorLog)}`,
    );
  };

  const killChild = async (signal: NodeJS.Signals, timeoutMs: number): Promise<void> => {
    const proc = child;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    if (!(await waitExit(proc, timeoutMs))) {
      proc.kill('SIGKILL');
      await waitExit(proc, 5000);
    }
  };

  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await launch();
        break;
      } catch (err) {
        const portTaken = /Address already in use|Bind on TCP\/IP port/i.test(String(err));
        if (!portTaken || attempt >= 3) throw err;
        port = await freePort();
      }
    }
  } catch (err) {
    await killChild('SIGKILL', 5000);
    rmSync(base, { recursive: true, force: true });
    throw err;
  }

  const pool = (): Pool => {
    rootPool ??= createPool({ socketPath: socket, user: 'root', connectionLimit: 2, maxIdle: 2 });
    return rootPool;
  };

  const server: MariaDB = {
    get port(): number {
      return port;
    },
    socket,
    get pid(): number {
      return child?.pid ?? -1;
    },
    datadir,
    host: '127.0.0.1',
    errorLog,
    async query(sql, params) {
      const [rows] = await pool().query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
    async createUser(user, password, grants = []) {
      await server.query(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, password]);
      for (const grant of grants) await server.query(`GRANT ${grant} TO ?@'%'`, [user]);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await closeRootPool();
      await killChild('SIGTERM', STOP_TIMEOUT_MS);
      rmSync(base, { recursive: true, force: true });
    },
    async kill() {
      await closeRootPool();
      await killChild('SIGKILL', 5000);
    },
    async restart() {
      if (stopped) throw new Error('restart() after stop(): the datadir is gone');
      await closeRootPool();
      await killChild('SIGTERM', STOP_TIMEOUT_MS);
      await launch();
    },
  };
  return server;
}

/** sonde's connection spec for `user` over TCP to a throwaway server. */
export function tcpSpec(
  server: Pick<MariaDB, 'host' | 'port'>,
  user: string,
  password: string,
): ConnectionSpec {
  return new ConnectionSpec({
    username: user,
    password,
    host: server.host,
    port: server.port,
    connectTimeoutMs: 5000,
    redactedDsn: `${user}:...@tcp(${server.host}:${server.port})/`,
  });
}

/** sonde's own pool (src/db/pool.ts) as `user` over TCP: what collectors get in production. */
export function connectAs(server: Pick<MariaDB, 'host' | 'port'>, user: string, password: string): PooledDb {
  return createDb(tcpSpec(server, user, password));
}

/** sonde's pool for root over the server's unix socket (tests and benches). */
export function rootDb(socket: string): PooledDb {
  return createDb(
    new ConnectionSpec({
      username: 'root',
      password: '',
      socket,
      connectTimeoutMs: 5000,
      redactedDsn: `root:...@unix(${socket})/`,
    }),
  );
}
