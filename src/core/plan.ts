/**
 * Plan model. Plans are plain data: a map of levels, each with a
 * frequency and the domains it collects.
 */

export interface DomainPlan {
  /** Metric names as written in the plan (collectors lowercase them as they need). */
  metrics: string[];
  /** Option values, already interpolated when the plan is activated. */
  options: Record<string, string>;
  /** Error name → policy string, e.g. `access-denied: "ignore,drop,retry"`. */
  errors: Record<string, string>;
}

export interface Level {
  name: string;
  /** Go duration text as written, e.g. `5s`. */
  freq: string;
  /** Parsed `freq` in milliseconds (may be fractional). */
  freqMs: number;
  collect: Record<string, DomainPlan>;
}

export interface Plan {
  name: string;
  /** file path, table name, or `sonde` for built-ins */
  source: string;
  levels: Record<string, Level>;
}

/** The four monitor states used by plan changing. */
export type LevelState = 'offline' | 'standby' | 'read-only' | 'active';
export const LEVEL_STATES: readonly LevelState[] = ['offline', 'standby', 'read-only', 'active'];
