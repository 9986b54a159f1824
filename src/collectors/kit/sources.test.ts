import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Db, QueryOptions, Row, ServerInfo } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { parseServerVersion } from '../../db/flavor.js';
import { BUILTIN } from '../implementations.js';
import {
  SERVER_COLUMNS,
  SOURCE_STEPS,
  SOURCE_TABLE,
  TRUNCATE_STEP,
  absentReason,
  choicesInColumn,
  prepareSource,
  sourceFor,
  sourceList,
  uniformSource,
  unsupportedError,
  type SourceRule,
} from './sources.js';
import { NO_SIGNAL } from './test-helpers.js';

/** Servers named by what they report in @@version. */
const SERVERS = {
  'mysql-5.7': '5.7.44-log',
  'mysql-8.0.21': '8.0.21',
  'mysql-8.0.36': '8.0.36',
  'mysql-8.4': '8.4.3',
  'mysql-9': '9.1.0',
  'percona-5.7': '5.7.44-48-log',
  'percona-8.0': '8.0.35-27',
  'mariadb-10.4': '10.4.34-MariaDB',
  'mariadb-10.11': '10.11.19-MariaDB-0+deb12u1-log',
  'mariadb-11': '11.4.3-MariaDB',
  'mysql-unknown': 'devel',
} as const;
type Server = keyof typeof SERVERS;

/** `source` or `✗` (unsupported), per server, for one domain. */
function row(domain: string): Record<Server, string> {
  const out = {} as Record<Server, string>;
  for (const [name, version] of Object.entries(SERVERS) as [Server, string][]) {
    const choice = sourceFor(domain, parseServerVersion(version));
    out[name] = 'source' in choice ? choice.source : '✗';
  }
  return out;
}

/** The same source on every server. */
function everywhere(source: string): Record<Server, string> {
  const out = {} as Record<Server, string>;
  for (const name of Object.keys(SERVERS) as Server[]) out[name] = source;
  return out;
}

