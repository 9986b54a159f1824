/**
 * A corpus of MySQL/MariaDB statements for the obfuscator's tests and bench, generated here:
 * statement templates with numbered slots, filled in turn with every literal form the lexer
 * must replace. Every literal carries a sentinel (`zq17a`, `7310017`, a hex or bit pattern
 * of its own…) that must never come out of `obfuscateSql` or `normalizeSql`.
 *
 * Slots: `?1` takes any literal form, `#1` an integer (LIMIT and the like), `$1` a quoted
 * string. `CORPUS_SCHEMA` creates the tables and the procedure the statements use, so most
 * of them run; those that fail still leave their digest in performance_schema.
 */

export interface CorpusEntry {
  sql: string;
  /** Texts that must not appear in the obfuscated or normal form. */
  sentinels: string[];
}

interface Literal {
  sql: string;
  sentinels: string[];
}

type Form = (i: number) => Literal;

const lit = (sql: string, ...sentinels: string[]): Literal => ({ sql, sentinels });
const hex = (n: number): string => n.toString(16);
const pad = (n: number): string => String(n).padStart(2, '0');

/** Every literal form, numbered by `i` so that each use has its own sentinel. */
const ANY_FORMS: Form[] = [
  (i) => lit(`'zq${i}a'`, `zq${i}a`),
  (i) => lit(`${7310000 + i}`, `${7310000 + i}`),
  (i) => lit(`'zq${i}b''s'`, `zq${i}b`),
  (i) => lit(`-${7320000 + i}`, `${7320000 + i}`),
  (i) => lit(`'zq${i}c\\'d'`, `zq${i}c`),
  (i) => lit(`${7330000 + i}.75`, `${7330000 + i}`),
  (i) => lit(`"zq${i}e"`, `zq${i}e`),
  (i) => lit(`${7340000 + i}e3`, `${7340000 + i}`),
  (i) => lit(`"zq${i}f\\"g"`, `zq${i}f`),
  (i) => lit(`0x${hex(0xabc00000 + i)}`, hex(0xabc00000 + i)),
  (i) => lit(`"zq${i}h""k"`, `zq${i}h`),
  (i) => lit(`X'${hex(0xabd00000 + i)}'`, hex(0xabd00000 + i)),
  (i) => lit(`N'zq${i}n'`, `zq${i}n`),
  (i) => lit(`b'${(0x40000 + i).toString(2)}'`, (0x40000 + i).toString(2)),
  (i) => lit(`_utf8mb4'zq${i}u'`, `zq${i}u`),
  (i) => lit(`0b${(0x50000 + i).toString(2)}`, (0x50000 + i).toString(2)),
  (i) => lit(`_latin1 'zq${i}l'`, `zq${i}l`),
  (i) => lit(`1.${7350000 + i}E-5`, `${7350000 + i}`),
  (i) =>
    lit(
      `DATE '2087-${pad((i % 12) + 1)}-${pad((i % 28) + 1)}'`,
      `2087-${pad((i % 12) + 1)}-${pad((i % 28) + 1)}`,
    ),
  (i) => lit(`.${7360000 + i}`, `${7360000 + i}`),
  (i) => lit(`TIMESTAMP '2088-01-02 03:${pad(i % 60)}:17'`, `2088-01-02 03:${pad(i % 60)}:17`),
  (i) => lit(`'zq${i}m\\\\'`, `zq${i}m`),
  (i) => lit(`{d '2089-0${(i % 9) + 1}-11'}`, `2089-0${(i % 9) + 1}-11`),
  (i) => lit(`_binary'zq${i}y'`, `zq${i}y`),
  (i) => lit(`+${7370000 + i}`, `${7370000 + i}`),
  (i) => lit(`'zq${i}p\\n\\t\\0\\%'`, `zq${i}p`),
  () => lit('NULL'),
  (i) => lit(`'zq${i}q it''s'`, `zq${i}q`),
  () => lit('TRUE'),
  (i) => lit(`-${7380000 + i}.5`, `${7380000 + i}`),
  () => lit('FALSE'),
  (i) => lit(`TIME '04:${pad(i % 60)}:59'`, `04:${pad(i % 60)}:59`),
];

