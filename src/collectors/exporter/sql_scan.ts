/**
 * Reading result columns into typed values the way mysqld_exporter's scrapers read them
 * (Go's database/sql conversions from the server's text): a string column refuses NULL, a
 * float column takes what Go's ParseFloat takes, an unsigned column only decimal digits within
 * its range. A value that does not convert is a scan error naming the column, and upstream
 * then stops the scrape at that row: callers read a whole row before they emit its samples.
 * Columns are found by name in any case, as upstream reads them by position.
 */
import { CollectError } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { parseGoFloat } from './common.js';

function scanError(column: string, why: string): CollectError {
  return new CollectError(`scan error on column ${column}: ${why}`);
}

/** The row's value of a column, found by name in any case (MySQL 8 answers some in capitals). */
function lookup(row: Row, column: string): string | null | undefined {
  if (column in row) return row[column];
  const lower = column.toLowerCase();
  const key = Object.keys(row).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : row[key];
}

function present(row: Row, column: string, into: string): string {
  const text = lookup(row, column);
  if (text === undefined) throw scanError(column, 'no such column in the result');
  if (text === null) throw scanError(column, `converting NULL to ${into} is unsupported`);
  return text;
}

/** A text column (NULL refused). */
export function scanString(row: Row, column: string): string {
  return present(row, column, 'string');
}

/** A float column: Go's ParseFloat syntax (NULL and other text refused). */
export function scanFloat(row: Row, column: string): number {
  const text = present(row, column, 'float64');
  const n = parseGoFloat(text);
  if (n === undefined) throw scanError(column, `converting "${text}" to a float64: invalid syntax`);
  return n;
}

const UINT_MAX: Readonly<Record<32 | 64, bigint>> = { 32: 0xffff_ffffn, 64: 0xffff_ffff_ffff_ffffn };

/** An unsigned column of 32 or 64 bits: decimal digits only, within range. */
export function scanUint(row: Row, column: string, bits: 32 | 64): number {
  const text = present(row, column, `uint${bits}`);
  if (!/^\d+$/.test(text)) throw scanError(column, `converting "${text}" to a uint${bits}: invalid syntax`);
  if (BigInt(text) > UINT_MAX[bits])
    throw scanError(column, `converting "${text}" to a uint${bits}: value out of range`);
  return Number(text);
}
