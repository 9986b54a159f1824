/**
 * Go duration text: parsing (config freqs, afters, timeouts) and formatting (status texts).
 */

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5
  μs: 1e3, // U+03BC
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const PART = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Parse a Go duration (`1.5s`, `1m30s`, `0`, `-2ms`) into milliseconds.
 * Throws `time: invalid duration "<s>"` (or missing unit) like Go does.
 */
export function parseDuration(text: string): number {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new Error(`time: invalid duration "${text}"`);
  let ns = 0;
  while (s.length > 0) {
    const m = PART.exec(s);
    if (!m) {
      if (/^(\d+\.?\d*|\.\d+)$/.test(s)) throw new Error(`time: missing unit in duration "${text}"`);
      throw new Error(`time: invalid duration "${text}"`);
    }
    const num = m[1] ?? '';
    const unit = m[2] ?? '';
    ns += Number.parseFloat(num) * (UNIT_NS[unit] ?? NaN);
    s = s.slice(m[0].length);
  }
  return (sign * ns) / 1e6;
}

/** True when `text` parses as a Go duration. */
export function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

/** `v / 10^prec` (both integers) with the fraction's trailing zeros dropped: `2.5`, `3`. */
function frac(v: number, prec: number): string {
  const p = 10 ** prec;
  const int = Math.floor(v / p);
  let rest = v % p;
  if (rest === 0) return String(int);
  let digits = prec;
  while (rest % 10 === 0) {
    rest /= 10;
    digits--;
  }
  return `${int}.${String(rest).padStart(digits, '0')}`;
}

/** Format milliseconds as Go's Duration.String(): `0s`, `850ns`, `12.5µs`, `2.249204ms`, `1m0s`. */
export function formatDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  const neg = ns < 0;
  if (neg) ns = -ns;
  let out: string;
  if (ns < 1e3) out = `${ns}ns`;
  else if (ns < 1e6) out = `${frac(ns, 3)}µs`;
  else if (ns < 1e9) out = `${frac(ns, 6)}ms`;
  else {
    const h = Math.floor(ns / 3600e9);
    const m = Math.floor((ns % 3600e9) / 60e9);
    const s = frac(ns % 60e9, 9);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}
