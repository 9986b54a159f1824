/**
 * The database contract that collectors use. Implemented in db/ on top of mysql2.
 */

/** A result row: every column read as text (NULL stays null). */
export type Row = Record<string, string | null>;

export type Flavor = 'mysql' | 'mariadb';

/** Detected once per connection pool: the server does not change flavor or version while connected. */
export interface ServerInfo {
  flavor: Flavor;
  /** [major, minor, patch]; [0,0,0] when unknown */
  version: [number, number, number];
  /** @@version as the server reports it */
  versionString: string;
}

export interface QueryOptions {
  /** Abort (and KILL the query on the server) when this fires. */
  signal?: AbortSignal;
  /** Per-query timeout in ms; the query is killed when it passes. */
  timeoutMs?: number;
  /**
   * Session variables the statement must run with, e.g. `{ lock_wait_timeout: 2 }`; `null`
   * means the server's global value (`= DEFAULT`). The pool sets on the connection only what
   * differs from what that connection already has, in one `SET SESSION` before the statement,
   * and statements without the variable get the pool's own value (or DEFAULT) back. Names are
   * MySQL identifiers; a value the server refuses fails the statement.
   */
  session?: Readonly<Record<string, SessionValue>>;
  /**
   * Have the server bound the statement too, by the time left (the signal's deadline, or
   * `timeoutMs`): MariaDB runs it as `SET STATEMENT max_statement_time=<s> FOR …`, MySQL
   * 5.7.8+ gets a `MAX_EXECUTION_TIME(<ms>)` hint on its SELECT. The server then ends the
   * statement itself at the deadline, even when no KILL can reach it (no free connection).
   * For read-only catalogue queries (information_schema), which can run long on servers
   * with very many tables.
   */
  serverTimeLimit?: boolean;
}

/** A session variable's value: a number, a text (sent quoted) or null for `DEFAULT`. */
export type SessionValue = number | string | null;

/** A MySQL error as collectors see it: the server's errno when there is one. */
export interface DbError extends Error {
  errno?: number;
  code?: string;
  sqlState?: string;
}

/**
 * Told one statement's rows of a batch (its index in the batch) as soon as the server has
 * sent its whole result set, while it still runs the statements after it. Each index is
 * told at most once, in order; a batch that fails later still rejects, after the earlier
 * statements were told. A statement must give one result set or none (not a CALL, no `;`
 * of its own): the result sets are matched to statements by their order alone, and a
 * batch answered with more or fewer of them rejects only at its end.
 */
export type BatchResultHandler = (index: number, rows: Row[]) => void;

export interface Db {
  /** Run one statement, rows as text. Rejects with a DbError (password never in the text). */
  query(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]>;
  /**
   * Run statements without parameters in one round trip (one multi-statement request, on a
   * connection kept for that alone), rows as text per statement, in order. Rejects with a
   * DbError when any statement fails (the server stops there) or when the answer does not
   * have one result per statement. `onResult`, when given, may be told each statement's rows
   * as soon as its result set is complete, while the server still runs the statements after
   * it (see BatchResultHandler); a Db that does not tell them answers all at the end.
   * Optional: a Db without it runs statements one by one.
   */
  queryBatch?(sqls: readonly string[], opts?: QueryOptions, onResult?: BatchResultHandler): Promise<Row[][]>;
  /** Flavor and version of the server, detected once per connection pool. */
  serverInfo(opts?: QueryOptions): Promise<ServerInfo>;
  /** Open a connection and ping it. */
  ping(opts?: QueryOptions): Promise<void>;
  /**
   * The distinct statement texts this pool has run (the first 2000), so the query analytics
   * domains recognise the digests of sonde's own statements. Optional: a wrapped Db may not
   * have it.
   */
  statementsRun?(): ReadonlySet<string>;
}

/** TLS material for a connection, files already read. */
export interface TlsSpec {
  ca?: string;
  cert?: string;
  key?: string;
  /** false when tls.skip-verify is set */
  rejectUnauthorized: boolean;
  /**
   * Whether the certificate must name the server (`servername`, else the host); default:
   * as rejectUnauthorized. False verifies the chain only (my.cnf `ssl-mode=VERIFY_CA`).
   */
  verifyIdentity?: boolean;
  /** hostname without port, for certificate verification */
  servername?: string;
  /** my.cnf `tls-server-name`: the name checked instead of the host */
  checkName?: string;
  /** Node's names: `TLSv1`, `TLSv1.1`, `TLSv1.2`, `TLSv1.3` */
  minVersion?: string;
  maxVersion?: string;
  /**
   * my.cnf `tls=preferred`: TLS (not verified) when the server offers it, a plain connection
   * when it does not.
   */
  preferred?: boolean;
}

