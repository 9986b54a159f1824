import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseServerVersion } from '../db/flavor.js';
import { SOURCE_TABLE, sourceFor, sourceList, unsupportedError } from './sources.js';

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
  void it('covers every domain of domains.md §1.1', () => {
    assert.deepEqual(Object.keys(SOURCE_TABLE).sort(), [
      'autoinc',
      'aws.rds',
      'error.account',
      'error.global',
      'error.host',
      'error.thread',
      'error.user',
      'innodb',
      'innodb.buffer-pool',
      'percona.response-time',
      'query.response-time',
      'repl',
      'repl.lag',
      'size.binlog',
      'size.database',
      'size.table',
      'status.global',
      'stmt.current',
      'tls',
      'trx',
      'var.global',
      'wait.io.table',
    ]);
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
    assert.deepEqual(row('aws.rds'), everywhere('cloudwatch'));
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
    assert.deepEqual(sourceFor('var.global', parseServerVersion('5.7.5')), { source: 'select,show' });
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
      unsupported: 'MariaDB has no performance_schema error summary tables (events_errors_summary_*)',
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

  void it('builds the §0.7 error: domain, flavor and version, reason; flagged unsupported', () => {
    const err = unsupportedError('error.global', parseServerVersion('10.11.19-MariaDB-log'), 'no tables');
    assert.equal(err.message, 'error.global: not supported on mariadb 10.11.19: no tables');
    assert.equal(err.unsupported, true);
    assert.equal(err.errno, undefined);
  });
});
