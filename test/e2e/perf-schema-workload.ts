/**
 * Work that gives the performance_schema and sys scrapers rows on a throwaway MariaDB: digests
 * with a default schema (performance_schema records statements without one with SCHEMA_NAME
 * NULL, which the digest scraper never selects), table and index I/O, table locks (SQL and
 * external), a failing statement and a warning. Needs the `shop.orders` table; writes only
 * when `write` is set (a replica gets the reads).
 */
import { createConnection } from 'mysql2/promise';
import type { MariaDB } from '../helpers/mariadb.js';

/** The statements run with `shop` as the default schema. */
export const SHOP_READS = [
  'SELECT COUNT(*) FROM orders',
  'SELECT v FROM orders WHERE id = 3',
  'SELECT id FROM orders ORDER BY v DESC LIMIT 5',
  'SELECT o.id FROM orders o JOIN orders p ON p.v = o.v',
];

export async function perfSchemaWorkload(server: MariaDB, write: boolean): Promise<void> {
  const c = await createConnection({ socketPath: server.socket, user: 'root', database: 'shop' });
  try {
    if (write) {
      await c.query("UPDATE orders SET v = 'o-updated' WHERE id = 2");
      await c.query('DELETE FROM orders WHERE id = 20');
      await c.query("INSERT INTO orders (v) VALUES ('o20')");
      // A warning (truncated value) and an error (no such table) for their counters.
      await c.query("SET STATEMENT sql_mode='' FOR INSERT INTO orders (v) VALUES (REPEAT('w', 30))");
    }
    await c.query('SELECT * FROM no_such_table').catch(() => undefined);
    for (const sql of SHOP_READS) await c.query(sql);
    // Explicit SQL locks: read_normal and write_normal, then released.
    await c.query('LOCK TABLES orders READ');
    await c.query('SELECT COUNT(*) FROM orders');
    await c.query('UNLOCK TABLES');
    if (write) {
      await c.query('LOCK TABLES orders WRITE');
      await c.query("UPDATE orders SET v = 'o-locked' WHERE id = 1");
      await c.query('UNLOCK TABLES');
    }
  } finally {
    await c.end();
  }
}