void describe('source table', () => {
  void it('has a row set for every built-in domain, plus the shared steps, and nothing else', () => {
    const domains = BUILTIN.map((r) => r.help.domain);
    assert.deepEqual(Object.keys(SOURCE_TABLE).sort(), [...domains, ...Object.keys(SOURCE_STEPS)].sort());
    assert.deepEqual(Object.keys(SOURCE_STEPS), [TRUNCATE_STEP]);
  });

  void it('has a catch-all row per flavor in every domain, so no server falls through', () => {
    for (const [domain, rules] of Object.entries(SOURCE_TABLE)) {
      for (const flavor of ['mysql', 'mariadb']) {
        const last = rules.filter((r) => r.flavor === flavor).at(-1);
        assert.ok(last !== undefined, `${domain} ${flavor}`);
        assert.equal(last.min ?? last.below, undefined, `${domain} ${flavor} last row has a range`);
        assert.ok((last.source === undefined) !== (last.unsupported === undefined), `${domain} ${flavor}`);
      }
    }
  });

  void it('reads the same source everywhere for flavor-neutral domains', () => {
    assert.deepEqual(row('status.global'), everywhere('show-global-status'));
    assert.deepEqual(row('innodb.buffer-pool'), everywhere('innodb_buffer_pool_stats'));
    assert.deepEqual(row('trx'), everywhere('innodb_trx'));
    assert.deepEqual(row('size.binlog'), everywhere('show-binary-logs'));
    assert.deepEqual(row('size.database'), everywhere('tables'));
    assert.deepEqual(row('size.table'), everywhere('tables'));
    assert.deepEqual(row('autoinc'), everywhere('columns'));
    assert.deepEqual(row('stmt.current'), everywhere('events_statements_current'));
    assert.deepEqual(row('wait.io.table'), everywhere('table_io_waits_summary_by_table'));
  });

  void it('tls: have_ssl until MySQL 8.0.21, then with the P_S fallback, P_S only from 8.4; MariaDB have_ssl', () => {
    assert.deepEqual(row('tls'), {
      'mysql-5.7': 'have_ssl',
      'mysql-8.0.21': 'have_ssl,tls_channel_status',
      'mysql-8.0.36': 'have_ssl,tls_channel_status',
      'mysql-8.4': 'tls_channel_status',
      'mysql-9': 'tls_channel_status',
      'percona-5.7': 'have_ssl',
      'percona-8.0': 'have_ssl,tls_channel_status',
      'mariadb-10.4': 'have_ssl',
      'mariadb-10.11': 'have_ssl',
      'mariadb-11': 'have_ssl',
      'mysql-unknown': 'have_ssl,tls_channel_status',
    });
  });

  void it('repl: SHOW REPLICA STATUS from MySQL 8.0.22 on, SHOW SLAVE STATUS before and on MariaDB', () => {
    assert.deepEqual(row('repl'), {
      'mysql-5.7': 'show-slave-status',
      'mysql-8.0.21': 'show-slave-status',
      'mysql-8.0.36': 'show-replica-status',
      'mysql-8.4': 'show-replica-status',
      'mysql-9': 'show-replica-status',
      'percona-5.7': 'show-slave-status',
      'percona-8.0': 'show-replica-status',
      'mariadb-10.4': 'show-slave-status',
      'mariadb-10.11': 'show-slave-status',
      'mariadb-11': 'show-slave-status',
      'mysql-unknown': 'show-slave-status',
    });
    // The boundary itself.
    assert.deepEqual(sourceFor('repl', parseServerVersion('8.0.22')), { source: 'show-replica-status' });
  });

  void it('var.global, innodb and repl.lag: per-flavor variants', () => {
    const mysql8 = everywhere('select,pfs,show');
    assert.deepEqual(row('var.global'), {
      ...mysql8,
      'mariadb-10.4': 'select,show',
      'mariadb-10.11': 'select,show',
      'mariadb-11': 'select,show',
    });
    assert.deepEqual(sourceFor('var.global', parseServerVersion('5.7.5')), {
      source: 'select,show',
      absent: { pfs: 'performance_schema.global_variables exists only in MySQL 5.7.6 and later' },
    });
    const innodb = row('innodb');
    assert.equal(innodb['mysql-8.4'], 'innodb_metrics:status');
    assert.equal(innodb['percona-5.7'], 'innodb_metrics:status');
    assert.equal(innodb['mariadb-11'], 'innodb_metrics:enabled');
    assert.deepEqual(row('repl.lag'), {
      ...everywhere('pfs,blip'),
      'mysql-5.7': 'blip',
      'percona-5.7': 'blip',
      'mariadb-10.4': 'blip',
      'mariadb-10.11': 'blip',
      'mariadb-11': 'blip',
    });
  });

  void it('query.response-time and error.*: MySQL 8.0+ only, with a reason elsewhere', () => {
    const expect = (source: string) => ({
      ...everywhere('✗'),
      'mysql-8.0.21': source,
      'mysql-8.0.36': source,
      'mysql-8.4': source,
      'mysql-9': source,
      'percona-8.0': source,
      'mysql-unknown': source,
    });
    assert.deepEqual(row('query.response-time'), expect('events_statements_histogram_global'));
    assert.deepEqual(row('error.global'), expect('events_errors_summary_global_by_error'));
    assert.deepEqual(row('error.account'), expect('events_errors_summary_by_account_by_error'));
    assert.deepEqual(row('error.host'), expect('events_errors_summary_by_host_by_error'));
    assert.deepEqual(row('error.user'), expect('events_errors_summary_by_user_by_error'));
    assert.deepEqual(row('error.thread'), expect('events_errors_summary_by_thread_by_error'));
    assert.deepEqual(sourceFor('error.global', parseServerVersion('10.11.6-MariaDB')), {
      unsupported: 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
    });
    assert.deepEqual(sourceFor('query.response-time', parseServerVersion('8.0.0')), {
      unsupported:
        'performance_schema.events_statements_histogram_global exists only in MySQL 8.0.1 and later',
    });
  });

  void it('percona.response-time: the 5.7 plugin or MariaDB plugin, never MySQL 8.0+', () => {
    assert.deepEqual(row('percona.response-time'), {
      ...everywhere('query_response_time'),
      'mysql-8.0.21': '✗',
      'mysql-8.0.36': '✗',
      'mysql-8.4': '✗',
      'mysql-9': '✗',
      'percona-8.0': '✗',
    });
  });

  void it('splits a try order and refuses an unknown domain', () => {
    assert.deepEqual(sourceList('have_ssl,tls_channel_status'), ['have_ssl', 'tls_channel_status']);
    assert.deepEqual(sourceList('innodb_trx'), ['innodb_trx']);
    assert.throws(
      () => sourceFor('nope', parseServerVersion('8.0.36')),
      /no source table entry for domain nope/,
    );
  });

  void it('builds the not-supported error: domain, flavor and version, reason; flagged unsupported', () => {
    const err = unsupportedError('error.global', parseServerVersion('10.11.19-MariaDB-log'), 'no tables');
    assert.equal(err.message, 'error.global: not supported on mariadb 10.11.19: no tables');
    assert.equal(err.unsupported, true);
    assert.equal(err.errno, undefined);
    assert.equal(err.policy, undefined);
  });

  void it('keeps the server errno and names a policy a plan may set for the same failure', () => {
    const cause = Object.assign(new Error("Table 't' doesn't exist"), { errno: 1146 });
    const zero = [{ name: 'p99', value: 0, type: MetricType.Gauge }];
    const err = unsupportedError('query.response-time', parseServerVersion('8.0.36'), 'no t', cause, {
      policy: 'table-not-exist',
      zero,
    });
    assert.deepEqual([err.errno, err.policy, err.zero, err.cause], [1146, 'table-not-exist', zero, cause]);
  });

  void it('says why a source is absent, from the rule or the unsupported reason', () => {
    const at = (domain: string, v: string) => sourceFor(domain, parseServerVersion(v));
    assert.equal(absentReason(at('var.global', '8.0.36'), 'pfs'), undefined);
    assert.equal(
      absentReason(at('var.global', '10.11.6-MariaDB'), 'pfs'),
      'no performance_schema.global_variables table',
    );
    assert.match(absentReason(at('repl.lag', '5.7.44'), 'pfs') ?? '', /LAST_APPLIED_TRANSACTION/);
    assert.equal(absentReason(at('tls', '5.7.44'), 'tls_channel_status'), 'no tls_channel_status source');
    assert.match(absentReason(at('error.global', '5.7.44'), 'x') ?? '', /only in MySQL 8\.0/);
  });

  void it('gives the plugin hint per flavor for percona.response-time', () => {
    const hint = (v: string) => {
      const c = sourceFor('percona.response-time', parseServerVersion(v));
      return 'source' in c ? c.hint : undefined;
    };
    assert.equal(hint('5.7.44-48'), 'no QUERY_RESPONSE_TIME plugin loaded');
    assert.match(hint('10.11.6-MariaDB') ?? '', /INSTALL SONAME 'query_response_time'/);
  });

  void it('truncate step: SET STATEMENT on MariaDB, a plain TRUNCATE on MySQL', () => {
    assert.deepEqual(row(TRUNCATE_STEP), {
      ...everywhere('truncate'),
      'mariadb-10.4': 'set-statement-truncate',
      'mariadb-10.11': 'set-statement-truncate',
      'mariadb-11': 'set-statement-truncate',
    });
  });
});

