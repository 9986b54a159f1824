import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { upstreamValues } from '../../db/values.js';
import { VariableReader, variableValues } from './common.js';

const typeOf = (name: string): MetricType =>
  name === 'threads_running' ? MetricType.Gauge : MetricType.CumulativeCounter;
const KEEP: ReadonlySet<string> = new Set(['version', 'wsrep_local_state_uuid', 'numeric_kept']);

/** Rows as SHOW GLOBAL STATUS / VARIABLES give them, with every kind of value the exporter meets. */
function rows(): Row[] {
  return [
    { Variable_name: 'Threads_running', Value: '3' },
    { Variable_name: 'Uptime', Value: '12345' },
    { Variable_name: 'Bytes_sent', Value: '1.5e+06' },
    { Variable_name: 'Neg', Value: '-4' },
    { Variable_name: 'Slave_running', Value: 'OFF' },
    { Variable_name: 'Wsrep_ready', Value: 'On' },
    { Variable_name: 'Wsrep_cluster_status', Value: 'Primary' },
    { Variable_name: 'Wsrep_connected', Value: 'non-Primary' },
    { Variable_name: 'Rpl_status', Value: 'AUTH_MASTER' },
    { Variable_name: 'Ssl_server_not_after', Value: 'Apr 10 12:00:00 2034 GMT' },
    { Variable_name: 'version', Value: '10.11.6-MariaDB' },
    { Variable_name: 'wsrep_local_state_uuid', Value: 'abc-123' },
    { Variable_name: 'numeric_kept', Value: '7' },
    { Variable_name: 'Empty', Value: '' },
    { Variable_name: 'Null', Value: null },
    { Variable_name: '', Value: '9' },
    { Variable_name: 'Huge', Value: '18446744073709551615' },
  ];
}

/** The two-pass reading the reader replaces: upstreamValues, then variableValues. */
function twoPass(
  input: Row[],
  wanted?: (name: string) => boolean,
): { values: MetricValue[]; text: Record<string, string> } {
  const text: Record<string, string> = {};
  upstreamValues(input, KEEP, text);
  return { values: variableValues(input, typeOf, wanted), text };
}

void describe('VariableReader (the exporter reading of SHOW rows)', () => {
  void it('reads every row as upstreamValues then variableValues do, scrape after scrape', () => {
    const reader = new VariableReader(typeOf, KEEP);
    for (let scrape = 0; scrape < 3; scrape++) {
      const text: Record<string, string> = {};
      const values = reader.read(rows(), text);
      assert.deepEqual({ values, text }, twoPass(rows()));
    }
    const text: Record<string, string> = {};
    const values = reader.read(rows(), text);
    assert.deepEqual(values.find((v) => v.name === 'wsrep_ready')?.value, 1);
    assert.deepEqual(values.find((v) => v.name === 'wsrep_connected')?.value, 0);
    assert.deepEqual(values.find((v) => v.name === 'numeric_kept')?.value, 7);
    assert.equal(
      values.find((v) => v.name === 'rpl_status'),
      undefined,
    );
    assert.deepEqual(text, {
      version: '10.11.6-MariaDB',
      wsrep_local_state_uuid: 'abc-123',
      numeric_kept: '7',
    });
  });

  void it('reads changed values, moved rows and fewer rows right after reading others', () => {
    const reader = new VariableReader(typeOf, KEEP);
    const check = (input: Row[]): void => {
      const text: Record<string, string> = {};
      const values = reader.read(input, text);
      assert.deepEqual({ values, text }, twoPass(input.map((r) => ({ ...r }))));
    };
    check(rows());
    check(rows().map((r) => (r.Variable_name === 'Uptime' ? { ...r, Value: '12346' } : r)));
    check(rows().map((r) => (r.Variable_name === 'Slave_running' ? { ...r, Value: 'ON' } : r)));
    check([...rows()].reverse());
    check(rows().slice(3));
    check(rows());
    check([]);
    check(rows().map((r) => (r.Variable_name === 'Neg' ? { ...r, Value: 'x' } : r)));
  });

  void it('keeps only the wanted names as values, and kept texts whatever is wanted', () => {
    const names = new Set(['uptime', 'slave_running']);
    const wanted = (name: string): boolean => names.has(name);
    const reader = new VariableReader(typeOf, KEEP, names);
    const text: Record<string, string> = {};
    const values = reader.read(rows(), text);
    assert.deepEqual({ values, text }, twoPass(rows(), wanted));
    assert.deepEqual(
      values.map((v) => v.name),
      ['uptime', 'slave_running'],
    );
  });

  void it('finds the columns whatever their case', () => {
    const upper = rows().map((r) => ({ VARIABLE_NAME: r.Variable_name ?? null, VALUE: r.Value ?? null }));
    const text: Record<string, string> = {};
    const values = new VariableReader(typeOf, KEEP).read(upper, text);
    assert.deepEqual({ values, text }, twoPass(rows()));
    assert.deepEqual(new VariableReader(typeOf, KEEP).read([], {}), []);
  });
});

