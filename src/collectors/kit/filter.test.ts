import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_SCHEMA_EXCLUDE,
  DEFAULT_TABLE_EXCLUDE,
  globToLike,
  parseSchemaFilter,
  parseTableFilter,
  parseTableToken,
  splitList,
} from './filter.js';

void describe('table filter tokens', () => {
  void it('db.* names a schema, db.tbl a table of a schema, a bare name a table anywhere', () => {
    assert.deepEqual(parseTableToken('sys.*'), {
      text: 'sys.*',
      db: { text: 'sys', glob: false },
      tbl: undefined,
    });
    assert.deepEqual(parseTableToken('app.users'), {
      text: 'app.users',
      db: { text: 'app', glob: false },
      tbl: { text: 'users', glob: false },
    });
    assert.deepEqual(parseTableToken('users'), {
      text: 'users',
      db: undefined,
      tbl: { text: 'users', glob: false },
    });
    assert.deepEqual(parseTableToken('*.users'), {
      text: '*.users',
      db: undefined,
      tbl: { text: 'users', glob: false },
    });
    assert.deepEqual(parseTableToken('app_*.t*'), {
      text: 'app_*.t*',
      db: { text: 'app_*', glob: true },
      tbl: { text: 't*', glob: true },
    });
  });

  void it('ignores parts beyond the second, as Blip does', () => {
    assert.deepEqual(parseTableToken('a.b.c'), {
      text: 'a.b.c',
      db: { text: 'a', glob: false },
      tbl: { text: 'b', glob: false },
    });
  });

  void it('refuses an empty schema or table part', () => {
    assert.throws(
      () => parseTableToken('db.'),
      /invalid table filter entry "db\.": empty schema or table name/,
    );
    assert.throws(() => parseTableToken('.tbl'), /invalid table filter entry "\.tbl"/);
    assert.throws(() => parseTableFilter('ok,db.', undefined), /"db\."/);
  });

  void it('splits lists on commas, trims spaces and drops empty entries', () => {
    assert.deepEqual(splitList(' a.* , b.c,,  ,d '), ['a.*', 'b.c', 'd']);
    assert.deepEqual(splitList(''), []);
    assert.deepEqual(splitList(undefined), []);
  });

  void it('turns a * glob into a LIKE pattern with ! escapes for %, _ and !', () => {
    assert.equal(globToLike('app_*'), 'app!_%');
    assert.equal(globToLike('100%*x!'), '100!%%x!!');
    assert.equal(globToLike('plain'), 'plain');
  });
});

