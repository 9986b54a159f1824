/**
 * The lexer's edge cases, without a database: each literal form, comments, hints, executable
 * comments, list reductions, the server's keyword spellings, unreadable text (never a literal
 * out, never a throw) and pathological inputs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeSql, obfuscateSql, sqlFingerprint } from './obfuscate.js';

const obf = (s: string): string => obfuscateSql(s);
const norm = (s: string): string => normalizeSql(s);

describe('sql: obfuscateSql literals', () => {
  const cases: [string, string][] = [
    ['SELECT \'a\', "b"', 'SELECT ?, ...'],
    ["SELECT * FROM t WHERE a = 'it''s'", 'SELECT * FROM t WHERE a = ?'],
    ["SELECT * FROM t WHERE a = 'a\\'b'", 'SELECT * FROM t WHERE a = ?'],
    ['SELECT * FROM t WHERE a = "x\\"y"', 'SELECT * FROM t WHERE a = ?'],
    ['SELECT * FROM t WHERE a = "x""y"', 'SELECT * FROM t WHERE a = ?'],
    ["SELECT * FROM t WHERE a = 'back\\\\slash'", 'SELECT * FROM t WHERE a = ?'],
    ["SELECT * FROM t WHERE a = 'x' 'y'", 'SELECT * FROM t WHERE a = ? ?'],
    ['SELECT * FROM t WHERE a = 42', 'SELECT * FROM t WHERE a = ?'],
    [
      'SELECT * FROM t WHERE a = 4.2 OR a = .5 OR a = 1. OR a = 1e10 OR a = 1.5E-3',
      'SELECT * FROM t WHERE a = ? OR a = ? OR a = ? OR a = ? OR a = ?',
    ],
    ["SELECT 0x1F, X'1F', x'2e', 0b101, b'101', B'1'", 'SELECT ?, ...'],
    ["SELECT N'abc', n'def'", 'SELECT ?, ...'],
    ["SELECT _utf8mb4'abc', _latin1 'x', _binary'y'", 'SELECT _utf8mb4 ?, _latin1 ?, _binary ?'],
    [
      "SELECT DATE '2020-01-01', TIMESTAMP '2020-01-01 10:00:00', TIME '10:00'",
      'SELECT DATE ?, TIMESTAMP ?, TIME ?',
    ],
    ["SELECT {d '2020-01-01'}", 'SELECT {d ?}'],
    ['SELECT NULL, TRUE, FALSE', 'SELECT ?, TRUE, FALSE'],
    [
      'SELECT NOT NULL FROM t WHERE a = NULL OR b <=> NULL ORDER BY NULL',
      'SELECT NOT ? FROM t WHERE a = ? OR b <=> ? ORDER BY ?',
    ],
    [
      'CREATE TABLE t (a INT NULL, b VARCHAR(5) NOT NULL DEFAULT NULL, FOREIGN KEY (a) REFERENCES u (id) ON DELETE SET NULL)',
      'CREATE TABLE t (a INT NULL, b VARCHAR(?) NOT NULL DEFAULT ?, FOREIGN KEY (a) REFERENCES u (id) ON DELETE SET NULL)',
    ],
    [
      'SELECT * FROM t WHERE a IS NULL AND b IS NOT NULL AND c = NULL',
      'SELECT * FROM t WHERE a IS NULL AND b IS NOT NULL AND c = ?',
    ],
    ['SELECT ?, ? FROM t WHERE a = ?', 'SELECT ?, ... FROM t WHERE a = ?'],
    ['SET @a = 1, @b := 2', 'SET @? = ?, @? := ?'],
    ['SELECT @@version, @@session.sql_mode', 'SELECT @@version, @@session.sql_mode'],
  ];
  for (const [sql, want] of cases) {
    it(`${sql}`, () => assert.equal(obf(sql), want));
  }
});

describe('sql: signs, lists and rows as the server digests them', () => {
  const cases: [string, string][] = [
    ['SELECT -1, a - 1, a = -1, (-1), a * -1', 'SELECT ? , `a` - ? , `a` = - ? , (?) , `a` * ?'],
    [
      'SELECT a FROM t WHERE b IN (1, 2, 3) AND c IN (4)',
      'SELECT `a` FROM `t` WHERE `b` IN (...) AND `c` IN (?)',
    ],
    [
      'INSERT INTO t (a, b) VALUES (1, 2), (3, 4), (5, 6)',
      'INSERT INTO `t` ( `a` , `b` ) VALUES (...) /* , ... */',
    ],
    ['INSERT INTO t (a) VALUES (1), (2)', 'INSERT INTO `t` ( `a` ) VALUES (?) /* , ... */'],
    [
      'INSERT INTO t (a, b) VALUES (1, NULL), (NULL, 2)',
      'INSERT INTO `t` ( `a` , `b` ) VALUES (...) /* , ... */',
    ],
    ['SELECT f(1), f(1, 2), f(a, 1)', 'SELECT `f` (?) , `f` (...) , `f` ( `a` , ? )'],
    [
      'SELECT a FROM t WHERE (a, b) IN ((1, 2), (3, 4))',
      'SELECT `a` FROM `t` WHERE ( `a` , `b` ) IN ( (...) /* , ... */ )',
    ],
    ['SELECT CASE WHEN a > 1 THEN -1 ELSE -2 END', 'SELECT CASE WHEN `a` > ? THEN - ? ELSE - ? END'],
    ['SELECT a FROM t LIMIT 10, 20', 'SELECT `a` FROM `t` LIMIT ?, ...'],
    ['SELECT 1 - -1, - -1, NOT -1, !-1', 'SELECT ? - ?, ... , NOT ? , ! - ?'],
  ];
  for (const [sql, want] of cases) {
    it(`${sql}`, () => assert.equal(norm(sql), want));
  }
  it('obfuscated text keeps the original spelling and spacing', () => {
    assert.equal(
      obf('select a,b from t where c in (1,2,3) and d=-1'),
      'select a,b from t where c in (...) and d=-?',
    );
    assert.equal(obf("INSERT INTO t VALUES (1,'x'),(2,'y')"), 'INSERT INTO t VALUES (...) /* , ... */');
  });
});

