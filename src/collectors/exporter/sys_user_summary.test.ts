import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MYSQL_8_0_28, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './sys_user_summary.js';

/** sys.x$user_summary as MySQL 8.0 returns it (an extra column the scraper does not read). */
const ROWS = [
  {
    user: 'app',
    statements: '120',
    statement_latency: '2500000000000',
    statement_avg_latency: '20833333333.3333',
    table_scans: '7',
    file_ios: '42',
    file_io_latency: '500000000000',
    current_connections: '3',
    total_connections: '9',
    unique_hosts: '2',
    current_memory: '-1024',
    total_memory_allocated: '1048576',
  },
];

describe('exporter.sys.user_summary on recorded result sets', () => {
  it('per user: counters, gauges, latencies in seconds, memory that may be negative', async () => {
    const r = await runScraper(registration, MYSQL_8_0_28, () => ROWS);
    assert.equal(r.queries[0]?.sql, QUERY);
    assert.match(
      QUERY,
      /^SELECT user, statements, statement_latency, table_scans, file_ios, file_io_latency, current_connections, total_connections, unique_hosts, current_memory, total_memory_allocated FROM sys\.x\$user_summary$/,
    );
    const u = '{user="app"}';
    assert.deepEqual(lines(r.values), [
      `mysql_sys_connections_total${u} 9`,
      `mysql_sys_current_connections${u} 3`,
      `mysql_sys_current_memory_bytes${u} -1024`,
      `mysql_sys_file_io_seconds_total${u} 0.5`,
      `mysql_sys_file_ios_total${u} 42`,
      `mysql_sys_memory_allocated_bytes_total${u} 1048576`,
      `mysql_sys_statement_latency${u} 2.5`,
      `mysql_sys_statements_total${u} 120`,
      `mysql_sys_table_scans_total${u} 7`,
      `mysql_sys_unique_hosts_total${u} 2`,
    ]);
    const help = r.values.find((v) => v.name === 'mysql_sys_statements_total')?.meta?.help;
    assert.equal(help, ' The total number of statements for the user');
  });

  it('a missing sys schema is the query error; a NULL column is missing', async () => {
    const fail = await runScraper(registration, MYSQL_8_0_28, (sql) => {
      if (sql === QUERY)
        throw Object.assign(new Error("Table 'sys.x$user_summary' doesn't exist"), { errno: 1146 });
      return [];
    });
    assert.match(fail.error?.message ?? '', /doesn't exist/);
    const r = await runScraper(registration, MYSQL_8_0_28, () => [{ ...ROWS[0], file_io_latency: null }]);
    assert.equal(r.values.length, 9);
  });
});
