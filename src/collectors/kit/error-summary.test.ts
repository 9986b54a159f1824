import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DbError, Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { parseServerVersion } from '../../db/flavor.js';
import { sourceFor } from './sources.js';
import { FakeDb, NO_SIGNAL, planOf } from './test-helpers.js';
import {
  ErrorSummaryCollector,
  buildErrorQuery,
  errorHelp,
  errorValues,
  parseAccounts,
  type ErrorScope,
} from './error-summary.js';
import { registration as accountReg } from '../error.account/index.js';
import { registration as globalReg } from '../error.global/index.js';
import { registration as hostReg } from '../error.host/index.js';
import { registration as threadReg } from '../error.thread/index.js';
import { registration as userReg } from '../error.user/index.js';

const C = MetricType.CumulativeCounter;
const D = MetricType.DeltaCounter;

const q = (scope: ErrorScope, o: Partial<Parameters<typeof buildErrorQuery>[1]> = {}) =>
  buildErrorQuery(scope, { all: 'yes', metrics: [], total: 'yes', ...o });

function dbErr(message: string, errno: number): DbError {
  const e: DbError = new Error(message);
  e.errno = errno;
  return e;
}

void describe('error.* queries', () => {
  void it('defaults per scope: every error, non-NULL entities, raised at least once', () => {
    assert.deepEqual(q('global'), {
      sql: 'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME FROM performance_schema.events_errors_summary_global_by_error WHERE ERROR_NUMBER IS NOT NULL AND SUM_ERROR_RAISED > 0',
      params: [],
    });
    assert.equal(
      q('account').sql,
      'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, USER, HOST FROM performance_schema.events_errors_summary_by_account_by_error WHERE ERROR_NUMBER IS NOT NULL AND USER IS NOT NULL AND HOST IS NOT NULL AND SUM_ERROR_RAISED > 0',
    );
    assert.equal(
      q('host').sql,
      'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, HOST FROM performance_schema.events_errors_summary_by_host_by_error WHERE ERROR_NUMBER IS NOT NULL AND HOST IS NOT NULL AND SUM_ERROR_RAISED > 0',
    );
    assert.equal(
      q('user').sql,
      'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, USER FROM performance_schema.events_errors_summary_by_user_by_error WHERE ERROR_NUMBER IS NOT NULL AND USER IS NOT NULL AND SUM_ERROR_RAISED > 0',
    );
    assert.equal(
      q('thread').sql,
      'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, THREAD_ID FROM performance_schema.events_errors_summary_by_thread_by_error WHERE ERROR_NUMBER IS NOT NULL AND THREAD_ID IS NOT NULL AND SUM_ERROR_RAISED > 0',
    );
  });

  void it('all: no selects listed numbers (bound as numbers) or names; all: exclude skips them', () => {
    assert.deepEqual(q('global', { all: 'no', metrics: ['3024', 'ER_QUERY_TIMEOUT', '1146'] }), {
      sql: 'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME FROM performance_schema.events_errors_summary_global_by_error WHERE (ERROR_NUMBER IN (?, ?) OR ERROR_NAME IN (?)) AND SUM_ERROR_RAISED > 0',
      params: [3024, 1146, 'ER_QUERY_TIMEOUT'],
    });
    assert.deepEqual(q('global', { all: 'exclude', metrics: ['3024', 'ER_QUERY_TIMEOUT'] }), {
      sql: 'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME FROM performance_schema.events_errors_summary_global_by_error WHERE (ERROR_NUMBER NOT IN (?) AND ERROR_NAME NOT IN (?)) AND SUM_ERROR_RAISED > 0',
      params: [3024, 'ER_QUERY_TIMEOUT'],
    });
    assert.match(q('global', { all: 'no', metrics: ['ER_X'] }).sql, /WHERE \(ERROR_NAME IN \(\?\)\) AND/);
    assert.match(q('global', { all: 'no', metrics: [] }).sql, /WHERE ERROR_NUMBER IS NOT NULL AND/);
    assert.match(q('global', { all: 'yes', metrics: ['1146'] }).sql, /WHERE ERROR_NUMBER IS NOT NULL AND/);
  });

  void it('host, user and thread filters: include wins, else exclude', () => {
    assert.deepEqual(q('host', { all: 'no', metrics: ['3024'], include: 'host1, host2', exclude: 'x' }), {
      sql: 'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, HOST FROM performance_schema.events_errors_summary_by_host_by_error WHERE (ERROR_NUMBER IN (?)) AND HOST IN (?, ?) AND SUM_ERROR_RAISED > 0',
      params: [3024, 'host1', 'host2'],
    });
    assert.deepEqual(q('user', { exclude: 'event_scheduler,app' }), {
      sql: 'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, USER FROM performance_schema.events_errors_summary_by_user_by_error WHERE ERROR_NUMBER IS NOT NULL AND USER NOT IN (?, ?) AND SUM_ERROR_RAISED > 0',
      params: ['event_scheduler', 'app'],
    });
    assert.deepEqual(q('thread', { include: '1,2' }).params, ['1', '2']);
    assert.match(q('thread', { include: '1,2' }).sql, / AND THREAD_ID IN \(\?, \?\) AND /);
    assert.match(q('user', { include: '', exclude: '' }).sql, / AND USER IS NOT NULL AND /);
  });

  void it('account tokens: pairs, user@*, *@host; *@* and malformed ignored', () => {
    assert.deepEqual(parseAccounts('user1@host1,user3@*,user2@host2,*@host3,*@*,invalid,a@b@c'), {
      pairs: [
        ['user1', 'host1'],
        ['user2', 'host2'],
      ],
      users: ['user3'],
      hosts: ['host3'],
    });
    const base =
      'SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME, USER, HOST FROM performance_schema.events_errors_summary_by_account_by_error WHERE ERROR_NUMBER IS NOT NULL AND ';
    assert.deepEqual(q('account', { include: 'user1@host1,user3@*,user2@host2,*@host3,*@*,invalid' }), {
      sql: `${base}((USER, HOST) IN ((?, ?), (?, ?)) OR USER IN (?) OR HOST IN (?)) AND USER IS NOT NULL AND HOST IS NOT NULL AND SUM_ERROR_RAISED > 0`,
      params: ['user1', 'host1', 'user2', 'host2', 'user3', 'host3'],
    });
    assert.deepEqual(q('account', { exclude: 'user1@host1,user3@*,*@host3' }), {
      sql: `${base}((USER, HOST) NOT IN ((?, ?)) AND USER NOT IN (?) AND HOST NOT IN (?)) AND USER IS NOT NULL AND HOST IS NOT NULL AND SUM_ERROR_RAISED > 0`,
      params: ['user1', 'host1', 'user3', 'host3'],
    });
    assert.equal(
      q('account', { include: '*@*,nope' }).sql,
      `${base}USER IS NOT NULL AND HOST IS NOT NULL AND SUM_ERROR_RAISED > 0`,
    );
  });

  void it('total: only lets the server sum per entity (COALESCE for global: no rows still give 0)', () => {
    assert.equal(
      q('global', { total: 'only' }).sql,
      "SELECT COALESCE(SUM(SUM_ERROR_RAISED), 0) AS SUM_ERROR_RAISED, '' ERROR_NUMBER, '' ERROR_NAME FROM performance_schema.events_errors_summary_global_by_error WHERE ERROR_NUMBER IS NOT NULL AND SUM_ERROR_RAISED > 0",
    );
    assert.deepEqual(q('host', { total: 'only', include: 'host1,host2' }), {
      sql: "SELECT SUM(SUM_ERROR_RAISED) AS SUM_ERROR_RAISED, '' ERROR_NUMBER, '' ERROR_NAME, HOST FROM performance_schema.events_errors_summary_by_host_by_error WHERE ERROR_NUMBER IS NOT NULL AND HOST IN (?, ?) AND SUM_ERROR_RAISED > 0 GROUP BY HOST",
      params: ['host1', 'host2'],
    });
    assert.match(q('account', { total: 'only' }).sql, / GROUP BY USER, HOST$/);
    assert.match(q('thread', { total: 'only' }).sql, / GROUP BY THREAD_ID$/);
  });
});

