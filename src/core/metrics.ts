/**
 * The metric data model shared by collectors, the engine and sinks.
 */

/** Metric type codes, numerically identical to Blip's. */
export const MetricType = {
  Unknown: 0,
  CumulativeCounter: 1,
  DeltaCounter: 2,
  Gauge: 3,
  Bool: 4,
  Event: 5,
} as const;
export type MetricType = (typeof MetricType)[keyof typeof MetricType];

/** Human names used by --print-domains and docs. */
export const METRIC_TYPE_NAMES: Record<MetricType, string> = {
  0: 'unknown',
  1: 'cumulative counter',
  2: 'delta counter',
  3: 'gauge',
  4: 'bool',
  5: 'event',
};

/**
 * A Prometheus histogram or summary carried by one value (only the `exporter.*` domains
 * make them): `points` are [upper bound, cumulative count] for a histogram (the `+Inf`
 * bucket is `count` and is not listed) or [quantile, value] for a summary.
 */
export interface Distribution {
  kind: 'histogram' | 'summary';
  points: readonly (readonly [number, number])[];
  sum: number;
  count: number;
}

/** One value of one metric. `name` has no domain prefix. */
export interface MetricValue {
  name: string;
  value: number;
  type: MetricType;
  /** Identity labels: same name with another group is another series. */
  group?: Record<string, string>;
  /** Annotations, not identity. Reserved key `ts` = Unix milliseconds. */
  meta?: Record<string, string>;
  /** Set on histogram and summary values; `value` is then the count. */
  dist?: Distribution;
}

/** One collection of one plan level from one monitor: what sinks receive. */
export interface Metrics {
  begin: Date;
  end: Date;
  monitorId: string;
  plan: string;
  level: string;
  interval: number;
  state: string;
  /** domain → values, only domains that returned at least one value. */
  values: Record<string, MetricValue[]>;
}

/** Meta keys on innodb values that drive mysqld_exporter naming (INNODB_METRICS columns).
 * `subsystem` is always set by the innodb collector; `name`, `type` and `comment` only when it
 * reads for the mysqld_exporter emulation. */
export const INNODB_META = {
  /** SUBSYSTEM, as the server spells it (set by the innodb collector). */
  subsystem: 'subsystem',
  /** NAME, as the server spells it (`buffer_LRU_batch_flush_total_pages`). */
  name: 'name',
  /** TYPE: `counter`, `status_counter`, `value`, `set_owner`, `set_member`. */
  type: 'type',
  /** COMMENT: mysqld_exporter's HELP text. */
  comment: 'comment',
} as const;
