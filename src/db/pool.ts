/**
 * One small connection pool per monitor, on mysql2/promise.
 *
 * What this layer guarantees to collectors:
 * - at most 3 connections for statements, handed out by an abortable semaphore: a caller
 *   that gives up waiting leaves the queue, so nothing piles up behind a server that stopped
 *   answering (collectors take at most 2 at once, see the engine's limiter; the heartbeat
 *   and the plan changer use the rest); a fourth, with a slot of its own, is for ping()
 *   alone, so liveness is never decided behind the monitor's own slow statements;
 * - every column comes back as text (NULL stays null), so values are parsed one way only
 *   (db/values.ts) and BIGINT UNSIGNED never loses digits before that;
 * - every new connection runs `SET SESSION lock_wait_timeout=5`, so a metadata lock can
 *   never hold a monitoring query for long, and keeps sonde's statements out of the
 *   server's slow log where a session may say so without privileges (MariaDB:
 *   `slow_query_log=0`; MySQL: `long_query_time` and `min_examined_row_limit` at their
 *   largest); a server that refuses that part gets the lock wait timeout alone;
 * - a statement may ask for session variables of its own (QueryOptions.session: the
 *   exporter's lock_wait_timeout and log_slow_filter). The pool remembers what each
 *   connection has, sets only what differs in one `SET SESSION` before the statement, and
 *   puts the pool's own values (or DEFAULT) back before a statement that does not ask;
 * - a query whose signal aborts or whose timeout passes is rejected at once and KILLed on
 *   the server from one side connection at a time (short connect timeout); its pool
 *   connection is only reused after the statement has really ended, so the KILL can never
 *   hit a later statement. When the side connection cannot even connect (a frozen or
 *   unreachable server), no further KILL is tried until a statement succeeds again, and the
 *   abandoned connection keeps its slot (for up to 5 minutes) instead of being replaced: a
 *   server that stopped answering never gets more than the pool's 3 connections plus one
 *   KILL attempt from a monitor;
 * - errors are DbError with the server errno/code/sqlState kept and the password scrubbed;
 * - on "access denied" (1045) while opening a connection, the credentials are reloaded
 *   once (shared by concurrent failures) and, if they changed, the connection is retried.
 */
import {
  createPool,
  setMaxParserCache,
  type ConnectionOptions,
  type Pool,
  type PoolConnection,
} from 'mysql2/promise';
import type { Connection as CoreConnection } from 'mysql2';
import { IdleConnections } from './idle.js';
import type {
  BatchResultHandler,
  ConnectionSpec,
  Db,
  DbError,
  QueryOptions,
  Row,
  ServerInfo,
  SessionValue,
} from '../core/db.js';
import { errnoOf, errorMessage } from '../core/errors.js';
import { timeLeftMs } from '../util/abort.js';
import { formatDuration } from '../util/duration.js';
import { ER_ACCESS_DENIED } from './errnos.js';
import { parseServerVersion } from './flavor.js';
import { Semaphore } from '../util/semaphore.js';
import type { TLSSocket } from 'node:tls';

/**
 * Statement connections per monitor: 2 for collectors (at most 2 run at once), 1 for the
 * rest. One more connection is reserved for ping() (liveness), opened when it is needed.
 */
export const POOL_SIZE = 3;
/** Seconds; set on every new session so DDL locks cannot stall monitoring for long. */
const SESSION_LOCK_WAIT_TIMEOUT_S = 5;
/** The session variables every statement runs with unless it asks otherwise (SQL text). */
const BASE_SESSION: ReadonlyMap<string, string> = new Map([
  ['lock_wait_timeout', String(SESSION_LOCK_WAIT_TIMEOUT_S)],
]);
/** A connection's value while a SET is under way or after it failed: never equal to a wanted one. */
const UNKNOWN = '\0unknown';
const SESSION_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** After a KILL QUERY, how long to wait for the statement to end before dropping its connection. */
const KILL_SETTLE_MS = 5_000;
/** Connect timeout of the KILL side connection. */
const KILL_CONNECT_TIMEOUT_MS = 2_000;
/** How long a statement that could not be KILLed keeps its connection and slot. */
const QUARANTINE_MS = 300_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Error codes this module sets on DbError for its own failures. */
export const DB_ERROR_CODES = {
  timeout: 'SONDE_QUERY_TIMEOUT',
  cancelled: 'SONDE_QUERY_CANCELLED',
  closed: 'SONDE_DB_CLOSED',
  connectPaused: 'SONDE_CONNECT_PAUSED',
} as const;

/**
 * After a connection attempt timed out (a frozen or unreachable server), no new connection
 * is tried for a while, doubling from the first pause to the longest, and back to none on
 * the next connection made. Each attempt that times out leaves a socket in the server's
 * accept queue until the server reads it again, so attempts must not follow one another.
 */
const CONNECT_PAUSE_MS = { first: 5_000, longest: 30_000 } as const;

/** The concrete DbError: a plain Error carrying the server's errno, code and SQLSTATE. */
class DbQueryError extends Error implements DbError {
  errno?: number;
  code?: string;
  sqlState?: string;
  /** True when the connection that ran the statement is no longer usable. */
  fatal?: boolean;
  constructor(
    message: string,
    fields: { errno?: number; code?: string; sqlState?: string; fatal?: boolean } = {},
  ) {
    super(message);
    this.name = 'DbError';
    if (fields.errno !== undefined) this.errno = fields.errno;
    if (fields.code !== undefined) this.code = fields.code;
    if (fields.sqlState !== undefined) this.sqlState = fields.sqlState;
    if (fields.fatal !== undefined) this.fatal = fields.fatal;
  }
}