/** Recorded MySQL 8.0 answers (the columns the queries select). */
const GLOBAL_ROWS: Row[] = [
  { SUM_ERROR_RAISED: '12', ERROR_NUMBER: '1146', ERROR_NAME: 'ER_NO_SUCH_TABLE' },
  { SUM_ERROR_RAISED: '3', ERROR_NUMBER: '1064', ERROR_NAME: 'ER_PARSE_ERROR' },
  { SUM_ERROR_RAISED: '1', ERROR_NUMBER: '3024', ERROR_NAME: 'ER_QUERY_TIMEOUT' },
];
const ACCOUNT_ROWS: Row[] = [
  {
    SUM_ERROR_RAISED: '5',
    ERROR_NUMBER: '1146',
    ERROR_NAME: 'ER_NO_SUCH_TABLE',
    USER: 'app',
    HOST: '10.0.0.7',
  },
  {
    SUM_ERROR_RAISED: '2',
    ERROR_NUMBER: '1064',
    ERROR_NAME: 'ER_PARSE_ERROR',
    USER: 'root',
    HOST: 'localhost',
  },
  {
    SUM_ERROR_RAISED: '7',
    ERROR_NUMBER: '1064',
    ERROR_NAME: 'ER_PARSE_ERROR',
    USER: 'app',
    HOST: '10.0.0.7',
  },
  {
    SUM_ERROR_RAISED: '4',
    ERROR_NUMBER: '1045',
    ERROR_NAME: 'ER_ACCESS_DENIED_ERROR',
    USER: null,
    HOST: 'x',
  },
];

