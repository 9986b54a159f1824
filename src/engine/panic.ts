/**
 * Which failures are panics: a programming error in sonde's code (or a plugin's), as
 * opposed to the failures a collector or a sink is expected to meet.
 *
 * Expected, never a panic:
 * - a typed `CollectError` (the collector contract);
 * - anything carrying a database or system error's fields: a numeric `errno` (MySQL error
 *   numbers from mysql2, negative system error numbers from Node), a `sqlState`, or a
 *   `syscall` (socket and file errors) — on the error itself or on its `cause`, so a
 *   wrapper such as fetch's `TypeError: fetch failed` around `ECONNREFUSED` stays a network
 *   error;
 * - any other `Error` whose class is not one of the ones below (plain `Error`, driver and
 *   SDK error classes, `DOMException` for aborts and timeouts).
 *
 * A panic:
 * - a thrown value that is not an `Error` at all (a string, a number, an object, undefined);
 * - a `TypeError`, `RangeError`, `ReferenceError`, `SyntaxError`, `EvalError` or `URIError`
 *   without those fields: what JavaScript throws for a bug (reading a property of undefined,
 *   calling a non-function, an invalid array length…), and what Node's own argument checks
 *   throw (`ERR_INVALID_ARG_TYPE`).
 */
import { CollectError } from '../core/collector.js';

const BUG_CLASSES: readonly (new (...args: never[]) => Error)[] = [
  TypeError,
  RangeError,
  ReferenceError,
  SyntaxError,
  EvalError,
  URIError,
];

/** The error (or its cause) carries a database or system error's fields. */
function hasDriverFields(err: unknown): boolean {
  for (const e of [err, (err as { cause?: unknown } | null | undefined)?.cause]) {
    if (typeof e !== 'object' || e === null) continue;
    const f = e as { errno?: unknown; sqlState?: unknown; syscall?: unknown };
    if (typeof f.errno === 'number' || typeof f.sqlState === 'string' || typeof f.syscall === 'string')
      return true;
  }
  return false;
}

/** Whether `err` is a programming error rather than an expected failure (see the file comment). */
export function isPanic(err: unknown): boolean {
  if (err instanceof CollectError) return false;
  if (!(err instanceof Error)) return true;
  if (hasDriverFields(err)) return false;
  return BUG_CLASSES.some((c) => err instanceof c);
}

/** A panic as one line of text: `TypeError: …`, or the thrown value for a non-Error. */
export function panicText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  let shown: string;
  try {
    shown = typeof err === 'string' ? JSON.stringify(err) : (JSON.stringify(err) ?? String(err));
  } catch {
    shown = String(err); // a cycle, a BigInt
  }
  if (shown.length > 200) shown = `${shown.slice(0, 200)}…`;
  return `non-error value thrown: ${shown}`;
}