const INT_FORMS: Form[] = [(i) => lit(`${7390000 + i}`, `${7390000 + i}`)];

const STRING_FORMS: Form[] = [
  (i) => lit(`'zq${i}r%'`, `zq${i}r`),
  (i) => lit(`"zq${i}s_"`, `zq${i}s`),
  (i) => lit(`'%zq${i}t\\_%'`, `zq${i}t`),
  (i) => lit(`'zq${i}v''%'`, `zq${i}v`),
];

/** Statement templates; each is filled several times with different literal forms. */
const TEMPLATES: string[] = [
  // SELECT: filters, operators, functions
  'SELECT id, customer_id, total FROM orders WHERE id = ?1',
  'SELECT * FROM orders WHERE customer_id = ?1 AND status = ?2',
  'select o.id, o.total from orders o where o.total > ?1 order by o.id desc limit #1',
  'SELECT id FROM orders WHERE customer_id IN (?1, ?2, ?3) AND total >= ?4',
  'SELECT id FROM orders WHERE id NOT IN (?1) OR note IS NULL',
  'SELECT name, email FROM customers WHERE name LIKE $1',
  "SELECT name FROM customers WHERE email LIKE $1 ESCAPE '\\\\' AND country <> ?1",
  'SELECT name FROM customers WHERE name NOT LIKE $1 AND score BETWEEN ?1 AND ?2',
  'SELECT COUNT(*), SUM(total), AVG(total), MAX(created) FROM orders WHERE created > ?1',
  'SELECT customer_id, COUNT(DISTINCT status) n FROM orders GROUP BY customer_id HAVING n > ?1',
  'SELECT id, CASE WHEN total > ?1 THEN ?2 WHEN total < ?3 THEN -1 ELSE ?4 END AS band FROM orders',
  'SELECT CONCAT(name, ?1), UPPER(email), SUBSTRING(name, #1, 3), COALESCE(note, ?2) FROM customers c JOIN orders o ON o.customer_id = c.id',
  'SELECT DATE_ADD(created, INTERVAL ?1 DAY), created - INTERVAL #1 HOUR, DATE_FORMAT(created, $1) FROM orders',
  'SELECT IFNULL(note, ?1), NULLIF(status, ?2), IF(total > ?3, ?4, ?5) FROM orders',
  'SELECT CAST(?1 AS CHAR), CONVERT(?2, SIGNED), CAST(total AS DECIMAL(10,2)) FROM orders',
  'SELECT ?1, ?2, ?3 FROM DUAL',
  'SELECT ?1 + ?2 * (?3 - id) / 2 % 7 FROM orders',
  'SELECT -?1, - ?2, ~?3, !?4, NOT ?5 FROM orders',
  'SELECT id FROM orders WHERE total = -?1 OR total < - ?2 OR (-?3) > total',
  'SELECT id FROM orders WHERE (customer_id, status) IN ((?1, ?2), (?3, ?4))',
  'SELECT id FROM orders WHERE flags & ?1 OR flags | ?2 OR flags ^ ?3 OR flags << #1 > 0',
  'SELECT name FROM customers WHERE email REGEXP $1 OR name RLIKE $2',
  'SELECT JSON_EXTRACT(?1, ?2), JSON_OBJECT(?3, id) FROM orders',
  'SELECT @v := ?1, @w := id FROM orders LIMIT #1',
  'SELECT ?1 AS first_value, ?2 AS `the alias`, total AS "amount" FROM orders',
  'SELECT id FROM orders WHERE created BETWEEN ?1 AND ?2 ORDER BY created LIMIT #1 OFFSET #2',
  'SELECT id FROM orders LIMIT #1, #2',
  'SELECT id FROM orders WHERE status = ?1 FOR UPDATE',
  'SELECT id FROM orders WHERE status = ?1 LOCK IN SHARE MODE',
  'SELECT SQL_NO_CACHE DISTINCT customer_id FROM orders WHERE total <=> ?1',
  'SELECT id FROM orders WHERE total != ?1 AND total <> ?2 AND total >= ?3 AND total <= ?4',
  'SELECT id FROM orders WHERE note IS NOT NULL AND status = ?1 XOR total > ?2',
  'SELECT id FROM orders WHERE status = ?1 && total > ?2 || note = ?3',
  'SELECT a.id, b.sku FROM orders a INNER JOIN items b ON a.id = b.order_id AND b.qty > ?1',
  'SELECT c.name, o.id FROM customers c LEFT JOIN orders o USING (id) WHERE c.country = ?1',
  'SELECT c.name FROM customers c RIGHT OUTER JOIN orders o ON o.customer_id = c.id WHERE o.total > ?1',
  'SELECT * FROM orders o STRAIGHT_JOIN items i ON i.order_id = o.id WHERE i.price > ?1',
  'SELECT id FROM orders WHERE customer_id = (SELECT id FROM customers WHERE email = ?1)',
  'SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM items i WHERE i.order_id = o.id AND i.sku = ?1)',
  'SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE score > ?1)',
  'SELECT t.n FROM (SELECT id AS n FROM orders WHERE total > ?1) AS t WHERE t.n < ?2',
  'WITH big AS (SELECT id, total FROM orders WHERE total > ?1) SELECT COUNT(*) FROM big',
  'WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < #1) SELECT n FROM seq',
  'SELECT id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY created DESC) AS rn FROM orders WHERE total > ?1',
  'SELECT id, SUM(total) OVER w, LAG(total, #1) OVER w FROM orders WINDOW w AS (ORDER BY id ROWS BETWEEN #2 PRECEDING AND CURRENT ROW)',
  'SELECT id, RANK() OVER (ORDER BY total), NTILE(#1) OVER (ORDER BY id) FROM orders WHERE status <> ?1',
  'SELECT id FROM orders WHERE status = ?1 UNION SELECT id FROM orders WHERE total > ?2',
  'SELECT id FROM orders WHERE total > ?1 UNION ALL SELECT order_id FROM items WHERE qty = ?2 ORDER BY 1',
  'SELECT customer_id, SUM(total) FROM orders GROUP BY customer_id WITH ROLLUP',
  'SELECT GROUP_CONCAT(sku ORDER BY sku SEPARATOR $1) FROM items WHERE order_id = ?1',
  'SELECT id FROM orders USE INDEX (PRIMARY) WHERE id > ?1',
  'SELECT id FROM orders FORCE INDEX (PRIMARY) WHERE id BETWEEN ?1 AND ?2',
  'SELECT id INTO @last FROM orders WHERE total = ?1 LIMIT 1',
  'SELECT name, id, status, data, `key`, `status` FROM customers, orders WHERE customers.id = ?1',
  'SELECT orders.status, customers.name FROM qa.orders JOIN qa.customers ON customers.id = orders.customer_id WHERE orders.id = ?1',
  'SELECT $1 $2 FROM orders',
  'SELECT id FROM orders WHERE note = $1 $2 $3',
  'SELECT CURRENT_DATE, CURRENT_TIMESTAMP, NOW(), USER(), DATABASE(), ?1',
  'SELECT id FROM orders WHERE created > CURDATE() - INTERVAL ?1 MONTH AND total > ?2',
  'SELECT EXTRACT(YEAR FROM created), POSITION(?1 IN note), TRIM(LEADING ?2 FROM note) FROM orders',
  'SELECT id FROM orders WHERE total > ?1 AND status IN (?2, NULL, ?3)',
  'SELECT id FROM orders WHERE status IN (NULL, ?1)',
  'SELECT id FROM orders WHERE status = NULL OR note <=> NULL OR total = ?1',
  'SELECT COUNT(*) FROM orders WHERE total > ((?1))',
  'SELECT id FROM orders WHERE customer_id = ?1 AND (status = ?2 OR (total > ?3 AND note LIKE $1))',
  'SELECT MAX(total) - MIN(total), STDDEV(total), VARIANCE(total) FROM orders WHERE customer_id = ?1',
  'select\n  id,\n\tcustomer_id\nfrom orders\nwhere status = ?1\n  and total > ?2',
  "SELECT note FROM orders WHERE note = 'zqc#1 é ü 漢字 🙂' OR note = ?1",
  'SELECT café, `naïve col` FROM orders WHERE id = ?1',
  'SELECT count, data, `key`, position FROM customers WHERE id = ?1',
  'SELECT o.count, t.select, x.from FROM orders o, orders t, orders x WHERE o.id = ?1',
  'SELECT MATCH (note) AGAINST ($1 IN BOOLEAN MODE) FROM orders',
  'SELECT id FROM orders PARTITION (p0) WHERE id = ?1',
  'INSERT INTO orders (customer_id, total) VALUES (?1, ?2) RETURNING id, total',
  'DELETE FROM items WHERE qty < ?1 RETURNING order_id',
  'INSERT INTO orders (customer_id) VALUE (?1)',
  "SELECT * FROM JSON_TABLE($1, '$[*]' COLUMNS (x INT PATH '$.a')) AS jt WHERE x > ?1",
  "CREATE USER IF NOT EXISTS 'zqc#1'@'localhost' IDENTIFIED BY $1",
  "GRANT SELECT ON qa.* TO 'zqc#1'@'localhost'",
  "SET PASSWORD FOR 'zqc#1'@'localhost' = PASSWORD($1)",
  "DROP USER IF EXISTS 'zqc#1'@'localhost'",
  'KILL #1',
  'SELECT id FROM orders WHERE total > ?1 INTO @zq_total',
  'SELECT ?1 IS TRUE, ?2 IS NOT FALSE, ?3 IS UNKNOWN',
  'SELECT ?1 = ?2, ?3 <=> ?4, ?5 != ?6',
  'SELECT ((?1 + ?2) * (?3 - ?4)) / ?5',
  'SELECT id FROM orders ORDER BY FIELD(status, ?1, ?2, ?3), id LIMIT #1',
  'SELECT SUM(CASE status WHEN ?1 THEN total ELSE 0 END) FROM orders',
  'SELECT id FROM orders WHERE created >= ?1 - INTERVAL #1 DAY AND created < ?2 + INTERVAL 1 MONTH',
  'SELECT LEFT(note, #1), RIGHT(note, #2), REPLACE(note, ?1, ?2), INSERT(note, 1, 2, ?3) FROM orders',
  'SELECT id FROM orders WHERE id = ?1; ',
  'ANALYZE TABLE orders',
  'CREATE TEMPORARY TABLE tmp_copy AS SELECT * FROM orders WHERE total > ?1',
  'DROP TEMPORARY TABLE IF EXISTS tmp_copy',
  'CREATE OR REPLACE VIEW v_big AS SELECT id FROM orders WHERE total > ?1',
  'SELECT COLUMN_GET(data, #1 AS CHAR), NEXT VALUE FOR zq_seq, NEXTVAL(zq_seq) FROM customers',
  'SELECT ?1 IN (?2), (?3, ?4) = (id, ?5), - (?6), - - ?7, - id FROM orders',
  'SELECT $1 COLLATE utf8mb4_bin, CHAR(#1 USING utf8mb4), CONVERT($2 USING latin1), BINARY $3',
  'SELECT INTERVAL #1 DAY + created, ?1 + INTERVAL #2 SECOND FROM orders',
  'SELECT user.user, user.host FROM mysql.user WHERE user.user = $1',
  'SELECT orders.*, c.* FROM orders JOIN customers c ON c.id = orders.customer_id AND c.name <> ?1',
  'SELECT @@sql_mode, @@global.max_connections, @@local.sort_buffer_size, ?1',
  'SHOW PROCEDURE STATUS LIKE $1',
  'SHOW FULL TABLES FROM qa WHERE Table_type = ?1',
  'SHOW SESSION VARIABLES WHERE Variable_name LIKE $1 AND Value <> ?1',
  'SELECT id FROM orders WHERE total = ANY (SELECT price FROM items WHERE qty >= ?1)',
  'SELECT id FROM orders WHERE status SOUNDS LIKE $1',
  'SELECT CAST(?1 AS UNSIGNED), CAST(?2 AS DATETIME(6)), CAST(?3 AS DOUBLE), CAST(?4 AS INTEGER)',
  'SELECT SUBSTR(note, #1), MID(note, #2, #3), STD(total), STDDEV_SAMP(total), LOCALTIMESTAMP FROM orders',
  'SELECT id FROM orders o1 NATURAL JOIN orders o2 CROSS JOIN items WHERE o1.total > ?1',
  'INSERT INTO orders (customer_id, total) SELECT id, ?1 FROM customers UNION ALL SELECT id, ?2 FROM customers',
  'SELECT id FROM orders WHERE (id, customer_id) = (?1, ?2) AND (total) > (?3)',
  'SELECT TIMESTAMPDIFF(DAY, created, ?1), TIMESTAMPADD(HOUR, #1, created) FROM orders',
  'SELECT a.b.c FROM orders WHERE id = ?1',
  'SELECT 1e, 1e5x, 2.5e, 0x, 0b2 FROM orders WHERE id = ?1',
  // comments, hints, executable comments
  'SELECT id FROM orders /* zqc#1 */ WHERE id = ?1',
  'SELECT id FROM orders WHERE id = ?1 -- zqc#1',
  'SELECT id FROM orders WHERE id = ?1 # zqc#1',
  '/* zqc#1 leading */ SELECT id FROM orders WHERE total > ?1',
  'SELECT /*+ MAX_EXECUTION_TIME(#1) */ id FROM orders WHERE status = ?1',
  'SELECT /*+ NO_RANGE_OPTIMIZATION(orders PRIMARY) */ id FROM orders WHERE id < ?1',
  'SELECT id /*!50000 , total */ FROM orders WHERE id = ?1',
  'SELECT id /*!99999 , zqc#1 */ FROM orders WHERE id = ?1',
  'SELECT id /*M!100200 , customer_id */ FROM orders WHERE total > ?1',
  'SELECT /*!40001 SQL_NO_CACHE */ id FROM orders WHERE id = ?1',
  'SELECT id FROM orders WHERE id = ?1 /*!50700 AND total = #1 */',
  // INSERT, REPLACE
  'INSERT INTO orders (customer_id, status, total, note) VALUES (?1, ?2, ?3, ?4)',
  'INSERT INTO orders (customer_id, total) VALUES (?1, ?2), (?3, ?4), (?5, ?6)',
  'INSERT INTO items (order_id, sku, qty) VALUES (?1, ?2, #1) ON DUPLICATE KEY UPDATE qty = qty + ?3',
  'INSERT INTO items (order_id, sku, qty) VALUES (?1, ?2, #1) ON DUPLICATE KEY UPDATE qty = VALUES(qty)',
  'INSERT IGNORE INTO customers (id, name, email) VALUES (#1, ?1, ?2)',
  'INSERT INTO customers SET id = #1, name = ?1, country = ?2',
  'INSERT INTO orders (customer_id) VALUES (?1)',
  'INSERT INTO orders (customer_id) VALUES (?1), (?2), (?3)',
  'INSERT INTO orders (customer_id, note) VALUES (?1, NULL), (NULL, ?2)',
  'INSERT INTO orders (customer_id, total) SELECT id, ?1 FROM customers WHERE country = ?2',
  'INSERT LOW_PRIORITY INTO items VALUES (?1, ?2, ?3, ?4)',
  'REPLACE INTO customers (id, name) VALUES (#1, ?1)',
  'REPLACE INTO customers SET id = #1, email = ?1',
  'REPLACE INTO items (order_id, sku, qty, price) VALUES (?1, ?2, ?3, ?4), (?5, ?6, ?7, ?8)',
  // UPDATE, DELETE
  'UPDATE orders SET status = ?1, total = total * ?2 WHERE id = ?3',
  'UPDATE orders SET note = NULL, total = -?1 WHERE customer_id IN (?2, ?3)',
  'UPDATE orders o JOIN customers c ON c.id = o.customer_id SET o.status = ?1 WHERE c.country = ?2',
  'UPDATE LOW_PRIORITY items SET qty = qty - #1 WHERE sku = ?1 ORDER BY order_id LIMIT #2',
  'UPDATE customers SET score = score + ?1, email = CONCAT(?2, email) WHERE id = #1',
  'DELETE FROM items WHERE order_id = ?1 AND sku = ?2',
  'DELETE FROM orders WHERE created < ?1 ORDER BY created LIMIT #1',
  'DELETE o FROM orders o LEFT JOIN items i ON i.order_id = o.id WHERE i.order_id IS NULL AND o.total < ?1',
  'DELETE FROM customers WHERE id IN (?1, ?2) OR email = ?3',
  // SET, SHOW, CALL, others
  'SET @zq = ?1',
  'SET @a = ?1, @b := ?2',
  'SET SESSION group_concat_max_len = #1',
  'SET @@session.max_statement_time = #1',
  'SET NAMES utf8mb4',
  'SET character_set_results = ?1',
  'SHOW TABLES LIKE $1',
  'SHOW VARIABLES LIKE $1',
  'SHOW GLOBAL STATUS WHERE Variable_name = ?1',
  'SHOW COLUMNS FROM orders LIKE $1',
  'SHOW INDEX FROM orders',
  'SHOW CREATE TABLE orders',
  'SHOW FULL PROCESSLIST',
  'CALL touch_order(?1, ?2)',
  'CALL touch_order(#1, NULL)',
  'DO ?1 + ?2',
  'EXPLAIN SELECT id FROM orders WHERE total > ?1',
  'DESCRIBE orders',
  "PREPARE zq_stmt FROM 'SELECT id FROM orders WHERE total > zqc#1 AND status = ?'",
  'EXECUTE zq_stmt USING ?1',
  'CREATE TEMPORARY TABLE IF NOT EXISTS tmp_zq (a INT NOT NULL DEFAULT #1, b VARCHAR(20) DEFAULT ?1)',
  'CREATE TEMPORARY TABLE IF NOT EXISTS tmp_zq2 (a INT NULL, b VARCHAR(#1) NULL DEFAULT NULL, c INT UNSIGNED NULL)',
  'CREATE TEMPORARY TABLE IF NOT EXISTS tmp_zq3 (a INT, FOREIGN KEY (a) REFERENCES orders (id) ON DELETE SET NULL ON UPDATE SET NULL)',
  'SELECT NOT NULL, ?1 FROM orders WHERE NOT NULL OR NULL IS NULL ORDER BY NULL',
  'ALTER TABLE orders COMMENT = $1',
  'BEGIN',
  'COMMIT',
  'SELECT SLEEP(0), BENCHMARK(#1, ?1)',
  // Longer than the server's digest store (max_digest_length, 1024 bytes): DIGEST_TEXT stops.
  `SELECT ${Array.from({ length: 100 }, (_, k) => `col_${k} + ?1`).join(', ')} FROM orders WHERE id = ?2`,
  `INSERT INTO orders (customer_id, note) VALUES ${Array.from({ length: 300 }, () => '(?1, ?2)').join(', ')}`,
];

