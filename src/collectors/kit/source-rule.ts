/**
 * The shape of one row of the source table (sources.ts). It stands alone so that the rules
 * of the exporter domains (exporter-sources.ts) can be typed without importing the table
 * that imports them.
 */
import type { Flavor } from '../../core/db.js';

/** One row of the table. The first row of a domain that matches the server wins. */
export interface SourceRule {
  flavor: Flavor;
  /** Inclusive lower bound `x.y.z`. */
  min?: string;
  /** Exclusive upper bound `x.y.z`. */
  below?: string;
  /** With a range: the rule also applies when the server version is unknown. */
  unknown?: boolean;
  /** The source key, or several tried in order, comma-separated. */
  source?: string;
  /** Why the domain cannot work there. */
  unsupported?: string;
  /** Sources of the domain this server lacks, with the reason (for options naming one). */
  absent?: Readonly<Record<string, string>>;
  /** What to tell the user when the source turns out to be missing at run time. */
  hint?: string;
}