export interface CreateDbOptions {
  /**
   * Re-read the monitor's credentials (password file, my.cnf, secret, IAM token...).
   * Called after an access-denied error while opening a connection.
   */
  reloadCredentials?: () => Promise<ConnectionSpec>;
  /** Told `<redacted dsn>: <error>` when reloadCredentials fails (event `db-reload-password-error`). */
  onPasswordReloadError?: (msg: string) => void;
  /**
   * Told after each attempt to open a new connection: how long it took (ms) and the error
   * when it failed. A connection reused from the pool is not reported.
   */
  onConnect?: (ms: number, error?: string) => void;
  /**
   * The embedding program's `modifyDb` hook: given the mysql2 options sonde chose (a copy),
   * returns the ones to connect with. Called for each pool generation and each KILL
   * connection; a throw fails that connection like any connect error.
   */
  modifyOptions?: (options: ConnectionOptions) => ConnectionOptions;
}

/** A Db that owns its pool. */
export type PooledDb = Db & {
  /**
   * Db.queryBatch; `onResult`, when given, gets each statement's rows as soon as its result
   * set is complete, before the next statement's answer is read (see BatchResultHandler).
   */
  queryBatch(sqls: readonly string[], opts?: QueryOptions, onResult?: BatchResultHandler): Promise<Row[][]>;
  /** Close every connection; later calls reject with code SONDE_DB_CLOSED. Idempotent. */
  close(): Promise<void>;
  /**
   * Connect with `spec` from now on (my.cnf read again): new connections come from a new
   * pool; statements running on the old one finish there, and it is ended once they have.
   */
  useSpec(spec: ConnectionSpec): void;
};

/** Create the connection pool for one monitor. No connection is opened until first use. */
export function createDb(spec: ConnectionSpec, opts: CreateDbOptions = {}): PooledDb {
  return new MysqlDb(spec, opts);
}

/** The typeCast that reads every column as its text (NULL stays null). */
const asText: NonNullable<ConnectionOptions['typeCast']> = (field) => field.string();

/**
 * mysql2's own reading of a column gives exactly its text, as asText does, for these
 * column types when the column is not binary: the strings (VARCHAR, CHAR, TEXT, ENUM, SET)
 * and, with the options of {@link AS_IS}, BIGINT. DECIMAL would too, but is left out.
 */
const TEXT_TYPES: ReadonlySet<number> = new Set([0x0f, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe]);
const LONGLONG = 0x08;
const BINARY_CHARSET = 63;

/** The mysql2 query options under which a {@link plainText} result reads as asText reads it. */
const AS_IS = { supportBigNumbers: true, bigNumberStrings: true } as const;

/** A result column as mysql2 describes it (the parts plainText() reads). */
interface ColumnFacts {
  columnType?: number;
  characterSet?: number;
  extendedFormat?: string;
}

/**
 * Whether mysql2 reads every column of a result (its column definitions) as text without
 * the typeCast hook: text columns not binary, or BIGINT. A result without columns, or of
 * several result sets, is not.
 */
function plainText(fields: unknown): boolean {
  if (!Array.isArray(fields) || fields.length === 0) return false;
  for (const f of fields as unknown[]) {
    if (typeof f !== 'object' || f === null || Array.isArray(f)) return false;
    const c = f as ColumnFacts;
    if (c.extendedFormat !== undefined && c.extendedFormat !== '') return false;
    if (c.columnType === LONGLONG) continue;
    if (c.columnType === undefined || !TEXT_TYPES.has(c.columnType) || c.characterSet === BINARY_CHARSET)
      return false;
  }
  return true;
}

/**
 * How many generated row parsers mysql2 keeps, process-wide. It keeps one per column layout
 * of a result (names, types, character sets, flags) and way of reading it, and allocates its
 * cache's slots up front: 15,000 by default, about 0.45 MiB of heap. sonde's statements number
 * a few hundred, each read as text and as it is, their layouts varying with the server's
 * flavour and version: 5,000 slots hold them with room to spare, in about 0.15 MiB. Past it the
 * least recently used parser is dropped and made again when next needed.
 */
export const ROW_PARSER_SLOTS = 5000;
let parserCacheSized = false;

/** mysql2 options for a spec: socket or TCP, TLS, connect timeout, all columns as text. */
function connectionOptions(spec: ConnectionSpec): ConnectionOptions {
  const o: ConnectionOptions = {
    user: spec.username,
    password: spec.password(),
    connectTimeout: spec.connectTimeoutMs > 0 ? spec.connectTimeoutMs : DEFAULT_CONNECT_TIMEOUT_MS,
    // Every column as text; NULL stays null. Collectors parse with parseValue().
    typeCast: asText,
    multipleStatements: false,
    // mysql2 captures the caller's stack for every query by default, for failures only;
    // sonde's errors name the statement instead, so that work is skipped.
    trace: false,
    // sonde never prepares statements (no execute()); mysql2 sizes each connection's
    // statement cache up front (16000 slots by default, about 0.5 MiB per connection).
    maxPreparedStatements: 1,
    // The query analytics domains recognise sonde's own connections by this attribute
    // (performance_schema.session_connect_attrs) and leave them out of what they report.
    connectAttributes: { program_name: 'sonde' },
  };
  if (spec.socket !== undefined && spec.socket !== '') {
    o.socketPath = spec.socket;
  } else {
    o.host = spec.host ?? '127.0.0.1';
    o.port = spec.port ?? 3306;
  }
  if (spec.allowCleartextPasswords) o.authPlugins = { mysql_clear_password: cleartextPlugin(spec) };
  if (spec.tls !== undefined) {
    const t = spec.tls;
    o.ssl = {
      rejectUnauthorized: t.rejectUnauthorized,
      // verify the certificate's host name too when verifying at all (as Go's TLS does),
      // unless only the chain is to be verified or another name is checked (checkName,
      // once the connection is up: see checkServerName)
      verifyIdentity: t.checkName === undefined && (t.verifyIdentity ?? t.rejectUnauthorized),
      ...(t.minVersion !== undefined ? { minVersion: t.minVersion } : {}),
      ...(t.maxVersion !== undefined ? { maxVersion: t.maxVersion } : {}),
      ...(t.ca !== undefined ? { ca: t.ca } : {}),
      ...(t.cert !== undefined ? { cert: t.cert } : {}),
      ...(t.key !== undefined ? { key: t.key } : {}),
    };
  }
  return o;
}