const REPEATS = 4;

function fill(template: string, next: (forms: Form[]) => Literal): CorpusEntry {
  const sentinels: string[] = [];
  const cache = new Map<string, Literal>();
  const sql = template.replace(/([?#$])(\d)/g, (slot: string, kind: string) => {
    let l = cache.get(slot);
    if (l === undefined) {
      l = next(kind === '#' ? INT_FORMS : kind === '$' ? STRING_FORMS : ANY_FORMS);
      cache.set(slot, l);
      sentinels.push(...l.sentinels);
    }
    return l.sql;
  });
  // A comment's text must go too: `zqc<i>` in a comment is a sentinel of its own.
  const fixed = sql.replace(/zqc(\d+)/g, (m) => {
    sentinels.push(m);
    return m;
  });
  return { sql: fixed, sentinels };
}

/** A seeded generator of small integers (the corpus is the same on every run). */
function lcg(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    return (x >>> 15) % n;
  };
}

const COLUMNS = ['customer_id', 'total', 'o.total', '`note`', 'status', 'id', 'o.id', 'flags'];
const BINARY = [
  '+',
  '-',
  '*',
  '/',
  '%',
  'DIV',
  'MOD',
  '&',
  '|',
  '^',
  '<<',
  '>>',
  '=',
  '<>',
  '!=',
  '<',
  '<=',
  '>',
];
const LOGIC = ['AND', 'OR', 'XOR', '&&', '||', '>=', '<=>', 'LIKE', 'REGEXP'];
const FUNCTIONS = ['COALESCE', 'CONCAT', 'LEAST', 'GREATEST', 'f'];
const ONE_ARG = ['COUNT', 'SUM', 'MAX', 'ABS', 'IFNULL(o.id, 1) +'];

