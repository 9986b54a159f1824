/**
 * The shape most collectors share: one query per plan level, built in prepare() from the
 * level's metrics and options; the source checked once against the source table
 * (sources.ts); collect() runs the level's query and turns the rows into values. A level
 * that does not list the domain collects nothing; a query failure is returned as data
 * (with its errno) for the engine's error policies.
 */
import type { CollectError, CollectResult, Collector, CollectorContext } from '../../core/collector.js';
import type { Db, Row } from '../../core/db.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import { CatalogueReader, mapLevels, queryError } from './common.js';
import { prepareSource } from './sources.js';
import { sharedText } from '../../util/text.js';

export interface LevelQuery {
  sql: string;
  params?: readonly unknown[];
}

export abstract class PerLevelQueryCollector<Q extends LevelQuery> implements Collector {
  abstract readonly domain: string;
  /** The source table's key for the one source this collector reads. */
  protected abstract readonly source: string;
  protected readonly db: Db;
  /** A catalogue query (information_schema), read through a CatalogueReader. */
  protected readonly catalogue: boolean = false;
  #reader: CatalogueReader | undefined;
  #levels = new Map<string, Q>();
  /** Set in prepare() when the source table says this server cannot serve the domain. */
  #unsupported: CollectError | undefined;

  constructor(ctx: CollectorContext) {
    this.db = ctx.db;
  }

  /** Build one level's query from its part of the plan; throw to refuse the plan. */
  protected abstract buildQuery(dp: DomainPlan): Q;

  /** Turn the rows of a level's query into values (and, optionally, an error). */
  protected abstract toResult(rows: Row[], q: Q): CollectResult;

  /** A failed query as collection data; override to name a policy or add context. */
  protected queryFailure(err: unknown, _q: Q): CollectError {
    return queryError(err);
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, this.domain, (dp) => {
      const q = this.buildQuery(dp);
      q.sql = sharedText(q.sql); // every monitor of the plan builds the same statement
      return q;
    });
    this.#reader = undefined; // results of the previous plan's queries are not kept
    this.#unsupported = undefined;
    if (this.#levels.size === 0) return;
    const prepared = await prepareSource(this.db, this.domain, signal);
    this.#unsupported = prepared.unsupported;
    if (prepared.unsupported === undefined && !prepared.sources.includes(this.source))
      throw new Error(`${this.domain}: source ${prepared.sources.join(',')} is not ${this.source}`);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const q = this.#levels.get(level);
    if (q === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    let rows: Row[];
    let stale: CollectError | undefined;
    try {
      if (this.catalogue) {
        this.#reader ??= new CatalogueReader(this.db);
        ({ rows, error: stale } = await this.#reader.read(q.sql, q.params ?? [], signal));
      } else rows = await this.db.query(q.sql, q.params ?? [], { signal });
    } catch (err) {
      return { values: [], error: this.queryFailure(err, q) };
    }
    const result = this.toResult(rows, q);
    return stale === undefined ? result : { ...result, error: stale };
  }
}
