/**
 * Error policies: a plan's `errors:` maps an error name
 * to a policy string of comma-separated words, each classified by its value.
 */

/** A parsed error policy. */
export interface ErrorPolicy {
  /** `report` every time, `report-once` (first occurrence only) or `ignore` (no trace). */
  report: 'report' | 'report-once' | 'ignore';
  /** `drop` the values or emit them as `zero`. */
  metric: 'drop' | 'zero';
  /** `retry` (keep collecting) or `stop` (stop this domain until the plan is re-activated). */
  retry: 'retry' | 'stop';
}

/** The policy of an error that no plan names: `report,drop,retry`. */
export const DEFAULT_POLICY: Readonly<ErrorPolicy> = Object.freeze({
  report: 'report',
  metric: 'drop',
  retry: 'retry',
});

/**
 * Parse a policy string such as `ignore,drop,retry`. Word order does not matter, unknown
 * words are ignored (as in Blip), a missing part keeps its default, and when a part is given
 * twice the last word wins. Surrounding blanks are trimmed.
 */
export function parsePolicy(text: string): ErrorPolicy {
  const p: ErrorPolicy = { ...DEFAULT_POLICY };
  for (const raw of text.split(',')) {
    const word = raw.trim();
    switch (word) {
      case 'report':
      case 'report-once':
      case 'ignore':
        p.report = word;
        break;
      case 'drop':
      case 'zero':
        p.metric = word;
        break;
      case 'retry':
      case 'stop':
        p.retry = word;
        break;
      default:
        break; // unknown words are ignored
    }
  }
  return p;
}