void describe('table filter selection', () => {
  void it('by default excludes the four system schemas and nothing else', () => {
    const f = parseTableFilter(undefined, undefined);
    assert.equal(f.mode, 'exclude');
    assert.deepEqual(
      f.tokens.map((t) => t.text),
      DEFAULT_TABLE_EXCLUDE.split(','),
    );
    assert.equal(f.matches('mysql', 'user'), false);
    assert.equal(f.matches('information_schema', 'TABLES'), false);
    assert.equal(f.matches('performance_schema', 'threads'), false);
    assert.equal(f.matches('sys', 'x$ps_schema_table_statistics_io'), false);
    assert.equal(f.matches('app', 'user'), true);
    assert.equal(f.matches('mysqlx', 'user'), true); // a prefix is not the schema
    assert.equal(f.matches('sys'), false);
    assert.equal(f.matches('app'), true);
  });

  void it('an explicit empty exclude selects everything, system schemas too', () => {
    const f = parseTableFilter(undefined, '');
    assert.equal(f.mode, 'all');
    assert.equal(f.matches('mysql', 'user'), true);
    assert.equal(f.condition('table_schema', 'table_name'), undefined);
    assert.equal(parseTableFilter('  ', ' , ').mode, 'all');
  });

  void it('include wins over exclude and selects the union of its tokens', () => {
    const f = parseTableFilter('test_table,sys.*,information_schema.XTRADB_ZIP_DICT', 'sys.*');
    assert.equal(f.mode, 'include');
    assert.equal(f.matches('anything', 'test_table'), true);
    assert.equal(f.matches('sys', 'whatever'), true);
    assert.equal(f.matches('information_schema', 'XTRADB_ZIP_DICT'), true);
    assert.equal(f.matches('information_schema', 'xtradb_zip_dict'), false); // exact case
    assert.equal(f.matches('information_schema', 'TABLES'), false);
    assert.equal(f.matches('app', 'other'), false);
  });

  void it('an empty include falls back to exclude (default when absent)', () => {
    assert.equal(parseTableFilter('', undefined).mode, 'exclude');
    assert.equal(parseTableFilter('', undefined).matches('mysql', 'db'), false);
    const f = parseTableFilter(' ', 'app.secret, logs');
    assert.equal(f.matches('app', 'secret'), false);
    assert.equal(f.matches('app', 'public'), true);
    assert.equal(f.matches('other', 'secret'), true);
    assert.equal(f.matches('any', 'logs'), false);
    assert.equal(f.matches('mysql', 'user'), true); // default exclude replaced, not added to
  });

  void it('matches * globs anywhere in a part', () => {
    const f = parseTableFilter('app_*.*, *.tmp_*, *_archive', undefined);
    assert.equal(f.matches('app_eu', 'x'), true);
    assert.equal(f.matches('app_', 'x'), true);
    assert.equal(f.matches('appeu', 'x'), false);
    assert.equal(f.matches('db', 'tmp_1'), true);
    assert.equal(f.matches('db', 'tmp'), false);
    assert.equal(f.matches('db', 'orders_archive'), true);
    assert.equal(f.matches('db', 'orders_archive2'), false);
    // regex metacharacters in names are literal
    const g = parseTableFilter('a.b+c, x.(y)', undefined);
    assert.equal(g.matches('a', 'b+c'), true);
    assert.equal(g.matches('a', 'bbc'), false);
    assert.equal(g.matches('x', '(y)'), true);
  });

  void it('* and *.* select everything (include) or nothing (exclude)', () => {
    assert.equal(parseTableFilter('*', undefined).matches('mysql', 'user'), true);
    assert.equal(parseTableFilter('*.*', undefined).matches('a', 'b'), true);
    assert.equal(parseTableFilter(undefined, '*.*').matches('a', 'b'), false);
  });

  void it('without a table, only schema-wide tokens decide', () => {
    const inc = parseTableFilter('app.users,shop.*', undefined);
    assert.equal(inc.matches('shop'), true);
    assert.equal(inc.matches('app'), false);
    assert.equal(inc.matches('app', 'users'), true);
    const exc = parseTableFilter(undefined, 'app.users,shop.*');
    assert.equal(exc.matches('shop'), false);
    assert.equal(exc.matches('app'), true);
    assert.equal(exc.matches('app', 'users'), false);
  });
});