/**
 * The session variables that keep a session's statements out of the slow log, by server:
 * MariaDB lets any session turn its slow log off; MySQL does not, but any session may
 * raise its own slow-query threshold and minimum of examined rows to their maximum (which
 * also keeps out statements logged for not using an index).
 */
export const QUIET_SLOW_LOG = {
  mariadb: 'slow_query_log=0',
  mysql: 'long_query_time=31536000, min_examined_row_limit=18446744073709551615',
} as const;

/**
 * A new connection's session: `lock_wait_timeout`, and out of the slow log where the server
 * allows it (best effort: when that part is refused, the lock wait timeout is set alone).
 */
/** The QUIET_SLOW_LOG assignments for the server a connection is on (by its handshake). */
function quietSlowLog(conn: PoolConnection): string {
  const core = (conn as unknown as { connection?: { _handshakePacket?: { serverVersion?: string } } })
    .connection;
  const version = core?._handshakePacket?.serverVersion;
  return /mariadb/i.test(version ?? '') ? QUIET_SLOW_LOG.mariadb : QUIET_SLOW_LOG.mysql;
}

async function setupSession(conn: PoolConnection): Promise<void> {
  const base = `SET SESSION lock_wait_timeout=${SESSION_LOCK_WAIT_TIMEOUT_S}`;
  const quiet = quietSlowLog(conn);
  try {
    await conn.query(`${base}, ${quiet}`);
  } catch (err) {
    if (errnoOf(err) === undefined) throw err; // not the server's refusal: the connection failed
    await conn.query(base);
  }
}

/** The server refused TLS: it offers none (mysql2's handshake error). */
function noTlsOffered(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'HANDSHAKE_NO_SSL_SUPPORT';
}

/**
 * my.cnf `tls-server-name`: the server certificate, verified against the CA during the
 * handshake, must also carry this name; otherwise the new connection is given up.
 */
function checkServerName(conn: PoolConnection, spec: ConnectionSpec): void {
  const name = spec.tls?.checkName;
  if (name === undefined || spec.tls?.rejectUnauthorized !== true) return;
  const stream = (conn.connection as unknown as { stream?: Partial<TLSSocket> }).stream;
  const cert = stream?.getPeerCertificate?.();
  // node:tls is loaded by a TLS connection (mysql2's, through the build's lazy require), not at start.
  const why =
    cert === undefined
      ? new Error('no TLS certificate')
      : process.getBuiltinModule('node:tls').checkServerIdentity(name, cert);
  if (why !== undefined)
    throw new DbQueryError(`TLS: the server certificate is not for tls-server-name ${name}: ${why.message}`, {
      code: 'HANDSHAKE_SSL_ERROR',
    });
}

/** The text of the refusal to send a cleartext password over a plain connection. */
export const CLEARTEXT_WITHOUT_TLS =
  'the server asked for the password in clear text (mysql_clear_password) on a connection without TLS: refused, nothing sent';

/**
 * mysql2's hook for the server's `mysql_clear_password` request: the password (e.g. a
 * fresh IAM token) goes out only when the connection is encrypted; otherwise the
 * handshake fails with CLEARTEXT_WITHOUT_TLS and nothing is sent.
 */
function cleartextPlugin(spec: ConnectionSpec): NonNullable<ConnectionOptions['authPlugins']>[string] {
  return ({ connection }) =>
    async () => {
      const stream = (connection as unknown as { stream?: { encrypted?: boolean } }).stream;
      if (stream?.encrypted !== true) throw new Error(CLEARTEXT_WITHOUT_TLS);
      return Buffer.from(`${await spec.cleartextPassword()}\0`);
    };
}

/** The mysql2 pool plus the spec it was built from. A password swap starts a new generation. */
interface Generation {
  spec: ConnectionSpec;
  pool: Pool;
  /**
   * The statements' pool reads columns as text through asText, passed with each query
   * (none set on the pool), so a query whose columns mysql2 reads as text anyway can go
   * without it (see MysqlDb.query). False when the modifyDb hook chose a typeCast of its own.
   */
  asText: boolean;
  /** The connection for statement batches (multi-statement requests), opened on first use. */
  batch?: Pool;
  /** Connections checked out of this pool right now. */
  active: number;
  /** The statements' connections idle in `pool`, all but one closed soon after use. */
  idle: IdleConnections;
  /** Replaced by a newer generation: end the pool once nothing is checked out. */
  retired: boolean;
}

/** A statement that only reads: one that starts with SELECT or SHOW. */
const READ_ONLY = /^\s*(SELECT|SHOW)\s/i;

/** Distinct statement texts a pool remembers (see Db.statementsRun). */
const MAX_TEXTS_KEPT = 2000;

class MysqlDb implements PooledDb {
  /** The distinct statements run (the first MAX_TEXTS_KEPT): Db.statementsRun. */
  readonly #texts = new Set<string>();
  /** Per statement text: whether its columns read as text without the typeCast hook (see #textRows). */
  readonly #plain = new Map<string, boolean>();

  statementsRun(): ReadonlySet<string> {
    return this.#texts;
  }

