import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { parseValue } from '../../db/values.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { GAUGES, StatusGlobalCollector, help, statusValues } from './index.js';

const byName = (values: MetricValue[]) => new Map(values.map((v) => [v.name, v]));

void describe('status.global from given rows', () => {
  const rows = [
    { Variable_name: 'Com_select', Value: '42' },
    { Variable_name: 'Threads_running', Value: '3' },
    { Variable_name: 'Ssl_cipher', Value: '' },
    { Variable_name: 'Max_memory_used', Value: 'NULL' },
    { Variable_name: 'Rpl_status', Value: 'AUTH_MASTER' },
    { Variable_name: 'Innodb_buffer_pool_dump_status', Value: 'Dumping of buffer pool not started' },
    { Variable_name: 'Open_tables', Value: '17' },
    { Variable_name: 'Slave_running', Value: 'OFF' },
    { Variable_name: 'Max_used_connections', Value: '9' },
  ];

  void it('keeps only the listed names, lowercased, in server order', () => {
    const values = statusValues(rows, {
      all: false,
      names: new Set(['threads_running', 'com_select', 'ssl_cipher']),
    });
    assert.deepEqual(values, [
      { name: 'com_select', value: 42, type: MetricType.CumulativeCounter },
      { name: 'threads_running', value: 3, type: MetricType.Gauge },
    ]);
  });

  void it('with all: yes keeps every row that parses', () => {
    const values = statusValues(rows, { all: true, names: new Set() });
    assert.deepEqual(
      values.map((v) => [v.name, v.value, v.type]),
      [
        ['com_select', 42, MetricType.CumulativeCounter],
        ['threads_running', 3, MetricType.Gauge],
        ['open_tables', 17, MetricType.CumulativeCounter],
        ['slave_running', 0, MetricType.CumulativeCounter],
        ['max_used_connections', 9, MetricType.Gauge],
      ],
    );
  });

  void it('declares exactly nine gauges', () => {
    assert.equal(GAUGES.size, 9);
    assert.ok(GAUGES.has('innodb_os_log_pending_writes'));
  });

  void it('declares the all option with effective default no', () => {
    assert.equal(help.domain, 'status.global');
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [['all', 'no', ['yes', 'no']]],
    );
  });
});

void describe('status.global for the mysqld_exporter emulation', () => {
  const ROWS = [
    { Variable_name: 'Threads_connected', Value: '2' },
    { Variable_name: 'wsrep_cluster_status', Value: 'non-Primary' },
    { Variable_name: 'Slave_running', Value: 'off' },
    { Variable_name: 'wsrep_local_state_uuid', Value: 'abc-123' },
    { Variable_name: 'Ssl_cipher', Value: 'TLS_AES_256_GCM_SHA384' },
  ];
  const plan = planOf({ l: { 'status.global': { options: { all: 'yes' } } } });

  void it('reads keywords as mysqld_exporter does and hands back the kept text values', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => ROWS.map((r) => ({ ...r })));
    const keepText = new Set(['wsrep_local_state_uuid']);
    const c = new StatusGlobalCollector({ monitorId: 'm', db, exporterReading: { keepText } });
    await c.prepare(plan, NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [
        { name: 'threads_connected', value: 2, type: MetricType.Gauge },
        { name: 'wsrep_cluster_status', value: 0, type: MetricType.CumulativeCounter },
        { name: 'slave_running', value: 0, type: MetricType.CumulativeCounter },
      ],
      text: { wsrep_local_state_uuid: 'abc-123' },
    });
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SHOW GLOBAL STATUS'],
    );
  });

  void it('asks the server for the listed metrics only; all: yes and the exporter read every row', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => ROWS.map((r) => ({ ...r })));
    const c = new StatusGlobalCollector({ monitorId: 'm', db });
    const listed = planOf({
      l: { 'status.global': { metrics: ['Threads_connected', 'slave_running'] } },
      a: { 'status.global': { options: { all: 'yes' } } },
    });
    await c.prepare(listed, NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    await c.collect('a', NO_SIGNAL);
    assert.deepEqual(
      db.queries.map((q) => [q.sql, q.params]),
      [
        ['SHOW GLOBAL STATUS WHERE Variable_name IN (?, ?)', ['threads_connected', 'slave_running']],
        ['SHOW GLOBAL STATUS', []],
      ],
    );
  });

  void it('reads values as Blip does without it: case-sensitive keywords, no text', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => ROWS.map((r) => ({ ...r })));
    const c = new StatusGlobalCollector({ monitorId: 'm', db });
    await c.prepare(plan, NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [{ name: 'threads_connected', value: 2, type: MetricType.Gauge }],
    });
  });
});