/** A Db that only counts serverInfo() calls. */
class InfoDb implements Db {
  asked = 0;
  constructor(readonly info: ServerInfo) {}
  async query(_sql: string, _p?: readonly unknown[], _o?: QueryOptions): Promise<Row[]> {
    throw new Error('no queries here');
  }
  async serverInfo(): Promise<ServerInfo> {
    this.asked++;
    return this.info;
  }
  async ping(): Promise<void> {}
}

void describe('prepareSource', () => {
  void it('knows flavor-neutral domains without asking the server', async () => {
    assert.equal(uniformSource('status.global'), 'show-global-status');
    assert.equal(uniformSource('repl'), undefined);
    assert.equal(uniformSource('var.global'), undefined);
    const db = new InfoDb(parseServerVersion('10.11.6-MariaDB'));
    const p = await prepareSource(db, 'status.global', NO_SIGNAL);
    assert.deepEqual(p, {
      sources: ['show-global-status'],
      absent: {},
      hint: undefined,
      info: undefined,
      unsupported: undefined,
    });
    assert.equal(db.asked, 0);
  });

  void it('asks the server for the others and hands back the list, the notes and the server', async () => {
    const db = new InfoDb(parseServerVersion('10.11.6-MariaDB'));
    const p = await prepareSource(db, 'var.global', NO_SIGNAL);
    assert.deepEqual(p.sources, ['select', 'show']);
    assert.deepEqual(p.absent, { pfs: 'no performance_schema.global_variables table' });
    assert.equal(p.info, db.info);
    assert.equal(p.unsupported, undefined);
    assert.equal(db.asked, 1);
  });

  void it('turns an unsupported row into the not-supported error', async () => {
    const p = await prepareSource(new InfoDb(parseServerVersion('5.7.44')), 'error.host', NO_SIGNAL);
    assert.deepEqual(p.sources, []);
    assert.equal(
      p.unsupported?.message,
      'error.host: not supported on mysql 5.7.44: the performance_schema error summary tables exist only in MySQL 8.0 and later',
    );
  });
});