describe('sql: keywords and names as the server prints them', () => {
  const cases: [string, string][] = [
    ['select count(*), count (a) from t', 'SELECT COUNT ( * ) , `count` ( `a` ) FROM `t`'],
    [
      'SELECT name, t.name, `name`, t.status FROM p.t',
      'SELECT NAME , `t` . `name` , `name` , `t` . `status` FROM `p` . `t`',
    ],
    ['SELECT a FROM t WHERE a <> 1 AND b REGEXP 2', 'SELECT `a` FROM `t` WHERE `a` != ? AND `b` RLIKE ?'],
    [
      'SELECT DATABASE(), USER(), CURRENT_TIMESTAMP, NOW()',
      'SELECT SCHEMA ( ) , SYSTEM_USER ( ) , NOW , NOW ( )',
    ],
    [
      'SELECT DATE_ADD(c, INTERVAL 1 DAY), CAST(a AS CHAR)',
      'SELECT DATE_ADD ( `c` , INTERVAL ? SQL_TSI_DAY ) , CAST ( `a` AS CHARACTER )',
    ],
    [
      'SELECT `a``b`, `select`, t.5, t.1abc, 123abc, 0xZZ, 0X41',
      'SELECT `a``b` , `select` , `t` . `5` , `t` . `1abc` , `123abc` , `0xZZ` , `0X41`',
    ],
    ["SELECT X'41', _utf8mb4'x'", 'SELECT (unknown) , (_charset) ?'],
    ['SELECT @a, @`b`, @@global.max_connections', 'SELECT @? , @`b` , @@GLOBAL . `max_connections`'],
    ['SHOW DATABASES', 'SHOW SCHEMAS'],
    [
      'SELECT DISTINCT a FROM t GROUP BY a WITH ROLLUP',
      'SELECT DISTINCTROW `a` FROM `t` GROUP BY `a` WITH ROLLUP',
    ],
  ];
  for (const [sql, want] of cases) {
    it(`${sql}`, () => assert.equal(norm(sql), want));
  }
});