void describe('error.* values', () => {
  void it('global: one value per error, then the total of what was returned', () => {
    assert.deepEqual(errorValues('global', GLOBAL_ROWS, 'yes', C), [
      { name: 'raised', value: 12, type: C, group: { error_number: '1146', error_name: 'ER_NO_SUCH_TABLE' } },
      { name: 'raised', value: 3, type: C, group: { error_number: '1064', error_name: 'ER_PARSE_ERROR' } },
      { name: 'raised', value: 1, type: C, group: { error_number: '3024', error_name: 'ER_QUERY_TIMEOUT' } },
      { name: 'raised', value: 16, type: C, group: { error_number: '', error_name: '' } },
    ]);
    assert.deepEqual(errorValues('global', [], 'yes', D), [
      { name: 'raised', value: 0, type: D, group: { error_number: '', error_name: '' } },
    ]);
    assert.equal(errorValues('global', GLOBAL_ROWS, 'no', C).length, 3);
  });

  void it('account: totals per user@host in order of first appearance; NULL entities skipped', () => {
    assert.deepEqual(errorValues('account', ACCOUNT_ROWS, 'yes', C), [
      {
        name: 'raised',
        value: 5,
        type: C,
        group: {
          error_number: '1146',
          error_name: 'ER_NO_SUCH_TABLE',
          error_user: 'app',
          error_host: '10.0.0.7',
        },
      },
      {
        name: 'raised',
        value: 2,
        type: C,
        group: {
          error_number: '1064',
          error_name: 'ER_PARSE_ERROR',
          error_user: 'root',
          error_host: 'localhost',
        },
      },
      {
        name: 'raised',
        value: 7,
        type: C,
        group: {
          error_number: '1064',
          error_name: 'ER_PARSE_ERROR',
          error_user: 'app',
          error_host: '10.0.0.7',
        },
      },
      {
        name: 'raised',
        value: 12,
        type: C,
        group: { error_number: '', error_name: '', error_user: 'app', error_host: '10.0.0.7' },
      },
      {
        name: 'raised',
        value: 2,
        type: C,
        group: { error_number: '', error_name: '', error_user: 'root', error_host: 'localhost' },
      },
    ]);
  });

  void it('thread: THREAD_ID as decimal text; total: only keeps the server sums', () => {
    const rows: Row[] = [
      { SUM_ERROR_RAISED: '9', ERROR_NUMBER: '', ERROR_NAME: '', THREAD_ID: '48' },
      { SUM_ERROR_RAISED: '1', ERROR_NUMBER: '', ERROR_NAME: '', THREAD_ID: '1024' },
    ];
    assert.deepEqual(errorValues('thread', rows, 'only', D), [
      { name: 'raised', value: 9, type: D, group: { error_number: '', error_name: '', error_thread: '48' } },
      {
        name: 'raised',
        value: 1,
        type: D,
        group: { error_number: '', error_name: '', error_thread: '1024' },
      },
    ]);
  });
});