  #gen: Generation;
  readonly #opts: CreateDbOptions;
  /** Every password this pool has used: scrubbed from any error text. */
  readonly #secrets = new Set<string>();
  /** Core connections that already ran the session setup. */
  readonly #prepared = new WeakSet<object>();
  /** Per core connection: session variable → the value (SQL text) it has now. */
  readonly #session = new WeakMap<object, Map<string, string>>();
  #reloading: Promise<boolean> | undefined;
  #info: Promise<ServerInfo> | undefined;
  #closed = false;
  readonly #retiredEnds = new Set<Promise<void>>();
  /** Pool slots: at most POOL_SIZE statements hold a connection. */
  readonly #slots = new Semaphore(POOL_SIZE);
  /**
   * The liveness slot: ping() runs on it, never behind the statements, so a monitor's own
   * slow queries holding every statement slot cannot make a live server look down.
   */
  readonly #pingSlot = new Semaphore(1);
  /** The KILL side connection in use (one at a time). */
  #killing: Promise<void> = Promise.resolve();
  /** A KILL could not connect: none is tried until a statement succeeds again. */
  #killBlocked = false;
  /** No connection is tried before this time (ms since the epoch) after a connect timed out. */
  #connectPausedUntil = 0;
  /** The pause after the next connect timeout. */
  #connectPauseMs: number = CONNECT_PAUSE_MS.first;
  /** Connections held after a failed KILL, each with the way to let it go at close(). */
  readonly #quarantined = new Set<() => void>();

  constructor(spec: ConnectionSpec, opts: CreateDbOptions) {
    this.#opts = opts;
    this.#gen = this.#newGeneration(spec);
  }

  toJSON(): Record<string, unknown> {
    return { dsn: this.#gen.spec.redactedDsn };
  }

  /** The mysql2 options of a spec, through the `modifyOptions` hook when there is one. */
  #connectionOptions(spec: ConnectionSpec): ConnectionOptions {
    const o = connectionOptions(spec);
    return this.#opts.modifyOptions ? this.#opts.modifyOptions({ ...o }) : o;
  }