void describe('VariableReader (sonde reading of SHOW rows, no kept texts)', () => {
  const check = (reader: VariableReader, input: Row[], wanted?: (name: string) => boolean): void => {
    const values = reader.read(input);
    assert.deepEqual(values, variableValues(input, typeOf, wanted));
  };

  void it('gives what variableValues gives, read after read, changed, moved and missing rows alike', () => {
    const reader = new VariableReader(typeOf, undefined);
    check(reader, rows());
    check(reader, rows());
    check(
      reader,
      rows().map((r) => (r.Variable_name === 'Uptime' ? { ...r, Value: '12346' } : r)),
    );
    check(
      reader,
      rows().map((r) => (r.Variable_name === 'Slave_running' ? { ...r, Value: 'ON' } : r)),
    );
    check(reader, [...rows()].reverse());
    check(reader, rows().slice(3));
    check(reader, rows());
    check(reader, []);
    check(
      reader,
      rows().map((r) => (r.Variable_name === 'Neg' ? { ...r, Value: 'x' } : r)),
    );
    check(
      reader,
      rows().map((r) => (r.Variable_name === 'Null' ? { ...r, Value: '5' } : r)),
    );
    // Keyword values are read as parseValue reads them (case-sensitive), not as the exporter does.
    const values = reader.read(rows());
    assert.equal(
      values.find((v) => v.name === 'wsrep_ready'),
      undefined,
    );
    assert.equal(values.find((v) => v.name === 'slave_running')?.value, 0);
  });

  void it('makes new values each read (values kept across collections would die old)', () => {
    const reader = new VariableReader(typeOf, undefined);
    const first = reader.read(rows());
    const second = reader.read(rows());
    assert.deepEqual(first, second);
    assert.ok(first.every((v, i) => v !== second[i] && !Object.isFrozen(v)));
  });

  void it('shares name tables only between readers of the same list and kept texts', () => {
    // Readers share what they work out per name when type, kept texts and wanted list agree;
    // readers differing in any of them must each still give their own reading.
    const one = new Set(['uptime']);
    const other = new Set(['threads_running', 'uptime']);
    const sameAsOther = new Set(['uptime', 'threads_running']);
    const readers: [VariableReader, ReadonlySet<string> | undefined][] = [
      [new VariableReader(typeOf, undefined, one), one],
      [new VariableReader(typeOf, undefined, other), other],
      [new VariableReader(typeOf, undefined, sameAsOther), sameAsOther],
      [new VariableReader(typeOf, undefined), undefined],
    ];
    const kept = new VariableReader(typeOf, KEEP, one);
    for (const [reader, names] of readers) {
      check(reader, rows(), names === undefined ? undefined : (name) => names.has(name));
    }
    const text: Record<string, string> = {};
    const keptValues = kept.read(rows(), text);
    assert.deepEqual(
      { values: keptValues, text },
      twoPass(rows(), (name) => one.has(name)),
    );
    assert.deepEqual(
      [...readers.map(([reader]) => reader.read(rows()).length), keptValues.length],
      [1, 2, 2, variableValues(rows(), typeOf).length, 1],
    );
  });

  void it('keeps only the wanted names, and finds the columns whatever their case', () => {
    const names = new Set(['uptime', 'threads_running']);
    const wanted = (name: string): boolean => names.has(name);
    check(new VariableReader(typeOf, undefined, names), rows(), wanted);
    const upper = rows().map((r) => ({ VARIABLE_NAME: r.Variable_name ?? null, VALUE: r.Value ?? null }));
    assert.deepEqual(new VariableReader(typeOf, undefined).read(upper), variableValues(rows(), typeOf));
  });
});
