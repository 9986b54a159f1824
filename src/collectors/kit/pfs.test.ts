/**
 * The performance_schema domains on a stock MariaDB 10.11 (performance_schema OFF, no
 * query_response_time plugin), driven through the real engine: each domain that cannot
 * work says so once, clearly, and the others keep collecting.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectorRegistration } from '../../core/collector.js';
import type { Metrics } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { describeServer } from '../../db/flavor.js';
import { type PooledDb } from '../../db/pool.js';
import { engineFor } from '../../engine/run.fixture.js';
import { StatusRegistry } from '../../status/registry.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { registration as errorAccount } from '../error.account/index.js';
import { registration as errorGlobal } from '../error.global/index.js';
import { registration as errorHost } from '../error.host/index.js';
import { registration as errorThread } from '../error.thread/index.js';
import { registration as errorUser } from '../error.user/index.js';
import { registration as perconaRt } from '../percona.response-time/index.js';
import { registration as queryRt } from '../query.response-time/index.js';
import { CollectorRegistry } from '../registry.js';
import { registration as statusGlobal } from '../status.global/index.js';
import { registration as waitIoTable } from '../wait.io.table/index.js';
import { planOf } from './test-helpers.js';

const REGS: CollectorRegistration[] = [
  statusGlobal,
  queryRt,
  perconaRt,
  waitIoTable,
  errorGlobal,
  errorAccount,
  errorHost,
  errorUser,
  errorThread,
];

void describe('performance_schema domains on a stock MariaDB, through the engine', () => {
  let server: MariaDB;
  let db: PooledDb;
  const registry = new CollectorRegistry();
  for (const r of REGS) registry.register(r);

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-5', ['PROCESS ON *.*', 'SELECT ON performance_schema.*']);
    db = connectAs(server, 'mon', 'mon-pass-5');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  async function run(plan: Plan, times: number) {
    const status = new StatusRegistry();
    const events: string[] = [];
    const domains = Object.keys(plan.levels.l?.collect ?? {});
    const engine = await engineFor({
      plan,
      status: status.monitor('m1'),
      errors: events,
      help: (d) => (registry.has(d) ? registry.help(d) : undefined),
      make: (d) => registry.make(d, { monitorId: 'm1', db }),
    });
    const batches: Metrics[] = [];
    for (let n = 1; n <= times; n++) {
      const out = await engine.collect(
        n,
        'l',
        domains.map((domain) => ({ domain, level: 'l' })),
      );
      batches.push(...out);
    }
    await engine.close();
    return { batches, events, status: status.monitorStatus('m1') ?? {} };
  }

  void it('each unsupported domain is reported once with its reason; status.global keeps collecting', async () => {
    const plan = planOf({
      l: {
        'status.global': { metrics: ['queries', 'threads_connected'] },
        'query.response-time': { metrics: ['p99'] },
        'percona.response-time': { metrics: ['p99'] },
        'wait.io.table': { options: { all: 'yes' } },
        'error.global': {},
        'error.account': {},
        'error.host': {},
        'error.user': {},
        'error.thread': {},
      },
    });
    const { batches, events, status } = await run(plan, 3);

    // status.global every interval, nothing from the others.
    assert.equal(batches.length, 3);
    for (const b of batches) assert.deepEqual(Object.keys(b.values), ['status.global']);
    const queries = batches.map(
      (b) => b.values['status.global']?.find((v) => v.name === 'queries')?.value ?? NaN,
    );
    assert.ok((queries[0] ?? NaN) < (queries[2] ?? NaN), `queries grows: ${queries.join(', ')}`);

    const v = /^mariadb 10\.11\.\d+$/;
    const reasons = new Map<string, string>();
    for (const e of events) {
      const m = /^collector-error: test\/l\/1\/(\S+): \1: not supported on (mariadb [\d.]+): (.*)$/.exec(e);
      if (m === null) continue;
      assert.match(m[2] ?? '', v);
      reasons.set(m[1] ?? '', m[3] ?? '');
    }
    assert.deepEqual(Object.fromEntries(reasons), {
      'query.response-time':
        'MariaDB has no performance_schema.events_statements_histogram_global (MySQL 8.0.1+ only)',
      'percona.response-time':
        "plugin query_response_time not loaded (INSTALL SONAME 'query_response_time') (Unknown table 'QUERY_RESPONSE_TIME' in information_schema)",
      'wait.io.table': 'performance_schema is disabled (start the server with performance_schema=ON)',
      'error.global': 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
      'error.account': 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
      'error.host': 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
      'error.user': 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
      'error.thread': 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
    });
    // Once: nothing about them in intervals 2 and 3.
    assert.deepEqual(
      events.filter((e) => e.startsWith('collector-error') && !e.includes('/l/1/')),
      [],
    );
    // Status keeps saying why, so /status/monitors shows it.
    assert.match(
      status['error:query.response-time'] ?? '',
      /^at \S+: test\/l\/1\/query\.response-time: query\.response-time: not supported on mariadb /,
    );
    assert.match(status['error:error.thread'] ?? '', /not supported on mariadb/);
    assert.equal(status['error:status.global'], undefined);
  });

  // A plan's policy governs an unsupported error that names it (CollectError.policy set and
  // present in the plan's errors:); without it the engine reports once and stops the domain.

  void it('a plan naming table-not-exist keeps Blip handling: zero emits p99 = 0 every interval, silently', async () => {
    const plan = planOf({
      l: {
        'query.response-time': {
          metrics: ['p99', 'p999'],
          errors: { 'table-not-exist': 'ignore,zero,retry' },
        },
      },
    });
    const { batches, events, status } = await run(plan, 2);
    for (const b of batches) {
      assert.deepEqual(b.values['query.response-time'], [{ name: 'p99', value: 0, type: 3 }]);
    }
    assert.deepEqual(events, []);
    assert.equal(status['error:query.response-time'], undefined);
  });

  void it('table-not-exist: report reports the missing table every interval, as Blip does', async () => {
    const plan = planOf({
      l: {
        'query.response-time': { metrics: ['p99'], errors: { 'table-not-exist': 'report,drop,retry' } },
      },
    });
    const { events } = await run(plan, 2);
    const info = await db.serverInfo();
    assert.deepEqual(
      events.filter((e) => e.startsWith('collector-error')),
      [1, 2].map(
        (n) =>
          `collector-error: test/l/${n}/query.response-time: query.response-time: not supported on ${describeServer(info)}: MariaDB has no performance_schema.events_statements_histogram_global (MySQL 8.0.1+ only)`,
      ),
    );
  });
});