  #newGeneration(spec: ConnectionSpec): Generation {
    if (!parserCacheSized) {
      setMaxParserCache(ROW_PARSER_SLOTS);
      parserCacheSized = true;
    }
    if (spec.password() !== '') this.#secrets.add(spec.password());
    const options = this.#connectionOptions(spec);
    const own = options.typeCast === asText;
    const pool = createPool({
      ...options,
      // asText goes with each query instead (see Generation.asText).
      ...(own ? { typeCast: undefined } : {}),
      // The statements' slots and the liveness slot.
      connectionLimit: POOL_SIZE + 1,
      // One connection stays open between collections. The others are opened only while
      // statements run in parallel, and closed within a second of going idle (with
      // COM_QUIT: gracefulEnd, so the server does not count aborted clients) by
      // IdleConnections, not by mysql2, whose check would wake the process every second.
      maxIdle: POOL_SIZE + 1,
      gracefulEnd: true,
      waitForConnections: true,
      queueLimit: 0,
    });
    return { spec, pool, asText: own, active: 0, retired: false, idle: new IdleConnections() };
  }

  /**
   * The generation's batch pool: one connection that accepts several statements per request
   * (mysql2's multipleStatements), used by queryBatch() alone, so no other statement ever
   * runs where several may be sent at once. It stays open like the statements' idle one.
   */
  #batchPool(gen: Generation): Pool {
    gen.batch ??= createPool({
      ...this.#connectionOptions(gen.spec),
      // asText goes with each batch, switched per result set (see streamBatch).
      ...(gen.asText ? { typeCast: undefined } : {}),
      multipleStatements: true,
      connectionLimit: 1,
      maxIdle: 1,
      gracefulEnd: true,
      waitForConnections: true,
      queueLimit: 0,
    });
    return gen.batch;
  }

  // ---- errors -------------------------------------------------------------------------

  /** Replace every known password in `text` (defensive: mysql2 does not echo passwords). */
  #scrub(text: string): string {
    let out = text;
    for (const secret of this.#secrets) {
      // Very short passwords would mangle ordinary words; mysql2 never echoes them anyway.
      if (secret.length >= 4) out = out.split(secret).join('...');
    }
    return out;
  }

  /** Any thrown value → DbQueryError with errno/code/sqlState kept and the password scrubbed. */
  #toDbError(err: unknown): DbQueryError {
    if (err instanceof DbQueryError) return err;
    const e = (typeof err === 'object' && err !== null ? err : {}) as {
      code?: unknown;
      sqlState?: unknown;
      fatal?: unknown;
    };
    const fields: ConstructorParameters<typeof DbQueryError>[1] = {};
    const errno = errnoOf(err);
    if (errno !== undefined) fields.errno = errno;
    if (typeof e.code === 'string') fields.code = e.code;
    if (typeof e.sqlState === 'string' && e.sqlState !== '') fields.sqlState = e.sqlState;
    if (e.fatal === true) fields.fatal = true;
    let msg = errorMessage(err);
    if (msg === '' && fields.code !== undefined) msg = fields.code; // e.g. AggregateError ECONNREFUSED
    return new DbQueryError(this.#scrub(msg), fields);
  }

  // ---- connections --------------------------------------------------------------------

  /**
   * Check out a connection from the current generation, reloading credentials on 1045.
   * The returned `gen` is the generation the connection belongs to (for release()).
   */
  async #acquire(batch = false): Promise<{ conn: PoolConnection; gen: Generation }> {
    if (this.#closed) throw new DbQueryError('connection pool is closed', { code: DB_ERROR_CODES.closed });
    const paused = this.#connectPausedUntil - Date.now();
    if (paused > 0) {
      const next = `${Math.ceil(paused / 1000)}s`;
      throw new DbQueryError(`connecting timed out before; next attempt in ${next}`, {
        code: DB_ERROR_CODES.connectPaused,
      });
    }
    const gen = this.#gen;
    try {
      const conn = await this.#checkout(gen, batch);
      this.#connectPauseMs = CONNECT_PAUSE_MS.first;
      return { conn, gen };
    } catch (err) {
      if (isConnectTimeout(err)) {
        this.#connectPausedUntil = Date.now() + this.#connectPauseMs;
        this.#connectPauseMs = Math.min(this.#connectPauseMs * 2, CONNECT_PAUSE_MS.longest);
      }
      if (noTlsOffered(err) && gen.spec.tls?.preferred === true && this.#gen === gen) {
        // tls=preferred and the server offers no TLS: connect without it from now on.
        this.#gen = this.#newGeneration(gen.spec.withTls(undefined));
        gen.retired = true;
        this.#maybeEndRetired(gen);
        return this.#acquire(batch);
      }
      if (!isAccessDenied(err)) throw this.#toDbError(err);
      // Password reload: one reload at a time; concurrent failures wait
      // for it, then retry once if the credentials changed.
      const swapped = this.#gen !== gen || (await this.#reloadOnce(gen));
      if (!swapped || this.#closed) throw this.#toDbError(err);
      const next = this.#gen;
      try {
        return { conn: await this.#checkout(next, batch), gen: next };
      } catch (err2) {
        throw this.#toDbError(err2);
      }
    }
  }

  async #checkout(gen: Generation, batch = false): Promise<PoolConnection> {
    const t0 = Date.now();
    let conn: PoolConnection;
    try {
      conn = await (batch ? this.#batchPool(gen) : gen.pool).getConnection();
    } catch (err) {
      this.#opts.onConnect?.(Date.now() - t0, errorMessage(err));
      throw err;
    }
    gen.active++;
    const core = conn.connection as object;
    if (!batch) gen.idle.taken(conn.connection);
    if (!this.#prepared.has(core)) {
      this.#opts.onConnect?.(Date.now() - t0);
      try {
        checkServerName(conn, gen.spec);
        await setupSession(conn);
      } catch (err) {
        this.#release(conn, gen, true);
        throw err;
      }
      this.#prepared.add(core);
      this.#session.set(core, new Map(BASE_SESSION));
    }
    return conn;
  }

  /**
   * Give the connection the session variables `wanted` asks for, the pool's own values for
   * the rest: one `SET SESSION` with only what differs, nothing when all match. A variable
   * reads as unknown while its SET runs, so a connection given up mid-SET is never trusted.
   */
  async #applySession(conn: PoolConnection, wanted: QueryOptions['session']): Promise<void> {
    const state = this.#session.get(conn.connection);
    if (state === undefined) return;
    // The usual case, without building the wanted map: no variables asked, the pool's own set.
    if (wanted === undefined && hasBaseSession(state)) return;
    const desired = this.#desired(conn, wanted);
    // The usual case: the connection has exactly what the statement wants (nothing to SET).
    if (state.size === desired.size && [...desired].every(([name, value]) => state.get(name) === value))
      return;
    for (const name of state.keys()) if (!desired.has(name)) desired.set(name, 'DEFAULT');
    const changes = [...desired].filter(([name, value]) => state.get(name) !== value);
    if (changes.length === 0) return;
    const before = new Map(changes.map(([name]) => [name, state.get(name)]));
    for (const [name] of changes) state.set(name, UNKNOWN);
    try {
      await conn.query(`SET SESSION ${changes.map(([name, value]) => `${name}=${value}`).join(', ')}`);
    } catch (err) {
      // A SET that fails changes nothing (the server checks every assignment first): the
      // connection keeps its values, and a variable it never had (one the server does not
      // know) is not put back to DEFAULT by later statements.
      for (const [name, value] of before) {
        if (value === undefined) state.delete(name);
        else state.set(name, value);
      }
      throw err;
    }
    for (const [name, value] of changes) state.set(name, value);
  }

  /** The session variables `wanted` asks for over the pool's own, as SQL text (a new map). */
  #desired(conn: PoolConnection, wanted: QueryOptions['session']): Map<string, string> {
    const desired = new Map(BASE_SESSION);
    if (wanted === undefined) return desired;
    for (const name in wanted) {
      if (!SESSION_NAME.test(name)) throw new DbQueryError(`invalid session variable name: ${name}`);
      desired.set(name, sessionSql(conn, wanted[name] as SessionValue));
    }
    return desired;
  }

  /** Give a connection back (or drop it when it may be unusable), and its slot. */
  #release(conn: PoolConnection, gen: Generation, destroy: boolean, slot?: () => void): void {
    gen.active--;
    if (destroy) conn.destroy();
    else {
      conn.release();
      gen.idle.released(conn.connection);
    }
    slot?.();
    this.#maybeEndRetired(gen);
  }

  #maybeEndRetired(gen: Generation): void {
    if (!gen.retired || gen.active > 0) return;
    gen.retired = false; // end once
    const p = endPools(gen);
    this.#retiredEnds.add(p);
    void p.finally(() => this.#retiredEnds.delete(p)); // bookkeeping only; end() errors are ignored above
  }

  /** Shared reload: resolves true when the credentials changed and a new generation is in place. */
  #reloadOnce(failedGen: Generation): Promise<boolean> {
    this.#reloading ??= this.#reload(failedGen).finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  async #reload(failedGen: Generation): Promise<boolean> {
    const reload = this.#opts.reloadCredentials;
    if (reload === undefined) return false;
    let fresh: ConnectionSpec;
    try {
      fresh = await reload();
    } catch (err) {
      const msg = `${failedGen.spec.redactedDsn}: ${this.#scrub(errorMessage(err))}`;
      this.#opts.onPasswordReloadError?.(msg);
      return false;
    }
    if (this.#closed) return false;
    const cur = this.#gen.spec;
    if (fresh.username === cur.username && fresh.password() === cur.password())
      return this.#gen !== failedGen;
    // New credentials: new connections come from a new pool; connections checked out of the
    // old one keep running and the old pool is ended once they are all returned.
    const old = this.#gen;
    this.#gen = this.#newGeneration(fresh);
    this.#info = undefined;
    old.retired = true;
    this.#maybeEndRetired(old);
    return true;
  }

  /**
   * KILL QUERY from a short-lived side connection, so a KILL never waits for a pool slot.
   * One at a time; refused at once while a previous KILL could not connect.
   *
   * The side connection comes from a pool of its own, as a `PoolConnection` like every
   * other sonde connection: one connection of mysql2's plain `Connection` class is enough to
   * make V8 see too many object shapes in mysql2's packet handling, which then reads every
   * property of every packet through its slow, megamorphic path for the rest of the process
   * (5 to 6 % more instructions per collection of the wide plan, counted by bench/instructions.ts).
   */
  #killQuery(threadId: number): Promise<void> {
    const run = this.#killing.then(async () => {
      if (this.#killBlocked || this.#closed)
        throw new Error('KILL skipped: the server did not answer the last one');
      const side = createPool({
        ...this.#connectionOptions(this.#gen.spec),
        connectTimeout: KILL_CONNECT_TIMEOUT_MS,
        connectionLimit: 1,
        maxIdle: 1,
        gracefulEnd: true,
      });
      let conn: PoolConnection | undefined;
      try {
        try {
          conn = await side.getConnection();
        } catch (err) {
          this.#killBlocked = true;
          throw err;
        }
        // a late socket error must not crash the process
        (conn.connection as unknown as CoreConnection).on('error', () => undefined);
        // Out of the slow log like every sonde session (best effort, see setupSession).
        await conn.query(`SET SESSION ${quietSlowLog(conn)}`).catch(() => undefined);
        await conn.query(`KILL QUERY ${Math.trunc(threadId)}`);
      } finally {
        conn?.release();
        await side.end().catch(() => conn?.destroy());
      }
    });
    this.#killing = run.catch(() => undefined);
    return run;
  }

  // ---- running statements -------------------------------------------------------------

  /**
   * Run `work` on a pooled connection under the caller's signal and timeout. Rejects at
   * once when either fires; the statement is then KILLed and its connection returned only
   * after it has ended (or destroyed if that does not happen within KILL_SETTLE_MS).
   */
  async #run<T>(opts: QueryOptions | undefined, work: Work<T>, on: RunOn = {}): Promise<T> {
    const slots = on.slots ?? this.#slots;
    const signal = opts?.signal;
    const timeoutMs = opts?.timeoutMs;
    if (signal?.aborted) throw cancelledError(signal);

    // `stop` settles as soon as the signal aborts or the timeout passes.
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let stopped: DbQueryError | undefined;
    const stop = new Promise<'stop'>((resolve) => {
      const fire = (err: DbQueryError) => {
        stopped ??= err;
        resolve('stop');
      };
      if (timeoutMs !== undefined && timeoutMs >= 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => fire(timeoutError(timeoutMs)), timeoutMs);
      }
      if (signal !== undefined) {
        onAbort = () => fire(cancelledError(signal));
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    const cleanup = () => {
      if (timer !== undefined) clearTimeout(timer);
      if (signal !== undefined && onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    };

    let slot: (() => void) | undefined;
    try {
      // 1. Take a slot (waiting only when all are taken), then a connection (may open and
      // authenticate one).
      slot =
        slots.tryAcquire() ?? (await this.#waitForSlot(slots, stop, () => stopped ?? cancelledError(signal)));
      const held = slot;
      const acquiring = this.#acquire(on.batch);
      const first = await Promise.race([acquiring.then((c) => ({ c })), stop]);
      if (first === 'stop') {
        // Give the connection and the slot back whenever it arrives; nothing ran on it yet.
        slot = undefined;
        acquiring.then(
          ({ conn, gen }) => this.#release(conn, gen, false, held),
          () => held(),
        );
        throw stopped ?? cancelledError(signal);
      }
      const { conn, gen } = first.c;
      slot = undefined; // from here the connection's release gives the slot back

      // 2. Run the statement.
      const running = work(conn, gen).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      const second = await Promise.race([running, stop]);
      if (second !== 'stop') {
        if (second.ok) {
          this.#killBlocked = false; // the server answers again
          this.#release(conn, gen, false, held);
          return second.value;
        }
        const err = this.#toDbError(second.error);
        if (err.fatal === true)
          this.#info = undefined; // server may have restarted: re-detect
        // An error the server sent (it carries a SQLSTATE) proves it answers again; one the
        // client made up (a closed socket, say) does not.
        else if (err.sqlState !== undefined) this.#killBlocked = false;
        this.#release(conn, gen, err.fatal === true, held);
        throw err;
      }

      // 3. Cancelled while running: KILL it, release the connection once it is quiet.
      void this.#settleKilled(conn, gen, running, held); // background cleanup; never rejects
      throw stopped ?? cancelledError(signal);
    } finally {
      slot?.();
      cleanup();
    }
  }

  /** Wait for a pool slot; a caller that gives up (`stop`) leaves the queue at once. */
  async #waitForSlot(slots: Semaphore, stop: Promise<'stop'>, why: () => DbQueryError): Promise<() => void> {
    const gate = new AbortController();
    void stop.then(() => gate.abort());
    try {
      return await slots.acquire(gate.signal);
    } catch {
      throw why();
    }
  }

  /**
   * After a statement was abandoned: KILL it and give the connection back once it is quiet
   * (dropped if it does not end in time). When the KILL cannot run, the connection keeps its
   * slot until the statement ends or QUARANTINE_MS passes, so no new connection is opened
   * to a server that does not answer.
   */
  async #settleKilled(
    conn: PoolConnection,
    gen: Generation,
    running: Promise<unknown>,
    slot: () => void,
  ): Promise<void> {
    let killed = false;
    try {
      await this.#killQuery(conn.threadId);
      killed = true;
    } catch {
      // cannot KILL (server gone or frozen): wait for the statement below
    }
    let timer: NodeJS.Timeout | undefined;
    let letGo: () => void = () => undefined;
    const ended = await Promise.race([
      running.then(() => true),
      new Promise<false>((resolve) => {
        letGo = () => resolve(false);
        timer = setTimeout(letGo, killed ? KILL_SETTLE_MS : QUARANTINE_MS);
        timer.unref(); // never keeps the process alive
        this.#quarantined.add(letGo);
      }),
    ]);
    clearTimeout(timer);
    this.#quarantined.delete(letGo);
    this.#release(conn, gen, !(killed && ended), slot);
  }

  // ---- Db -----------------------------------------------------------------------------

  async query(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    this.#remember(sql);
    const bounded = opts?.serverTimeLimit === true ? await this.#serverBounded(sql, opts) : sql;
    return this.#run(opts, async (conn, gen) => {
      await this.#applySession(conn, opts?.session);
      // No parameters: no client-side interpolation, so a literal `?` in the SQL stays as is.
      const values = params === undefined || params.length === 0 ? undefined : [...params];
      if (!gen.asText) return toRows((await conn.query(bounded, values))[0]);
      return this.#textRows(conn, bounded, values);
    });
  }

  /**
   * Rows as text. mysql2's typeCast hook costs a call and a closure per column; a statement
   * whose columns mysql2 reads as text anyway (plainText(): SHOW GLOBAL STATUS, the
   * INNODB_METRICS columns…) is read without it once its first run showed its columns. Should
   * its columns change (a server upgraded under the same connection), it is read again
   * through the hook, once, and never without it after that. Read-only statements alone
   * (SELECT, SHOW) go without it, so reading one again changes nothing.
   */
  async #textRows(conn: PoolConnection, sql: string, values: unknown[] | undefined): Promise<Row[]> {
    const plain = this.#plain.get(sql);
    if (plain === true) {
      const [result, fields] = await conn.query({ sql, ...AS_IS }, values);
      if (plainText(fields)) return toRows(result);
      this.#plain.set(sql, false);
    }
    const [result, fields] = await conn.query({ sql, typeCast: asText }, values);
    if (plain === undefined && this.#plain.size < MAX_TEXTS_KEPT)
      this.#plain.set(sql, READ_ONLY.test(sql) && plainText(fields));
    return toRows(result);
  }

  /** Keep a statement's text for the own-statement filters, up to MAX_TEXTS_KEPT of them. */
  #remember(sql: string): void {
    if (this.#texts.size < MAX_TEXTS_KEPT) this.#texts.add(sql);
  }

  async queryBatch(
    sqls: readonly string[],
    opts?: QueryOptions,
    onResult?: BatchResultHandler,
  ): Promise<Row[][]> {
    if (sqls.length <= 1)
      return Promise.all(
        sqls.map(async (sql, i) => {
          const rows = await this.query(sql, [], opts);
          onResult?.(i, rows);
          return rows;
        }),
      );
    for (const sql of sqls) this.#remember(sql);
    // A line of its own for each `;`: a statement's trailing `--` comment cannot swallow it.
    const text = sqls.join('\n;\n');
    return this.#run(
      opts,
      async (conn, gen) => {
        await this.#applySession(conn, opts?.session);
        return streamBatch(conn, text, sqls.length, onResult, gen.asText);
      },
      { batch: true },
    );
  }

  /** `sql` with the server's own time limit for the time left (see QueryOptions.serverTimeLimit). */
  async #serverBounded(sql: string, opts: QueryOptions): Promise<string> {
    const left = Math.min(timeLeftMs(opts.signal) ?? Infinity, opts.timeoutMs ?? Infinity);
    if (!Number.isFinite(left)) return sql;
    const info = await this.serverInfo({ ...(opts.signal ? { signal: opts.signal } : {}) });
    return withServerTimeLimit(sql, info, Math.max(1, Math.ceil(left)));
  }

  async serverInfo(opts?: QueryOptions): Promise<ServerInfo> {
    if (this.#info === undefined) {
      const p = this.query('SELECT @@version AS version', [], opts).then((rows) =>
        parseServerVersion(rows[0]?.version ?? ''),
      );
      this.#info = p;
      // a failed detection is not cached
      p.catch(() => {
        if (this.#info === p) this.#info = undefined;
      });
    }
    return this.#info;
  }

  async ping(opts?: QueryOptions): Promise<void> {
    await this.#run(
      opts,
      async (conn) => {
        await this.#applySession(conn, opts?.session);
        await conn.ping();
      },
      { slots: this.#pingSlot },
    );
  }

  useSpec(spec: ConnectionSpec): void {
    if (this.#closed) return;
    const old = this.#gen;
    this.#gen = this.#newGeneration(spec);
    this.#info = undefined;
    old.retired = true;
    this.#maybeEndRetired(old);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const letGo of [...this.#quarantined]) letGo();
    await endPools(this.#gen);
    await Promise.all([...this.#retiredEnds]);
  }
}

/** What #run runs on a pooled connection. */
type Work<T> = (conn: PoolConnection, gen: Generation) => Promise<T>;

/** Where #run runs: the slots it takes (the statements' by default), and the batch connection or not. */
interface RunOn {
  slots?: Semaphore;
  batch?: boolean;
}

/**
 * `sql` bounded by the server's own statement time limit of `ms`: MariaDB's
 * `SET STATEMENT max_statement_time=<seconds> FOR <sql>` (10.1.2+), MySQL's
 * `/*+ MAX_EXECUTION_TIME(<ms>) *\/` optimizer hint after the leading SELECT (5.7.8+; the
 * hint applies to SELECT only). Older servers, and other statements, get `sql` unchanged.
 */
export function withServerTimeLimit(sql: string, info: ServerInfo, ms: number): string {
  const [major, minor, patch] = info.version;
  const atLeast = (a: number, b: number, c: number): boolean =>
    major !== a ? major > a : minor !== b ? minor > b : patch >= c;
  if (info.flavor === 'mariadb') {
    if (!atLeast(10, 1, 2)) return sql;
    return `SET STATEMENT max_statement_time=${(ms / 1000).toFixed(3)} FOR ${sql}`;
  }
  if (!atLeast(5, 7, 8)) return sql;
  return sql.replace(/^\s*SELECT\b/i, (select) => `${select} /*+ MAX_EXECUTION_TIME(${Math.trunc(ms)}) */`);
}

/** Whether a connection's session variables are exactly the pool's own (BASE_SESSION). */
function hasBaseSession(state: ReadonlyMap<string, string>): boolean {
  if (state.size !== BASE_SESSION.size) return false;
  for (const [name, value] of BASE_SESSION) if (state.get(name) !== value) return false;
  return true;
}

/** A session value as SQL: an integer or decimal as is, a text quoted, null as DEFAULT. */
function sessionSql(conn: PoolConnection, value: SessionValue): string {
  if (value === null) return 'DEFAULT';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new DbQueryError(`invalid session variable value: ${value}`);
    return String(value);
  }
  return conn.escape(value);
}

function isAccessDenied(err: unknown): boolean {
  return errnoOf(err) === ER_ACCESS_DENIED;
}

function timeoutError(ms: number): DbQueryError {
  return new DbQueryError(`query timed out after ${formatDuration(ms)} and was cancelled`, {
    code: DB_ERROR_CODES.timeout,
  });
}

function cancelledError(signal: AbortSignal | undefined): DbQueryError {
  const reason: unknown = signal?.reason;
  const why = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : '';
  return new DbQueryError(`query cancelled${why !== '' ? `: ${why}` : ''}`, {
    code: DB_ERROR_CODES.cancelled,
  });
}

/** mysql2 result → rows as plain objects; statements without a result set give []. */
function toRows(result: unknown): Row[] {
  if (!Array.isArray(result)) return [];
  // Several result sets (CALL): keep the first.
  const rows: unknown[] = result.length > 0 && Array.isArray(result[0]) ? (result[0] as unknown[]) : result;
  // mysql2 builds a plain object per row already (every column text via typeCast): no copy.
  return rows as Row[];
}

/**
 * Send a multi-statement `text` of `n` statements on `conn` and read its answer as it comes:
 * rows per statement, each told to `onResult` once its result set is complete. mysql2's
 * streaming form of a query (no callback) announces each result set with `fields` (before
 * its rows; undefined for a statement without a result set, whose header follows as a
 * `result` without an index), each row with `result` and its set's index, and the end of
 * the answer with `end`, after `error` when a statement failed. A connection error reaches
 * a streaming query only through its connection's `error` event, hence the listener for
 * the time of the batch. Any other number of results than statements sent is an error (a
 * statement held a `;` of its own).
 *
 * `asText`: every column reads as its text, through asText only where mysql2 would not read
 * it as text by itself (see plainText()), as single statements are read (#textRows): the
 * hook costs mysql2 a call and a closure per column. mysql2 announces a result set's columns
 * (`fields`) before it builds the reader of its rows from the query's options, so the hook
 * is switched on or off there, for that result set alone.
 */
function streamBatch(
  conn: PoolConnection,
  text: string,
  n: number,
  onResult: BatchResultHandler | undefined,
  asText: boolean,
): Promise<Row[][]> {
  // mysql2's typings give a pool connection's `connection` the promise API; it is the core one.
  const core = conn.connection as unknown as CoreConnection;
  return new Promise((resolve, reject) => {
    const results: Row[][] = [];
    let current: Row[] | undefined;
    let failed = false;
    const complete = (): void => {
      if (current === undefined) return;
      results.push(current);
      const rows = current;
      current = undefined;
      if (results.length > n || onResult === undefined) return;
      try {
        onResult(results.length - 1, rows);
      } catch (err) {
        fail(err); // the handler's bug, not the server's: the batch fails (the rest is read and dropped)
      }
    };
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      core.removeListener('error', fail);
      reject(err instanceof Error ? err : new Error(errorMessage(err)));
    };
    core.on('error', fail);
    const q = asText ? core.query({ sql: text, typeCast: asText, ...AS_IS }) : core.query(text);
    q.on('fields', (fields: unknown) => {
      complete();
      current = [];
      if (asText) readAsText(q, !plainText(fields));
    });
    q.on('result', (row: unknown, index?: number) => {
      if (index !== undefined) current?.push(row as Row);
    });
    q.on('error', fail);
    q.on('end', () => {
      if (failed) return;
      complete();
      core.removeListener('error', fail);
      if (results.length === n) resolve(results);
      else fail(new DbQueryError(`statement batch: expected ${n} results, got ${results.length}`));
    });
  });
}

/**
 * Whether the rows of the result set whose columns mysql2 has just announced read through
 * asText: the query's options as mysql2 holds them while it runs (set when the query starts;
 * the row reader is built from them right after `fields`). Without them the query keeps the
 * asText it was sent with.
 */
function readAsText(q: object, hook: boolean): void {
  const options = (q as { options?: { typeCast?: unknown } }).options;
  if (typeof options !== 'object' || options === null) return;
  // Undefined rather than deleted: mysql2 reads both alike, and the object keeps its shape.
  options.typeCast = hook ? asText : undefined;
}

/** End a generation's pools (errors ignored: the connections are being let go). */
async function endPools(gen: Generation): Promise<void> {
  gen.idle.close();
  await Promise.all([gen.pool.end().catch(() => undefined), gen.batch?.end().catch(() => undefined)]);
}

/** mysql2's error for a connection not made within connectTimeout. */
function isConnectTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === 'ETIMEDOUT';
}