describe('sql: comments, hints and executable comments', () => {
  it('removes the three comment forms', () => {
    assert.equal(obf('SELECT a /* x 1 */ FROM t -- y 2\nWHERE b = 3 # z 4'), 'SELECT a FROM t WHERE b = ?');
    assert.equal(
      norm('SELECT a /* x 1 */ FROM t -- y 2\nWHERE b = 3 # z 4'),
      'SELECT `a` FROM `t` WHERE `b` = ?',
    );
  });
  it('reads -- without a space as two minus signs', () => {
    assert.equal(norm('SELECT a--1 FROM t'), 'SELECT `a` - ? FROM `t`');
  });
  it('keeps hints in obfuscated text with their literals replaced, drops them from the digest form', () => {
    const sql =
      "SELECT /*+ MAX_EXECUTION_TIME(1000) SET_VAR(sort_buffer_size = 16777216) QB_NAME('q1') */ a FROM t";
    assert.equal(
      obf(sql),
      'SELECT /*+ MAX_EXECUTION_TIME(?) SET_VAR(sort_buffer_size = ?) QB_NAME(?) */ a FROM t',
    );
    assert.equal(norm(sql), 'SELECT `a` FROM `t`');
  });
  it('runs executable comments the server would run, drops the others', () => {
    const sql = 'SELECT /*!50000 a, */ /*!99999 b, */ /*M!100000 c, */ /*!110000 d, */ /*! 7, */ 1 FROM t';
    assert.equal(norm(sql), 'SELECT `a` , `c` , ?, ... FROM `t`');
    assert.equal(obf(sql), 'SELECT a, c, ?, ... FROM t');
    assert.equal(normalizeSql('SELECT /*!110000 d, */ 1', { serverVersion: 110400 }), 'SELECT `d` , ?');
    assert.equal(norm('SELECT /*!50700 secret, */ 1'), 'SELECT ?');
    const mysql = 'SELECT /*!80000 a, */ /*M!100000 b, */ 1';
    assert.equal(normalizeSql(mysql, { flavor: 'mysql', serverVersion: 80036 }), 'SELECT `a` , ?');
    assert.equal(normalizeSql(mysql), 'SELECT `b` , ?');
  });
  it('takes a word that starts with a digit for a value inside a hint', () => {
    assert.equal(
      obf('SELECT /*+ SET_VAR(sort_buffer_size = 16M) BKA(t1) */ a FROM t1'),
      'SELECT /*+ SET_VAR(sort_buffer_size = ?) BKA(t1) */ a FROM t1',
    );
  });
  it('removes an unterminated comment to the end', () => {
    assert.equal(obf("SELECT a FROM t /* WHERE b = 'zq1"), 'SELECT a FROM t');
  });
});