void describe('error.* flavors and help', () => {
  void it('only MySQL 8.0+ has the tables (source table)', () => {
    const why = (v: string) => {
      const choice = sourceFor('error.user', parseServerVersion(v));
      return 'unsupported' in choice ? choice.unsupported : undefined;
    };
    assert.equal(why('8.0.11'), undefined);
    assert.equal(why('8.4.2'), undefined);
    assert.equal(why('unknown'), undefined);
    assert.equal(
      why('5.7.44'),
      'the performance_schema error summary tables exist only in MySQL 8.0 and later',
    );
    assert.equal(
      why('10.11.19-MariaDB'),
      'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
    );
  });

  void it('five domains; include and exclude everywhere but global; raised is a counter', () => {
    assert.deepEqual(
      [globalReg, accountReg, hostReg, userReg, threadReg].map((r) => [
        r.help.domain,
        r.help.options.map((o) => o.name),
      ]),
      [
        ['error.global', ['all', 'total', 'truncate-table', 'truncate-timeout', 'truncate-on-startup']],
        [
          'error.account',
          ['all', 'total', 'truncate-table', 'truncate-timeout', 'truncate-on-startup', 'include', 'exclude'],
        ],
        [
          'error.host',
          ['all', 'total', 'truncate-table', 'truncate-timeout', 'truncate-on-startup', 'include', 'exclude'],
        ],
        [
          'error.user',
          ['all', 'total', 'truncate-table', 'truncate-timeout', 'truncate-on-startup', 'include', 'exclude'],
        ],
        [
          'error.thread',
          ['all', 'total', 'truncate-table', 'truncate-timeout', 'truncate-on-startup', 'include', 'exclude'],
        ],
      ],
    );
    const h = errorHelp('account');
    assert.deepEqual(h.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]).slice(0, 5), [
      ['all', 'yes', ['yes', 'no', 'exclude']],
      ['total', 'yes', ['yes', 'no', 'only']],
      ['truncate-table', 'no', ['yes', 'no']],
      ['truncate-timeout', '250ms', []],
      ['truncate-on-startup', 'yes', ['yes', 'no']],
    ]);
    assert.deepEqual(
      h.groups.map((g) => g.key),
      ['error_number', 'error_name', 'error_user', 'error_host'],
    );
    assert.deepEqual(
      h.metrics.map((m) => [m.name, m.type]),
      [['raised', C]],
    );
    assert.deepEqual(
      h.errors.map((e) => e.name),
      ['truncate-timeout'],
    );
  });
});

const TRUNCATE_GLOBAL = 'TRUNCATE TABLE performance_schema.events_errors_summary_global_by_error';

