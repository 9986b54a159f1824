/**
 * The database contract that collectors use. Implemented in db/ on top of mysql2.
 */

/** A result row: every column read as text (NULL stays null). */
export type Row = Record<string, string | null>;

export type Flavor = 'mysql' | 'mariadb';

/** Detected once per connection pool (domains.md §0.6). */
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
}

/** A MySQL error as collectors see it: the server's errno when there is one. */
export interface DbError extends Error {
  errno?: number;
  code?: string;
  sqlState?: string;
}

export interface Db {
  /** Run one statement, rows as text. Rejects with a DbError (password never in the text). */
  query(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]>;
  /** Flavor and version of the server, detected once per connection pool. */
  serverInfo(opts?: QueryOptions): Promise<ServerInfo>;
  /** Open a connection and ping it. */
  ping(opts?: QueryOptions): Promise<void>;
}