describe('sql: text that cannot be read with certainty', () => {
  it('replaces an unterminated string and everything after it', () => {
    assert.equal(obf("SELECT a FROM t WHERE b = 'zq1 AND c = 5"), 'SELECT a FROM t WHERE b = ?');
    assert.equal(obf('SELECT a FROM t WHERE b = "zq1'), 'SELECT a FROM t WHERE b = ?');
    assert.equal(obf("SELECT a FROM t WHERE b = 'zq1\\'"), 'SELECT a FROM t WHERE b = ?');
    assert.equal(obf("SELECT X'4142"), 'SELECT ?');
  });
  it('replaces a cut-off backtick name and a stray character', () => {
    assert.equal(obf('SELECT `a FROM t'), 'SELECT ?');
    assert.equal(obf('SELECT a FROM t WHERE b = \\N zq1'), 'SELECT a FROM t WHERE b = ?');
  });
  it('keeps a statement cut inside a number or a name readable', () => {
    assert.equal(obf('SELECT a FROM t WHERE b IN (1, 2, 3'), 'SELECT a FROM t WHERE b IN (?, ...');
    assert.equal(obf('SELECT a FROM t WHERE b = 12'), 'SELECT a FROM t WHERE b = ?');
  });
  it('reads a backslash both ways: the reading that parses wins, else both readings are masked', () => {
    // Backslash escapes (the default) read this to the end; NO_BACKSLASH_ESCAPES would not.
    assert.equal(
      obf("SELECT a FROM t WHERE b = 'O\\'Brien' AND c = 1"),
      'SELECT a FROM t WHERE b = ? AND c = ?',
    );
    // Under NO_BACKSLASH_ESCAPES 'C:\' ends at the backslash: zq2 is a string there.
    const path = "SELECT a FROM t WHERE b = 'C:\\' AND c = 'zq2'";
    assert.doesNotMatch(obfuscateSql(path, { noBackslashEscapes: true }), /zq2/);
    assert.equal(obfuscateSql(path, { noBackslashEscapes: true }), 'SELECT a FROM t WHERE b = ? AND c = ?');
    // Default mode: the escaped reading never ends, the other one does: both masked from there.
    assert.doesNotMatch(obf(path), /zq2/);
    // Text cut short inside an escaped string under the default mode: the other reading must not show it.
    const cut = "SELECT a FROM t WHERE b = 'it\\'s zq3 secret";
    assert.equal(obf(cut), 'SELECT a FROM t WHERE b = ?');
  });
  it('takes double quotes for a string, so ANSI_QUOTES names are hidden, never shown', () => {
    assert.equal(obf('SELECT "col" FROM t'), 'SELECT ? FROM t');
  });
  it('returns an empty text for empty input and blanks', () => {
    assert.equal(obf(''), '');
    assert.equal(obf('  \n\t '), '');
    assert.equal(norm('-- only a comment'), '');
  });
});

