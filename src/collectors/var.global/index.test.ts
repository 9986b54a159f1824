import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionSpec } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { createDb, type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { VarGlobalCollector, buildVarQuery, help, varValues } from './index.js';

void describe('var.global queries and rows', () => {
  void it('select: one column per variable, names lowercased', () => {
    assert.deepEqual(buildVarQuery('select', ['max_connections', 'Read_Only']), {
      source: 'select',
      sql: 'SELECT @@GLOBAL.max_connections AS v0, @@GLOBAL.read_only AS v1',
      params: [],
      names: ['max_connections', 'read_only'],
    });
  });

  void it('select refuses names that are not plain identifiers', () => {
    assert.throws(
      () => buildVarQuery('select', ['max-connections']),
      /invalid variable name for select source: max-connections/,
    );
  });

  void it('pfs and show bind the names', () => {
    assert.deepEqual(buildVarQuery('pfs', ['A', 'b']), {
      source: 'pfs',
      sql: 'SELECT variable_name, variable_value FROM performance_schema.global_variables WHERE variable_name IN (?, ?)',
      params: ['a', 'b'],
      names: ['a', 'b'],
    });
    assert.equal(buildVarQuery('show', ['x']).sql, 'SHOW GLOBAL VARIABLES WHERE variable_name IN (?)');
    assert.equal(buildVarQuery('all', []).sql, 'SHOW GLOBAL VARIABLES');
  });

  void it('select rows: NULL and text values are skipped without shifting the others', () => {
    const q = buildVarQuery('select', ['init_file', 'sql_mode', 'max_connections', 'read_only']);
    const values = varValues(q, [
      { v0: null, v1: 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION', v2: '151', v3: 'OFF' },
    ]);
    assert.deepEqual(values, [
      { name: 'max_connections', value: 151, type: MetricType.Gauge },
      { name: 'read_only', value: 0, type: MetricType.Gauge },
    ]);
  });

  void it('pfs rows from MySQL (upper-case columns) are read by name', () => {
    const q = buildVarQuery('pfs', ['max_connections', 'innodb_buffer_pool_size']);
    const values = varValues(q, [
      { VARIABLE_NAME: 'innodb_buffer_pool_size', VARIABLE_VALUE: '134217728' },
      { VARIABLE_NAME: 'max_connections', VARIABLE_VALUE: '151' },
    ]);
    assert.deepEqual(values, [
      { name: 'innodb_buffer_pool_size', value: 134217728, type: MetricType.Gauge },
      { name: 'max_connections', value: 151, type: MetricType.Gauge },
    ]);
  });

  void it('auto on MySQL falls back from select to pfs', async () => {
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.startsWith('SELECT @@GLOBAL')) {
        throw Object.assign(new Error("Unknown system variable 'nope'"), { errno: 1193 });
      }
      return [{ VARIABLE_NAME: 'max_connections', VARIABLE_VALUE: '10' }];
    });
    const c = new VarGlobalCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'var.global': { metrics: ['max_connections', 'nope'] } } }), NO_SIGNAL);
    assert.equal(c.sourceFor('l'), 'pfs');
    assert.deepEqual((await c.collect('l', NO_SIGNAL)).values, [
      { name: 'max_connections', value: 10, type: MetricType.Gauge },
    ]);
  });

  void it('source pfs on MySQL 5.7.5: the source table knows it is absent and says so', async () => {
    const db = new FakeDb('5.7.5', () => {
      throw Object.assign(new Error("Table 'performance_schema.global_variables' doesn't exist"), {
        errno: 1146,
      });
    });
    const c = new VarGlobalCollector({ monitorId: 'm', db });
    await assert.rejects(
      c.prepare(planOf({ l: { 'var.global': { metrics: ['x'], options: { source: 'pfs' } } } }), NO_SIGNAL),
      /^Error: source pfs is not supported on mysql 5\.7\.5: performance_schema\.global_variables exists only in MySQL 5\.7\.6 and later \(Table/,
    );
  });

  void it('auto tries only the sources the table lists: no pfs on MariaDB', async () => {
    const db = new FakeDb('10.11.6-MariaDB', (sql) => {
      if (sql.startsWith('SELECT @@GLOBAL'))
        throw Object.assign(new Error('Unknown system variable'), { errno: 1193 });
      return [{ Variable_name: 'max_connections', Value: '10' }];
    });
    const c = new VarGlobalCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'var.global': { metrics: ['max_connections', 'nope'] } } }), NO_SIGNAL);
    assert.equal(c.sourceFor('l'), 'show');
    assert.ok(!db.queries.some((q) => q.sql.includes('performance_schema')));
  });

  void it('for the mysqld_exporter emulation, reads keywords as it does from every source and keeps text', async () => {
    const keepText = new Set(['version', 'version_comment']);
    const db = new FakeDb('8.0.36', (sql) =>
      sql.startsWith('SELECT @@GLOBAL')
        ? [{ v0: 'ON', v1: '8.0.36', v2: '151' }]
        : [
            { Variable_name: 'read_only', Value: 'off' },
            { Variable_name: 'version', Value: '8.0.36' },
            { Variable_name: 'version_comment', Value: 'MySQL Community Server - GPL' },
          ],
    );
    const c = new VarGlobalCollector({ monitorId: 'm', db, exporterReading: { keepText } });
    await c.prepare(
      planOf({
        sel: { 'var.global': { metrics: ['read_only', 'version', 'max_connections'] } },
        all: { 'var.global': { options: { all: 'yes' } } },
      }),
      NO_SIGNAL,
    );
    assert.deepEqual(await c.collect('sel', NO_SIGNAL), {
      values: [
        { name: 'read_only', value: 1, type: MetricType.Gauge },
        { name: 'max_connections', value: 151, type: MetricType.Gauge },
      ],
      text: { version: '8.0.36' },
    });
    assert.deepEqual(await c.collect('all', NO_SIGNAL), {
      values: [{ name: 'read_only', value: 0, type: MetricType.Gauge }],
      text: { version: '8.0.36', version_comment: 'MySQL Community Server - GPL' },
    });
  });

  void it('declares source and all with their effective defaults', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [
        ['source', 'auto', ['auto', 'select', 'pfs', 'show']],
        ['all', 'no', ['yes', 'no']],
      ],
    );
  });
});

