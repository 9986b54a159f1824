/**
 * The connections of one statements pool that sit idle in it, and the closing of all but the
 * most recently used one, IDLE_EXTRA_MS after two or more are idle.
 *
 * mysql2's pool does this itself (`maxIdle` below `connectionLimit`), but with a timer that
 * fires every second for the pool's whole life, busy or not. That wake-up was the only thing
 * an idle sonde did: about 0.9 ms of CPU per second on the test machine, more than a scrape
 * every 15 s costs. Here a timer runs only while there is something to close; the pools are
 * made with `maxIdle` equal to `connectionLimit`, so mysql2 closes nothing on its own.
 *
 * A connection is closed with its own `end()` (the pool's connections are made with
 * `gracefulEnd`): mysql2 takes it out of the pool and sends COM_QUIT, so the server counts
 * no aborted client. A connection that ends or fails while idle (the server's wait_timeout,
 * a network cut) leaves the set on its `end` or `error` event.
 */

/** What the set needs of mysql2's pool connection. */
export interface IdleConnection {
  end(): unknown;
  once(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** How long extra connections stay idle before they are closed, as mysql2's check every second. */
export const IDLE_EXTRA_MS = 1000;

export class IdleConnections {
  /** Idle now, least recently used first. */
  readonly #idle = new Set<IdleConnection>();
  /** Every connection taken from the pool once (the batch pool's are never here). */
  readonly #known = new WeakSet<IdleConnection>();
  readonly #afterMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(afterMs = IDLE_EXTRA_MS) {
    this.#afterMs = afterMs;
  }

  /** Connections idle now. */
  get size(): number {
    return this.#idle.size;
  }

  /** `conn` was taken from the pool. */
  taken(conn: IdleConnection): void {
    this.#idle.delete(conn);
    if (this.#known.has(conn)) return;
    this.#known.add(conn);
    const gone = (): void => {
      this.#idle.delete(conn);
    };
    conn.once('end', gone);
    conn.on('error', gone);
  }

  /** `conn` went back to the pool (not destroyed); connections never taken are ignored. */
  released(conn: IdleConnection): void {
    if (this.#closed || !this.#known.has(conn)) return;
    this.#idle.add(conn);
    if (this.#idle.size > 1 && this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#trim(), this.#afterMs);
      this.#timer.unref();
    }
  }

  /** The pool is ending: no more closing of its connections. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#idle.clear();
  }

  #trim(): void {
    this.#timer = undefined;
    for (const conn of this.#idle) {
      if (this.#idle.size <= 1) break;
      this.#idle.delete(conn);
      conn.end();
    }
  }
}