describe('sql: pathological input', () => {
  it('100 kB of quotes and backslashes: returns, leaks nothing', () => {
    const chunks = ["'", '\\', "\\'", "''", '"', '\\\\', 'zq9 '];
    let s = "SELECT a FROM t WHERE b = 'zq9";
    for (let i = 0; s.length < 100_000; i++) s += chunks[(i * 7 + (i >> 3)) % chunks.length];
    for (const out of [obf(s), norm(s), obfuscateSql(s, { noBackslashEscapes: true })]) {
      assert.doesNotMatch(out, /zq9/);
      assert.ok(out.startsWith('SELECT a FROM t WHERE b = ?') || out.startsWith('SELECT `a` FROM `t`'), out);
    }
  });
  it('deeply nested comments and parentheses: returns', () => {
    const nested = '/*'.repeat(20_000) + ' zq8 ' + '*/'.repeat(20_000);
    assert.doesNotMatch(obf(`SELECT 1 ${nested} FROM t`), /zq8/);
    const parens = '('.repeat(30_000) + '1' + ')'.repeat(30_000);
    assert.ok(norm(`SELECT ${parens}`).startsWith('SELECT ( ( '));
    const execs = '/*!50000 '.repeat(10_000) + "'zq7'" + ' */'.repeat(10_000);
    assert.doesNotMatch(obf(`SELECT ${execs}`), /zq7/);
  });
  it('a long IN list and a long VALUES list collapse to one token', () => {
    const list = Array.from({ length: 50_000 }, (_, i) => String(1_000_000 + i)).join(', ');
    assert.equal(obf(`SELECT a FROM t WHERE b IN (${list})`), 'SELECT a FROM t WHERE b IN (...)');
    const rows = Array.from({ length: 20_000 }, (_, i) => `(${i}, 'zq${i}')`).join(',');
    assert.equal(obf(`INSERT INTO t VALUES ${rows}`), 'INSERT INTO t VALUES (...) /* , ... */');
  });
  it('random characters never make it throw', () => {
    const alphabet = [
      "'",
      '"',
      '`',
      '\\',
      '/*',
      '*/',
      '--',
      '#',
      '\n',
      ' ',
      'a',
      '1',
      '(',
      ')',
      ',',
      '@',
      '.',
      '-',
      "X'",
      '0x',
      '/*!',
      '/*+',
    ];
    const rand = lcg(12345);
    for (let k = 0; k < 2000; k++) {
      let s = '';
      for (let j = rand(80); j > 0; j--) s += alphabet[rand(alphabet.length)];
      assert.equal(typeof obf(s), 'string');
      assert.equal(typeof norm(s), 'string');
    }
  });
  it('random statements with tricky literals never show a literal', () => {
    const rand = lcg(777);
    const inside = ["'", '"', '\\', '/*', '*/', '--', '#', '\n', '`', '?', ',', ')', 'zq5secret'];
    const literal = (k: number): string => {
      let body = 'zq5secret';
      for (let j = rand(8); j > 0; j--) body += inside[rand(inside.length)];
      const q = rand(2) === 0 ? "'" : '"';
      // Escape as a client library would: the quote doubled or backslashed, backslashes doubled.
      const escaped = body
        .replace(/\\/g, '\\\\')
        .replace(new RegExp(q, 'g'), rand(2) === 0 ? q + q : '\\' + q);
      return [
        q + escaped + q,
        `N${q === "'" ? q + escaped + q : "'zq5secret'"}`,
        `_utf8mb4${q}${escaped}${q}`,
      ][k % 3] as string;
    };
    const pieces = [
      'a',
      'name',
      't.b',
      '`c d`',
      '=',
      '(',
      ')',
      ',',
      '+',
      '-',
      'IN',
      'AND',
      'OR',
      'NULL',
      '/* c */',
      '-- c\n',
      '@v',
      '@@x',
      'COUNT(',
      '1.5',
      '0x1F',
    ];
    for (let k = 0; k < 3000; k++) {
      let s = 'SELECT ';
      for (let j = rand(12); j >= 0; j--)
        s += (rand(4) === 0 ? literal(k + j) : pieces[rand(pieces.length)]) + (rand(3) === 0 ? '' : ' ');
      s += literal(k);
      for (const out of [obf(s), norm(s)]) assert.doesNotMatch(out, /zq5secret/, `${s}\n-> ${out}`);
    }
  });
});

function lcg(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % n;
  };
}

describe('sql: fingerprint and digest length', () => {
  it('is equal for statements that differ only in literals and comments', () => {
    const a = sqlFingerprint("SELECT a FROM t WHERE b = 'x' AND c IN (1,2)");
    assert.equal(a, sqlFingerprint('select a from t /* c */ where b = "y" and c in (3, 4, 5)'));
    assert.notEqual(a, sqlFingerprint("SELECT a FROM t WHERE b = 'x' AND d IN (1,2)"));
    assert.match(a, /^[0-9a-f]{16}$/);
  });
  it('stops where the server token store (max_digest_length bytes) is full', () => {
    // SELECT (2 bytes) + 10 names of 4+3 bytes = 72 bytes; 40 bytes keep SELECT and 5 names.
    const sql = 'SELECT ' + Array.from({ length: 10 }, (_, i) => `c_${i}`).join(' ');
    assert.equal(normalizeSql(sql, { maxDigestLength: 40 }), 'SELECT `c_0` `c_1` `c_2` `c_3` `c_4`');
    assert.equal(normalizeSql(sql, { maxDigestLength: 1024 }).split('`c_').length, 11);
  });
});