/** Random expressions over literals of every form, columns, operators, lists and functions. */
class Expressions {
  constructor(
    private readonly r: (n: number) => number,
    private readonly literal: () => Literal,
    private readonly sentinels: string[],
  ) {}

  private pick<T>(a: readonly T[]): T {
    return a[this.r(a.length)] as T;
  }

  private leaf(): string {
    if (this.r(2) === 0) return this.pick(COLUMNS);
    const l = this.literal();
    this.sentinels.push(...l.sentinels);
    return l.sql;
  }

  private list(depth: number, max: number): string {
    return Array.from({ length: 1 + this.r(max) }, () => this.expr(depth)).join(', ');
  }

  /** An operand: a leaf as it is, anything larger in parentheses (so that it parses). */
  private operand(depth: number): string {
    return depth <= 0 || this.r(3) === 0 ? this.leaf() : `(${this.expr(depth)})`;
  }

  expr(depth: number): string {
    if (depth <= 0) return this.leaf();
    const d = depth - 1;
    switch (this.r(11)) {
      case 0:
        return `${this.operand(d)} ${this.pick(BINARY)} ${this.operand(d)}`;
      case 1:
        return `${this.operand(d)} ${this.pick(LOGIC)} ${this.operand(d)}`;
      case 2:
        return `(${this.expr(d)})`;
      case 3:
        return `${this.pick(['-', '+', '~', '!', 'NOT ', '- '])}${this.operand(d)}`;
      case 4:
        return `${this.pick(COLUMNS)} ${this.pick(['IN', 'NOT IN'])} (${this.list(d - 1, 4)})`;
      case 5:
        return this.r(2) === 0
          ? `${this.pick(FUNCTIONS)}(${this.list(d, 3)})`
          : `${this.pick(ONE_ARG)}(${this.expr(d)})`;
      case 6:
        return `CASE WHEN ${this.expr(d)} THEN ${this.expr(d)} ELSE ${this.expr(d)} END`;
      case 7:
        return `${this.operand(d)} IS ${this.pick(['NULL', 'NOT NULL', 'TRUE', 'NOT FALSE'])}`;
      case 8:
        return `${this.operand(d)} BETWEEN ${this.operand(d)} AND ${this.operand(d)}`;
      case 9:
        return `(${this.list(d, 3)}) = (${this.list(d, 3)})`;
      default:
        return `${this.operand(d)} + INTERVAL ${this.leaf()} DAY`;
    }
  }
}

