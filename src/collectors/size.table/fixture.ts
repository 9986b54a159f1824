/**
 * Test fixture shared by the size.table and size.database tests: schemas and tables with
 * known row counts on a throwaway MariaDB.
 *
 * MyISAM tables with ROW_FORMAT=FIXED and no index have sizes known in advance:
 * data_length = rows × 15 (1 flag byte + INT 4 + CHAR(10) 10) and index_length = 1024 (the
 * empty index file header), so tests can assert absolute byte counts, not only agreement
 * with information_schema. InnoDB tables are ANALYZEd so their statistics are current.
 */
import type { MariaDB } from '../../../test/helpers/mariadb.js';

/** Bytes per row of a fixture MyISAM table. */
const MYISAM_ROW_BYTES = 15;
/** index_length of a MyISAM table without indexes. */
const MYISAM_INDEX_BYTES = 1024;

/** Size of a fixture MyISAM table with `rows` rows. */
export function myisamBytes(rows: number): number {
  return rows * MYISAM_ROW_BYTES + MYISAM_INDEX_BYTES;
}

/** The fixed-size MyISAM tables: db, table, rows. Sizes are all different. */
export const MYISAM_TABLES: readonly { db: string; tbl: string; rows: number }[] = [
  { db: 'shop', tbl: 'orders', rows: 200 },
  { db: 'shop', tbl: 'items', rows: 50 },
  { db: 'shop', tbl: 'Items', rows: 51 },
  { db: 'app', tbl: 'users', rows: 10 },
  { db: 'app', tbl: 'sessions', rows: 0 },
  { db: 'app', tbl: 'tmp_1', rows: 1 },
  { db: 'app', tbl: 'tmpx1', rows: 2 },
  { db: 'logs', tbl: 'log_2024', rows: 1000 },
  { db: 'logs', tbl: 'log_2025', rows: 300 },
];

/** InnoDB tables: db, table, rows (sizes come from InnoDB statistics). */
const INNODB_TABLES: readonly { db: string; tbl: string; rows: number }[] = [
  { db: 'shop', tbl: 'customers', rows: 3000 },
  { db: 'app', tbl: 'events', rows: 500 },
];

/** Views: reported by size.table with 0 bytes, worth nothing in size.database. */
const VIEWS: readonly { db: string; tbl: string }[] = [
  { db: 'shop', tbl: 'v_orders' },
  { db: 'views_only', tbl: 'v_one' },
];

/** Every fixture table and view as `db.tbl`, sorted. */
export function fixtureNames(): string[] {
  return [...MYISAM_TABLES, ...INNODB_TABLES, ...VIEWS].map((t) => `${t.db}.${t.tbl}`).sort();
}

/** Insert `n` rows in batches of multi-row VALUES built by `row(i)`. */
async function insertRows(
  server: MariaDB,
  table: string,
  n: number,
  row: (i: number) => string,
): Promise<void> {
  for (let start = 0; start < n; start += 500) {
    const count = Math.min(500, n - start);
    const values = Array.from({ length: count }, (_, k) => row(start + k)).join(', ');
    await server.query(`INSERT INTO ${table} VALUES ${values}`);
  }
}

/**
 * Create the fixture: schemas shop, app, logs, views_only (a view only) and empty_db (no
 * tables), then ANALYZE every table.
 */
export async function createSizeFixture(server: MariaDB): Promise<void> {
  for (const db of ['shop', 'app', 'logs', 'views_only', 'empty_db'])
    await server.query(`CREATE DATABASE ${db}`);
  for (const t of MYISAM_TABLES) {
    const name = `\`${t.db}\`.\`${t.tbl}\``;
    await server.query(
      `CREATE TABLE ${name} (id INT NOT NULL, c CHAR(10) NOT NULL) ENGINE=MyISAM ROW_FORMAT=FIXED`,
    );
    await insertRows(server, name, t.rows, (i) => `(${i}, 'r${i % 1000}')`);
  }
  for (const t of INNODB_TABLES) {
    const name = `\`${t.db}\`.\`${t.tbl}\``;
    await server.query(
      `CREATE TABLE ${name} (id INT NOT NULL PRIMARY KEY, v VARCHAR(100) NOT NULL, KEY (v)) ENGINE=InnoDB`,
    );
    await insertRows(server, name, t.rows, (i) => `(${i}, '${'v'.repeat(20)}${i}')`);
  }
  await server.query('CREATE VIEW shop.v_orders AS SELECT id FROM shop.orders');
  await server.query('CREATE VIEW views_only.v_one AS SELECT 1 AS one');
  const all = [...MYISAM_TABLES, ...INNODB_TABLES].map((t) => `\`${t.db}\`.\`${t.tbl}\``).join(', ');
  await server.query(`ANALYZE TABLE ${all}`);
}