void describe('error.* collector on recorded MySQL 8 result sets', () => {
  async function prepared(
    scope: ErrorScope,
    db: FakeDb,
    options: Record<string, string> = {},
    errors: Record<string, string> = {},
    metrics: string[] = [],
  ) {
    const c = new ErrorSummaryCollector(scope, { monitorId: 'm', db });
    await c.prepare(planOf({ l: { [`error.${scope}`]: { options, errors, metrics } } }), NO_SIGNAL);
    return c;
  }

  void it('truncates once at startup, then reports cumulative counts', async () => {
    const db = new FakeDb('8.0.36', (sql) => (sql.startsWith('TRUNCATE') ? [] : GLOBAL_ROWS));
    const c = await prepared('global', db);
    assert.deepEqual(
      db.queries.map((x) => x.sql),
      [TRUNCATE_GLOBAL],
    );
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    assert.deepEqual(
      res.values.map((v) => [v.value, v.type, v.group?.error_number]),
      [
        [12, C, '1146'],
        [3, C, '1064'],
        [1, C, '3024'],
        [16, C, ''],
      ],
    );
    assert.equal(db.queries.length, 2, 'no truncate after reading by default');
  });

  void it('a failed startup truncate is reported with the first collection, which still has its values', async () => {
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.startsWith('TRUNCATE'))
        throw dbErr(
          "DROP command denied to user 'mon'@'%' for table 'events_errors_summary_by_user_by_error'",
          1142,
        );
      return [{ SUM_ERROR_RAISED: '2', ERROR_NUMBER: '1146', ERROR_NAME: 'ER_NO_SUCH_TABLE', USER: 'app' }];
    });
    const c = await prepared('user', db);
    const first = await c.collect('l', NO_SIGNAL);
    assert.equal(
      first.error?.message,
      "failed to truncate table for error.user on level l: DROP command denied to user 'mon'@'%' for table 'events_errors_summary_by_user_by_error'",
    );
    assert.equal(first.error?.policy, undefined);
    assert.deepEqual(
      first.values.map((v) => v.value),
      [2, 2],
    );
    const second = await c.collect('l', NO_SIGNAL);
    assert.equal(second.error, undefined, 'reported once');
    assert.equal(second.values.length, 2);
  });

  void it('truncate-table: yes → delta counters, truncated after each read; failures typed truncate-timeout', async () => {
    let failTruncate = false;
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.startsWith('TRUNCATE')) {
        if (failTruncate) throw dbErr('query timed out after 250ms and was cancelled', 0);
        return [];
      }
      return ACCOUNT_ROWS.slice(0, 1);
    });
    const c = await prepared('account', db, { 'truncate-table': 'yes', 'truncate-on-startup': 'no' });
    assert.equal(db.queries.length, 0);
    const ok = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(
      ok.values.map((v) => [v.value, v.type]),
      [
        [5, D],
        [5, D],
      ],
    );
    assert.equal(
      db.queries[1]?.sql,
      'TRUNCATE TABLE performance_schema.events_errors_summary_by_account_by_error',
    );
    failTruncate = true;
    const row2 = await c.collect('l', NO_SIGNAL);
    assert.equal(row2.error?.policy, 'truncate-timeout');
    assert.deepEqual(
      row2.values.map((v) => v.value),
      [5, 5],
    );
    const row3 = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(row3.values, []);
    assert.deepEqual(
      row3.error?.zero?.map((v) => [v.value, v.group?.error_user, v.group?.error_number]),
      [
        [0, 'app', '1146'],
        [0, 'app', ''],
      ],
    );
  });

  void it('on MariaDB: not supported, once per collect, with no query and no startup truncate', async () => {
    const db = new FakeDb('10.11.19-MariaDB-0+deb12u1', () => {
      throw new Error('must not be asked');
    });
    const c = await prepared('host', db, { include: 'h1' });
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      'error.host: not supported on mariadb 10.11.19: MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
    );
    assert.deepEqual(db.queries, []);
  });

  void it('a 1146 from the server means not supported too', async () => {
    const db = new FakeDb('8.0.36', () => {
      throw dbErr("Table 'performance_schema.events_errors_summary_global_by_error' doesn't exist", 1146);
    });
    const c = await prepared('global', db);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, true);
    assert.match(
      res.error?.message ?? '',
      /^error\.global: not supported on mysql 8\.0\.36: no performance_schema\.events_errors_summary_global_by_error \(Table/,
    );
    assert.equal(db.queries.length, 1, 'the startup truncate found out; collect asks nothing more');
  });

  void it('prepare refuses an invalid all value and an invalid truncate-timeout', async () => {
    const db = new FakeDb('8.0.36', () => []);
    await assert.rejects(
      prepared('global', db, { all: 'maybe' }),
      /^Error: invalid value for option all: maybe/,
    );
    await assert.rejects(
      prepared('global', db, { 'truncate-timeout': 'x' }),
      /^Error: Invalid truncate duration/,
    );
  });
});