void describe('status.global against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', []);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  async function showStatus(): Promise<Map<string, string>> {
    const rows = await server.query('SHOW GLOBAL STATUS');
    return new Map(rows.map((r) => [String(r.Variable_name).toLowerCase(), String(r.Value)]));
  }

  void it('reports the values SHOW GLOBAL STATUS shows, with the right types', async () => {
    const c = new StatusGlobalCollector({ monitorId: 'm1', db });
    await c.prepare(
      planOf({
        kpi: {
          'status.global': {
            metrics: [
              'Max_used_connections',
              'innodb_buffer_pool_pages_total',
              'innodb_page_size',
              'innodb_rows_read',
            ],
          },
        },
      }),
      NO_SIGNAL,
    );
    const res = await c.collect('kpi', NO_SIGNAL);
    const shown = await showStatus();
    assert.equal(res.error, undefined);
    assert.deepEqual(res.values, [
      {
        name: 'innodb_buffer_pool_pages_total',
        value: Number(shown.get('innodb_buffer_pool_pages_total')),
        type: MetricType.Gauge,
      },
      { name: 'innodb_page_size', value: 16384, type: MetricType.CumulativeCounter },
      {
        name: 'max_used_connections',
        value: Number(shown.get('max_used_connections')),
        type: MetricType.Gauge,
      },
    ]);
    // 16M buffer pool of 16K pages; MariaDB has no Innodb_rows_read, silently absent.
    assert.ok(Number(shown.get('innodb_buffer_pool_pages_total')) > 0);
  });

  void it('sees com_select grow by exactly the SELECTs run on another connection', async () => {
    const c = new StatusGlobalCollector({ monitorId: 'm1', db });
    await c.prepare(planOf({ kpi: { 'status.global': { metrics: ['com_select'] } } }), NO_SIGNAL);
    const first = byName((await c.collect('kpi', NO_SIGNAL)).values).get('com_select');
    for (let i = 0; i < 7; i++) await server.query('SELECT ? AS n', [i]);
    const second = byName((await c.collect('kpi', NO_SIGNAL)).values).get('com_select');
    assert.equal(first?.type, MetricType.CumulativeCounter);
    assert.equal((second?.value ?? 0) - (first?.value ?? 0), 7);
  });

  void it('with all: yes reports every numeric row and no text rows', async () => {
    const c = new StatusGlobalCollector({ monitorId: 'm1', db });
    await c.prepare(planOf({ all: { 'status.global': { options: { all: 'yes' } } } }), NO_SIGNAL);
    const res = await c.collect('all', NO_SIGNAL);
    const shown = await showStatus();
    const numeric = [...shown].filter(([, v]) => parseValue(v) !== undefined).map(([k]) => k);
    const names = res.values.map((v) => v.name);
    assert.deepEqual([...names].sort(), [...numeric].sort());
    assert.ok(names.length > 300, `${names.length} values`);
    assert.ok(!names.includes('ssl_cipher'));
    assert.ok(!names.includes('max_memory_used')); // MariaDB shows the text NULL
    assert.ok(names.includes('com_select') && names.includes('uptime'));
    for (const v of res.values) {
      assert.equal(Number.isFinite(v.value), true, v.name);
      assert.equal(v.type, GAUGES.has(v.name) ? MetricType.Gauge : MetricType.CumulativeCounter, v.name);
    }
  });

  void it('collects nothing for a level that does not list the domain', async () => {
    const c = new StatusGlobalCollector({ monitorId: 'm1', db });
    await c.prepare(
      planOf({
        fast: { 'var.global': { metrics: ['max_connections'] } },
        slow: { 'status.global': { metrics: ['uptime'] } },
      }),
      NO_SIGNAL,
    );
    assert.deepEqual(await c.collect('fast', NO_SIGNAL), { values: [] });
    assert.deepEqual(
      (await c.collect('slow', NO_SIGNAL)).values.map((v) => v.name),
      ['uptime'],
    );
  });

  void it('returns a cancelled query as an error, not a throw', async () => {
    const c = new StatusGlobalCollector({ monitorId: 'm1', db });
    await c.prepare(planOf({ kpi: { 'status.global': { options: { all: 'yes' } } } }), NO_SIGNAL);
    const res = await c.collect('kpi', AbortSignal.abort(new Error('deadline')));
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.message, 'query cancelled: deadline');
  });
});