/** `count` random statements around random expressions. */
function randomStatements(count: number, next: (forms: Form[]) => Literal): CorpusEntry[] {
  const r = lcg(20261127);
  const out: CorpusEntry[] = [];
  for (let k = 0; k < count; k++) {
    const sentinels: string[] = [];
    const e = new Expressions(r, () => next(ANY_FORMS), sentinels);
    const rows = (): string =>
      Array.from({ length: 1 + r(3) }, () => `(${e.expr(1)}, ${e.expr(1)})`).join(', ');
    const forms = [
      () =>
        `SELECT ${e.expr(3)}, ${e.expr(2)} FROM orders o WHERE ${e.expr(3)} ORDER BY ${e.expr(1)} LIMIT ${r(9)}`,
      () => `INSERT INTO orders (customer_id, note) VALUES ${rows()}`,
      () => `UPDATE orders o SET total = ${e.expr(2)}, note = ${e.expr(1)} WHERE ${e.expr(3)}`,
      () => `DELETE FROM orders WHERE ${e.expr(3)}`,
      () => `SELECT ${e.expr(4)}`,
    ];
    const sql = (forms[r(forms.length)] as () => string)();
    out.push({ sql, sentinels });
  }
  return out;
}

/** Statements made of random expressions, after the templates. */
const RANDOM_STATEMENTS = 300;