void describe('source table by server column (the docs view)', () => {
  const column = (title: string) => {
    const c = SERVER_COLUMNS.find((x) => x.title === title);
    assert.ok(c !== undefined, title);
    return c;
  };

  void it('splits a column at every rule boundary inside it, in version order', () => {
    assert.deepEqual(choicesInColumn('tls', column('MySQL 8.1–8.4')), [
      { from: undefined, choice: { source: 'have_ssl,tls_channel_status' } },
      { from: '8.4.0', choice: { source: 'tls_channel_status' } },
    ]);
    assert.deepEqual(
      choicesInColumn('repl', column('MySQL 8.0')).map((p) => [
        p.from,
        'source' in p.choice && p.choice.source,
      ]),
      [
        [undefined, 'show-slave-status'],
        ['8.0.22', 'show-replica-status'],
      ],
    );
  });

  void it('keeps one piece when a rule covers the column, and reads unknown versions as unknown', () => {
    assert.deepEqual(choicesInColumn('repl', column('MySQL 9.x')), [
      { from: undefined, choice: { source: 'show-replica-status' } },
    ]);
    assert.deepEqual(choicesInColumn('repl', column('MySQL, version unknown')), [
      { from: undefined, choice: { source: 'show-slave-status' } },
    ]);
  });

  void it('merges neighbouring pieces with the same answer', () => {
    const table: Record<string, SourceRule[]> = {
      d: [
        { flavor: 'mysql', min: '8.0.10', source: 'a' },
        { flavor: 'mysql', min: '8.0.5', source: 'a' },
        { flavor: 'mysql', source: 'b' },
        { flavor: 'mariadb', source: 'b' },
      ],
    };
    assert.deepEqual(choicesInColumn('d', column('MySQL 8.0'), table), [
      { from: undefined, choice: { source: 'b' } },
      { from: '8.0.5', choice: { source: 'a' } },
    ]);
  });
});
