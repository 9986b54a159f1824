import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, processlistQuery, registration, sanitizeState } from './info_schema_processlist.js';
import { lines, scrapeWith } from './scrape-fixture.js';

const row = (user: string, host: string, command: string, state: string, n: string, secs: string): Row => ({
  user,
  host,
  command,
  state,
  processes: n,
  seconds: secs,
});

/** A MySQL 8.0 processlist, grouped by the full host: two rows reduce to one client host. */
const ROWS: Row[] = [
  row('event_scheduler', 'localhost', 'Daemon', 'Waiting on empty queue', '1', '3600'),
  row('app', '10.0.0.5', 'Query', 'Sending data', '2', '3'),
  row('app', '10.0.0.5', 'Query', 'Sending data', '1', '1'),
  row('app', '10.0.0.6', 'Sleep', '', '4', '40'),
  row(
    'repl',
    '',
    'Binlog Dump GTID',
    'Source has sent all binlog to replica; waiting for more updates',
    '1',
    '99',
  ),
];

function server(rows: Row[] = ROWS): FakeDb {
  return new FakeDb('8.0.36', () => rows);
}

void describe(DOMAIN, () => {
  void it('threads and seconds per command and state, processes per client host and per user', async () => {
    const db = server();
    const r = await scrapeWith(registration, db);
    assert.equal(r.error, undefined);
    assert.equal(db.queries[0]?.sql, processlistQuery(0));
    assert.match(
      processlistQuery(0),
      /WHERE ID != connection_id\(\) AND TIME >= 0 GROUP BY user, host, command, state$/,
    );
    assert.deepEqual(lines(r.values).sort(), [
      'mysql_info_schema_processlist_processes_by_host{client_host="10.0.0.5"} 3',
      'mysql_info_schema_processlist_processes_by_host{client_host="10.0.0.6"} 4',
      'mysql_info_schema_processlist_processes_by_host{client_host="localhost"} 1',
      'mysql_info_schema_processlist_processes_by_host{client_host="unknown"} 1',
      'mysql_info_schema_processlist_processes_by_user{mysql_user="app"} 7',
      'mysql_info_schema_processlist_processes_by_user{mysql_user="event_scheduler"} 1',
      'mysql_info_schema_processlist_processes_by_user{mysql_user="repl"} 1',
      'mysql_info_schema_processlist_seconds{command="binlog_dump_gtid",state="source_has_sent_all_binlog_to_replica_waiting_for_more_updates"} 99',
      'mysql_info_schema_processlist_seconds{command="daemon",state="waiting_on_empty_queue"} 3600',
      'mysql_info_schema_processlist_seconds{command="query",state="sending_data"} 4',
      'mysql_info_schema_processlist_seconds{command="sleep",state="unknown"} 40',
      'mysql_info_schema_processlist_threads{command="binlog_dump_gtid",state="source_has_sent_all_binlog_to_replica_waiting_for_more_updates"} 1',
      'mysql_info_schema_processlist_threads{command="daemon",state="waiting_on_empty_queue"} 1',
      'mysql_info_schema_processlist_threads{command="query",state="sending_data"} 3',
      'mysql_info_schema_processlist_threads{command="sleep",state="unknown"} 4',
    ]);
    assert.ok(r.values.every((v) => v.type === MetricType.Gauge));
  });

  void it('options: min_time goes into the query; the per-user and per-host families can be switched off', async () => {
    const db = server();
    const r = await scrapeWith(registration, db, {
      min_time: '5',
      processes_by_user: 'false',
      processes_by_host: '0',
    });
    assert.match(db.queries[0]?.sql ?? '', /AND TIME >= 5 GROUP BY/);
    assert.deepEqual([...new Set(r.values.map((v) => v.name))].sort(), [
      'mysql_info_schema_processlist_seconds',
      'mysql_info_schema_processlist_threads',
    ]);
  });

  void it('options that are not an integer or a bool are refused, naming the option', async () => {
    await assert.rejects(
      scrapeWith(registration, server(), { min_time: '1s' }),
      /invalid option min_time: 1s: not an integer/,
    );
    await assert.rejects(
      scrapeWith(registration, server(), { processes_by_host: 'yes' }),
      /invalid option processes_by_host: yes: not true or false/,
    );
  });

  void it('labels: lower case, punctuation dropped, spaces and dashes to _, empty is unknown', () => {
    assert.equal(sanitizeState(''), 'unknown');
    assert.equal(sanitizeState('Waiting for table metadata lock'), 'waiting_for_table_metadata_lock');
    assert.equal(
      sanitizeState('Slave has read all relay log; waiting for more updates'),
      'slave_has_read_all_relay_log_waiting_for_more_updates',
    );
    assert.equal(sanitizeState('Commit (implicit), re-init: done.'), 'commit_implicit_re_init_done');
  });

  void it('a count that is not an unsigned 32-bit integer fails the scrape before anything is emitted', async () => {
    for (const bad of ['-3', '4294967296', null]) {
      const r = await scrapeWith(
        registration,
        server([ROWS[0]!, row('a', 'h', 'Query', '', '1', '0'), { ...ROWS[1]!, seconds: bad }]),
      );
      assert.deepEqual(r.values, [], String(bad));
      assert.match(r.error?.message ?? '', /column seconds/);
    }
  });
});
