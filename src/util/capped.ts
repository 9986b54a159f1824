/**
 * Collections for caches of a small, stable set of keys (variable names, metric names,
 * statements): past `limit` entries they start over, so an unforeseen stream of new keys
 * costs some recomputing, never unbounded memory. Reads are the built-in ones.
 */

/** A Map that is emptied when a new key would take it past `limit` entries. */
export class CappedMap<K, V> extends Map<K, V> {
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override set(key: K, value: V): this {
    if (this.size >= this.#limit && !this.has(key)) this.clear();
    return super.set(key, value);
  }
}

/** A Set that is emptied when a new value would take it past `limit` entries. */
export class CappedSet<T> extends Set<T> {
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override add(value: T): this {
    if (this.size >= this.#limit && !this.has(value)) this.clear();
    return super.add(value);
  }
}