void describe('table filter SQL', () => {
  void it('include: tokens joined by OR, every name bound', () => {
    const f = parseTableFilter('test_table,sys.*,information_schema.XTRADB_ZIP_DICT', undefined);
    assert.deepEqual(f.condition('table_schema', 'table_name'), {
      sql: '((table_name = CAST(? AS BINARY)) OR (table_schema = CAST(? AS BINARY)) OR (table_schema = CAST(? AS BINARY) AND table_name = CAST(? AS BINARY)))',
      params: ['test_table', 'sys', 'information_schema', 'XTRADB_ZIP_DICT'],
    });
  });

  void it('exclude: NOT of each token joined by AND, on the given (qualified) columns', () => {
    assert.deepEqual(parseTableFilter(undefined, undefined).condition('C.TABLE_SCHEMA', 'C.TABLE_NAME'), {
      sql: '(NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)) AND NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)) AND NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)) AND NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)))',
      params: ['mysql', 'information_schema', 'performance_schema', 'sys'],
    });
  });

  void it('globs become LIKE with the ! escape; a bare * becomes 1 = 1', () => {
    assert.deepEqual(parseTableFilter('app_*.*,*.t%', undefined).condition('s', 't'), {
      sql: "((s LIKE CAST(? AS BINARY) ESCAPE '!') OR (t = CAST(? AS BINARY)))",
      params: ['app!_%', 't%'],
    });
    assert.deepEqual(parseTableFilter(undefined, '*').condition('s', 't'), {
      sql: '(NOT (1 = 1))',
      params: [],
    });
  });

  void it('names never reach the SQL text, and column references must be identifiers', () => {
    const f = parseTableFilter("x'; DROP TABLE t; --.y", undefined);
    const c = f.condition('s', 't');
    assert.equal(c?.sql, '((s = CAST(? AS BINARY) AND t = CAST(? AS BINARY)))');
    assert.deepEqual(c?.params, ["x'; DROP TABLE t; --", 'y']);
    assert.throws(() => f.condition('s; DROP', 't'), /invalid column reference for a filter: s; DROP/);
    assert.throws(() => f.condition('s', 'a.b.c'), /invalid column reference/);
  });
});

void describe('schema filter (size.database)', () => {
  void it('defaults to excluding the system schemas when exclude is absent or empty', () => {
    for (const exclude of [undefined, '', ' , ']) {
      const f = parseSchemaFilter(undefined, exclude);
      assert.equal(f.mode, 'exclude');
      assert.deepEqual(f.names, DEFAULT_SCHEMA_EXCLUDE.split(','));
      assert.equal(f.matches('mysql'), false);
      assert.equal(f.matches('sys'), false);
      assert.equal(f.matches('app'), true);
    }
    assert.deepEqual(parseSchemaFilter(undefined, undefined).condition('table_schema'), {
      sql: '(table_schema NOT IN (?, ?, ?, ?))',
      params: ['mysql', 'information_schema', 'performance_schema', 'sys'],
    });
  });

  void it('include lists exact names (trimmed) and wins over exclude', () => {
    const f = parseSchemaFilter(' app , shop', 'app');
    assert.equal(f.mode, 'include');
    assert.equal(f.matches('app'), true);
    assert.equal(f.matches('shop'), true);
    assert.equal(f.matches('apps'), false);
    assert.deepEqual(f.condition('table_schema'), {
      sql: '(table_schema IN (?, ?))',
      params: ['app', 'shop'],
    });
  });

  void it('accepts size.table style db.* entries as schema names', () => {
    const f = parseSchemaFilter(undefined, 'mysql.*,sys.*,logs');
    assert.deepEqual(f.names, ['mysql', 'sys', 'logs']);
    assert.equal(f.matches('mysql'), false);
    assert.equal(f.matches('information_schema'), true);
  });

  void it('like: include entries OR-ed as LIKE patterns', () => {
    const f = parseSchemaFilter('app\\_%,sh_p', undefined, true);
    assert.deepEqual(f.condition('table_schema'), {
      sql: '(table_schema LIKE ? OR table_schema LIKE ?)',
      params: ['app\\_%', 'sh_p'],
    });
    assert.equal(f.matches('app_eu'), true);
    assert.equal(f.matches('appXeu'), false); // escaped _ is literal
    assert.equal(f.matches('shop'), true);
    assert.equal(f.matches('shoop'), false);
  });

  void it('like: exclude entries AND-ed as NOT LIKE; .* is kept as a pattern', () => {
    const f = parseSchemaFilter(undefined, 'tmp%,x.*', true);
    assert.deepEqual(f.condition('s'), { sql: '(s NOT LIKE ? AND s NOT LIKE ?)', params: ['tmp%', 'x.*'] });
    assert.equal(f.matches('tmp1'), false);
    assert.equal(f.matches('tmp'), false);
    assert.equal(f.matches('atmp'), true);
    assert.equal(f.matches('x.*'), false);
    assert.equal(f.matches('x'), true);
  });
});