/**
 * Where a connection's credentials come from. The config layer names the source without
 * touching the network; the db layer's credentials module resolves it when a connection is
 * made, and again when the server answers "access denied".
 */
export type CredentialSource =
  /** A username and password known from the config or my.cnf. */
  | { kind: 'static'; username: string; password: string }
  /** The password is the content of a file, read at every resolution. */
  | { kind: 'file'; username: string; path: string }
  /** An AWS Secrets Manager secret holding the password (and maybe the username). */
  | { kind: 'secret'; username: string; secretId: string; region: string; hostname: string }
  /** An Amazon RDS IAM authentication token signed for host:port. */
  | { kind: 'iam'; username: string; host: string; port: number; region: string; hostname: string };

/** TLS as the config chooses it: material from files, or Amazon RDS's CA bundle (`tls=rds`). */
export type TlsChoice = { name: string; spec: TlsSpec } | { name: 'rds'; rds: { servername: string } };

/** One monitor's connection as configured: everything but resolved credentials. */
export interface ConnectionSettings {
  credentials: CredentialSource;
  socket?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  tls?: TlsChoice | undefined;
  connectTimeoutMs: number;
  /** The address as configured (`hostname` or `socket`), for the redacted DSN. */
  hostname: string;
  /** my.cnf `enable-cleartext-plugin`: the password may be sent in clear text (over TLS only). */
  allowCleartextPasswords?: boolean;
}

/**
 * Everything needed to open connections to one monitor's server. The password lives in a
 * private field so the object never serialises it by accident.
 */
export class ConnectionSpec {
  readonly username: string;
  readonly socket: string | undefined;
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly tls: TlsSpec | undefined;
  readonly connectTimeoutMs: number;
  /** `<user>:...@tcp(host:port)/?params` or `<user>:...@unix(path)/?params` */
  readonly redactedDsn: string;
  /**
   * The server may ask for the password in clear text (`mysql_clear_password`, as RDS IAM
   * authentication does); it is then sent only over TLS. Off: such a request is refused.
   */
  readonly allowCleartextPasswords: boolean;
  readonly #password: string;
  readonly #cleartext: (() => Promise<string>) | undefined;

  constructor(args: {
    username: string;
    password: string;
    socket?: string | undefined;
    host?: string | undefined;
    port?: number | undefined;
    tls?: TlsSpec | undefined;
    connectTimeoutMs: number;
    redactedDsn: string;
    allowCleartextPasswords?: boolean;
    /**
     * The password to send when the server asks for it in clear text, made when a
     * connection opens (a token that expires); default: the password.
     */
    cleartextPassword?: () => Promise<string>;
  }) {
    this.username = args.username;
    this.#password = args.password;
    this.allowCleartextPasswords = args.allowCleartextPasswords === true;
    this.#cleartext = args.cleartextPassword;
    this.socket = args.socket;
    this.host = args.host;
    this.port = args.port;
    this.tls = args.tls;
    this.connectTimeoutMs = args.connectTimeoutMs;
    this.redactedDsn = args.redactedDsn;
  }

  password(): string {
    return this.#password;
  }

  /** The password for a cleartext request (only when allowCleartextPasswords). */
  cleartextPassword(): Promise<string> {
    return this.#cleartext ? this.#cleartext() : Promise.resolve(this.#password);
  }

  /** Same address and TLS, other credentials (password reload). */
  withCredentials(username: string, password: string): ConnectionSpec {
    return new ConnectionSpec({
      username,
      password,
      socket: this.socket,
      host: this.host,
      port: this.port,
      tls: this.tls,
      connectTimeoutMs: this.connectTimeoutMs,
      redactedDsn: this.redactedDsn,
      allowCleartextPasswords: this.allowCleartextPasswords,
      // the new password, not a token source made for the old credentials
    });
  }

  /** Same credentials and address, other TLS (`tls=preferred` against a server without TLS). */
  withTls(tls: TlsSpec | undefined): ConnectionSpec {
    return new ConnectionSpec({
      username: this.username,
      password: this.#password,
      socket: this.socket,
      host: this.host,
      port: this.port,
      tls,
      connectTimeoutMs: this.connectTimeoutMs,
      redactedDsn: this.redactedDsn,
      allowCleartextPasswords: this.allowCleartextPasswords,
      ...(this.#cleartext === undefined ? {} : { cleartextPassword: this.#cleartext }),
    });
  }

  toJSON(): Record<string, unknown> {
    return { dsn: this.redactedDsn };
  }
}