/**
 * The corpus: every template filled `REPEATS` times, literal forms taken in turn, then
 * `RANDOM_STATEMENTS` statements around random expressions.
 */
export function buildCorpus(): CorpusEntry[] {
  let i = 0;
  const turn = new Map<Form[], number>();
  const next = (forms: Form[]): Literal => {
    const k = turn.get(forms) ?? 0;
    turn.set(forms, k + 1);
    i++;
    return (forms[k % forms.length] as Form)(i);
  };
  const out: CorpusEntry[] = [];
  for (let r = 0; r < REPEATS; r++) {
    for (const t of TEMPLATES) {
      if (r > 0 && !/[?#$]\d/.test(t)) continue;
      out.push(fill(t, next));
    }
  }
  return [...out, ...randomStatements(RANDOM_STATEMENTS, next)];
}

/** The schema the corpus runs against (database `qa`), and a few rows. */
export const CORPUS_SCHEMA: string[] = [
  'CREATE DATABASE IF NOT EXISTS qa',
  'USE qa',
  `CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50), email VARCHAR(80), country CHAR(2),
     score DOUBLE, birth DATE, status VARCHAR(10), data BLOB, \`key\` INT)`,
  `CREATE TABLE orders (id INT PRIMARY KEY AUTO_INCREMENT, customer_id INT, status VARCHAR(20),
     total DECIMAL(12,2), note TEXT, created DATETIME DEFAULT CURRENT_TIMESTAMP, flags INT DEFAULT 0)`,
  `CREATE TABLE items (order_id INT, sku VARCHAR(20), qty INT, price DECIMAL(10,2),
     PRIMARY KEY (order_id, sku))`,
  "INSERT INTO customers (id, name, email, country, score) VALUES (1, 'Ann', 'ann@example.com', 'FR', 3.5), (2, 'Bo', 'bo@example.com', 'SE', 1)",
  "INSERT INTO orders (customer_id, status, total, note) VALUES (1, 'new', 10, NULL), (2, 'paid', 20, 'gift')",
  "INSERT INTO items VALUES (1, 'A-1', 2, 5), (2, 'B-2', 1, 20)",
  `CREATE PROCEDURE touch_order(IN oid INT, IN txt VARCHAR(50))
     UPDATE orders SET note = txt WHERE id = oid`,
];
