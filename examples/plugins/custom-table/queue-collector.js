// @ts-check
/**
 * `custom.queue`: one gauge `depth` per row of an application table, with the row's name as
 * the group `queue`. By default it runs
 *
 *     SELECT `name` AS queue, `depth` AS depth FROM `app`.`queue_depth`
 *
 * and the options `table`, `name-column` and `value-column` pick another table or columns.
 * A NULL or non-numeric depth is left out (missing, not 0).
 */
/** @import { PluginApi, CollectorRegistration, CollectorHelp, Collector, CollectorContext, CollectResult, MetricValue, Plan } from 'sonde' */

const DOMAIN = 'custom.queue';
/** MySQL errors the help maps to a policy of its own, so a plan can choose what to do. */
const ER_TABLEACCESS_DENIED = 1142;
const ER_NO_SUCH_TABLE = 1146;

/**
 * The domain's static help: plan validation and GET /registered read it.
 * @param {PluginApi} api
 * @returns {CollectorHelp}
 */
function help(api) {
  return {
    domain: DOMAIN,
    description: 'Depth of the application queues, one gauge per row of a table of the application',
    sources: ['SELECT <name-column> AS queue, <value-column> AS depth FROM <table>'],
    options: [
      { name: 'table', description: 'The table to read (db.table)', default: 'app.queue_depth' },
      { name: 'name-column', description: 'Column naming the queue (group queue)', default: 'name' },
      { name: 'value-column', description: 'Column holding the depth', default: 'depth' },
    ],
    errors: [
      {
        name: 'table-missing',
        description: 'MySQL error 1146: the table does not exist',
        errnos: [ER_NO_SUCH_TABLE],
      },
      {
        name: 'access-denied',
        description: 'MySQL error 1142: the user may not SELECT from the table',
        errnos: [ER_TABLEACCESS_DENIED],
      },
    ],
    groups: [{ key: 'queue', description: 'The queue: the value of the name column' }],
    meta: [],
    metrics: [{ name: 'depth', type: api.MetricType.Gauge, description: 'Items waiting in the queue' }],
  };
}

const IDENT = /^[A-Za-z0-9_$]+$/;

/**
 * A backquoted identifier, or an error naming the option: names cannot be bound as query
 * parameters, so only plain identifiers are accepted.
 * @param {string} option
 * @param {string} text
 * @param {number} maxParts
 */
function quoted(option, text, maxParts) {
  const parts = text.split('.');
  if (parts.length > maxParts || !parts.every((p) => IDENT.test(p))) {
    throw new Error(
      `${DOMAIN}: option ${option}: ${JSON.stringify(text)} is not a plain ${maxParts > 1 ? 'db.table' : 'column'} name`,
    );
  }
  return parts.map((p) => `\`${p}\``).join('.');
}

/**
 * The query of one level, from the level's options.
 * @param {Record<string, string>} options
 */
function levelQuery(options) {
  const table = quoted('table', options.table ?? 'app.queue_depth', 2);
  const name = quoted('name-column', options['name-column'] ?? 'name', 1);
  const value = quoted('value-column', options['value-column'] ?? 'depth', 1);
  return `SELECT ${name} AS queue, ${value} AS depth FROM ${table}`;
}

/** @implements {Collector} */
class QueueCollector {
  domain = DOMAIN;
  /** @type {Map<string, string>} level → query */
  #queries = new Map();
  #ctx;
  #gauge;

  /**
   * @param {CollectorContext} ctx
   * @param {PluginApi} api
   */
  constructor(ctx, api) {
    this.#ctx = ctx;
    this.#gauge = api.MetricType.Gauge;
  }

  /**
   * Build each level's query; a bad option fails the plan.
   * @param {Plan} plan
   * @param {AbortSignal} _signal
   */
  async prepare(plan, _signal) {
    this.#queries.clear();
    for (const [name, level] of Object.entries(plan.levels)) {
      const dp = level.collect[DOMAIN];
      if (dp !== undefined) this.#queries.set(name, levelQuery(dp.options));
    }
  }

  /**
   * @param {string} level
   * @param {AbortSignal} signal
   * @returns {Promise<CollectResult>}
   */
  async collect(level, signal) {
    const sql = this.#queries.get(level);
    if (sql === undefined) return { values: [] };
    // A failed query rejects with the server's errno: the engine maps 1146/1142 to the
    // policies declared in the help.
    const rows = await this.#ctx.db.query(sql, [], { signal });
    /** @type {MetricValue[]} */
    const values = [];
    for (const row of rows) {
      const text = row.depth;
      const depth = text === null || text === undefined || text.trim() === '' ? NaN : Number(text);
      if (!Number.isFinite(depth)) continue; // missing, never 0
      values.push({ name: 'depth', value: depth, type: this.#gauge, group: { queue: row.queue ?? '' } });
    }
    return { values };
  }
}

/**
 * The registration, exactly the shape of a built-in collector's.
 * @param {PluginApi} api
 * @returns {CollectorRegistration}
 */
export function queueCollector(api) {
  return { help: help(api), create: (ctx) => new QueueCollector(ctx, api) };
}