void describe('var.global against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*']);
    await server.query('SET GLOBAL max_connections=123');
    db = createDb(
      new ConnectionSpec({
        username: 'mon',
        password: 'mon-pass-1',
        socket: server.socket,
        connectTimeoutMs: 5000,
        redactedDsn: `mon:...@unix(${server.socket})/`,
      }),
    );
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  async function collect(options: Record<string, string>, metrics: string[]) {
    const c = new VarGlobalCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'var.global': { metrics, options } } }), NO_SIGNAL);
    return { source: c.sourceFor('l'), result: await c.collect('l', NO_SIGNAL) };
  }

  const expected = [
    { name: 'max_connections', value: 123, type: MetricType.Gauge },
    { name: 'read_only', value: 0, type: MetricType.Gauge },
  ];

  void it('auto picks select and reads the value set with SET GLOBAL', async () => {
    const { source, result } = await collect({}, ['Max_Connections', 'read_only', 'sql_mode', 'init_file']);
    assert.equal(source, 'select');
    assert.deepEqual(result, { values: expected });
  });

  void it('source select', async () => {
    const { source, result } = await collect({ source: 'select' }, ['max_connections', 'read_only']);
    assert.equal(source, 'select');
    assert.deepEqual(result.values, expected);
  });

  void it('source show (all is ignored when a source is set)', async () => {
    const { source, result } = await collect({ source: 'show', all: 'yes' }, [
      'max_connections',
      'read_only',
      'sql_mode',
    ]);
    assert.equal(source, 'show');
    assert.deepEqual(result.values, expected);
  });

  void it('source pfs fails prepare with a clear error on MariaDB', async () => {
    await assert.rejects(
      collect({ source: 'pfs' }, ['max_connections']),
      /^Error: source pfs is not supported on mariadb 10\.11\.\d+: no performance_schema\.global_variables table \(.*global_variables.* doesn't exist\)$/,
    );
  });

  void it('auto falls back to show when select fails on an unknown variable', async () => {
    const { source, result } = await collect({ source: 'auto' }, ['max_connections', 'no_such_variable']);
    assert.equal(source, 'show');
    assert.deepEqual(result.values, [expected[0]]);
  });

  void it('an explicit select source with an unknown variable fails prepare', async () => {
    await assert.rejects(
      collect({ source: 'select' }, ['no_such_variable']),
      /source select failed: Unknown system variable/,
    );
  });

  void it('all: yes reads every numeric variable', async () => {
    const { source, result } = await collect({ all: 'yes' }, []);
    assert.equal(source, 'all');
    const names = result.values.map((v) => v.name);
    assert.ok(names.length > 200, `${names.length} values`);
    assert.ok(names.includes('max_connections'));
    assert.ok(!names.includes('sql_mode') && !names.includes('datadir'));
    assert.equal(result.values.find((v) => v.name === 'max_connections')?.value, 123);
    assert.ok(result.values.every((v) => v.type === MetricType.Gauge && v.name === v.name.toLowerCase()));
  });

  void it('refuses a plan without metrics', async () => {
    await assert.rejects(collect({}, []), /^Error: no metrics specified$/);
    await assert.rejects(collect({ source: 'show' }, []), /^Error: no metrics specified$/);
  });
});
