import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DATABASES_QUERY, DOMAIN, TABLES_QUERY, databaseList, registration } from './info_schema_tables.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';

/** A MySQL 8.0 information_schema.tables row after the query's ifnull()s (a view: no VERSION NULLs). */
const table = (schema: string, name: string, over: Partial<Row> = {}): Row => ({
  TABLE_SCHEMA: schema,
  TABLE_NAME: name,
  TABLE_TYPE: 'BASE TABLE',
  ENGINE: 'InnoDB',
  VERSION: '10',
  ROW_FORMAT: 'Dynamic',
  TABLE_ROWS: '5',
  DATA_LENGTH: '16384',
  INDEX_LENGTH: '0',
  DATA_FREE: '0',
  CREATE_OPTIONS: '',
  ...over,
});

function server(tables: Record<string, Row[]>): FakeDb {
  return new FakeDb('8.0.36', (sql, params) => {
    if (sql === DATABASES_QUERY) return Object.keys(tables).map((SCHEMA_NAME) => ({ SCHEMA_NAME }));
    assert.equal(sql, TABLES_QUERY);
    return tables[String(params[0])] ?? [];
  });
}

void describe(DOMAIN, () => {
  void it('per table: version with its descriptive labels, rows, and three size components', async () => {
    const r = await scrapeWith(registration, server({ shop: [table('shop', 'orders')] }));
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      'mysql_info_schema_table_version{schema="shop",table="orders",type="BASE TABLE",engine="InnoDB",row_format="Dynamic",create_options=""} 10',
      'mysql_info_schema_table_rows{schema="shop",table="orders"} 5',
      'mysql_info_schema_table_size{schema="shop",table="orders",component="data_length"} 16384',
      'mysql_info_schema_table_size{schema="shop",table="orders",component="index_length"} 0',
      'mysql_info_schema_table_size{schema="shop",table="orders",component="data_free"} 0',
    ]);
    assert.ok(r.values.every((v) => v.type === MetricType.Gauge));
    assert.equal(
      helps(r.values).get('mysql_info_schema_table_version'),
      "The version number of the table's .frm file",
    );
  });

  void it('`*` reads the schema list (system schemas left out in SQL), then one query per schema', async () => {
    const db = server({
      a: [table('a', 't1')],
      b: [table('b', 'v', { TABLE_TYPE: 'VIEW', ENGINE: 'NONE' })],
    });
    const r = await scrapeWith(registration, db);
    assert.match(DATABASES_QUERY, /NOT IN \('mysql', 'performance_schema', 'information_schema', 'sys'\)/);
    assert.deepEqual(
      db.queries.map((q) => q.params),
      [[], ['a'], ['b']],
    );
    assert.equal(r.values.length, 10);
    assert.ok(lines(r.values).some((l) => l.includes('type="VIEW",engine="NONE"')));
  });

  void it('option databases: the comma-separated list as given, no schema list query', async () => {
    const db = server({ shop: [table('shop', 'orders')] });
    const r = await scrapeWith(registration, db, { databases: 'shop,missing' });
    assert.deepEqual(
      db.queries.map((q) => q.params),
      [['shop'], ['missing']],
    );
    assert.equal(r.values.length, 5);
    assert.deepEqual(databaseList('a, b'), ['a', ' b']);
    assert.equal(databaseList('*'), undefined);
  });

  void it('a size that is not an unsigned integer stops the scrape; tables before it stay', async () => {
    const r = await scrapeWith(
      registration,
      server({
        shop: [table('shop', 'ok'), table('shop', 'bad', { DATA_FREE: 'x' }), table('shop', 'later')],
      }),
    );
    assert.equal(r.values.length, 5);
    assert.match(r.error?.message ?? '', /column DATA_FREE/);
  });

  void it('an unknown option is refused at preparation', async () => {
    await assert.rejects(
      scrapeWith(registration, server({}), { database: 'x' }),
      /unknown option database; valid options: databases/,
    );
  });
});
