/**
 * The obfuscator against the server itself: every statement of the corpus runs on a
 * throwaway MariaDB with performance_schema on; for each event, `normalizeSql(SQL_TEXT)`
 * must equal the server's DIGEST_TEXT (modulo whitespace and case) in at least 95 % of the
 * statements, and no sentinel literal may come out of `obfuscateSql` or `normalizeSql` in
 * any of them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startMariaDB, type MariaDB } from '../../test/helpers/mariadb.js';
import { buildCorpus, CORPUS_SCHEMA, type CorpusEntry } from './corpus.fixture.js';
import { normalizeSql, obfuscateSql } from './obfuscate.js';

interface Event {
  sql: string;
  digest: string | null;
}

const fold = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

function leaks(text: string, entry: CorpusEntry): string[] {
  const lower = text.toLowerCase();
  return entry.sentinels.filter((s) => lower.includes(s.toLowerCase()));
}

describe('sql: normalizeSql against the server digest (MariaDB, performance_schema)', () => {
  const corpus = buildCorpus();
  let db: MariaDB;
  let conn: Connection;
  let events: Event[] = [];
  let maxDigestLength = 1024;

  before(async () => {
    db = await startMariaDB({
      args: [
        '--performance-schema=ON',
        '--performance-schema-consumer-events-statements-current=ON',
        '--performance-schema-consumer-events-statements-history-long=ON',
        `--performance-schema-events-statements-history-long-size=${corpus.length + 200}`,
        '--performance-schema-max-sql-text-length=16384',
      ],
    });
    conn = await createConnection({ socketPath: db.socket, user: 'root' });
    const [me] = await conn.query<RowDataPacket[]>(
      'SELECT THREAD_ID AS id FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()',
    );
    for (const stmt of CORPUS_SCHEMA) await conn.query(stmt);
    for (const entry of corpus) {
      // A statement that fails still leaves its event, and its digest when it parsed.
      await conn.query(entry.sql).catch(() => undefined);
    }
    // Read on another connection: the corpus changes its own session's settings.
    await conn.end();
    conn = await createConnection({ socketPath: db.socket, user: 'root' });
    const [vars] = await conn.query<RowDataPacket[]>(
      'SELECT LEAST(@@max_digest_length, @@performance_schema_max_digest_length) AS n',
    );
    maxDigestLength = Number(vars[0]?.n);
    const [rows] = await conn.query<RowDataPacket[]>(
      `SELECT SQL_TEXT AS sql_text, DIGEST_TEXT AS digest_text
         FROM performance_schema.events_statements_history_long
        WHERE THREAD_ID = ? AND NESTING_EVENT_ID IS NULL
        ORDER BY EVENT_ID`,
      [me[0]?.id],
    );
    events = rows.map((r) => ({
      sql: String(r.sql_text),
      digest: r.digest_text === null ? null : String(r.digest_text),
    }));
  });

  after(async () => {
    await conn?.end().catch(() => undefined);
    await db?.stop();
  });

  /** Each corpus entry with its event: the thread's events in order, from the first entry on. */
  function pairs(): { entry: CorpusEntry; event: Event | undefined }[] {
    const first = events.findIndex((e) => e.sql === corpus[0]?.sql);
    return corpus.map((entry, k) => ({ entry, event: first < 0 ? undefined : events[first + k] }));
  }

  it('records an event for every corpus statement, in order', () => {
    assert.ok(corpus.length >= 300, `corpus has ${corpus.length} statements`);
    // The server keeps the text up to the first `;` and stores characters beyond the BMP as `?`.
    const serverText = (s: string): string =>
      s.replace(/[\u{10000}-\u{10FFFF}]/gu, '????').replace(/[;\s]+$/, '');
    const wrong = pairs()
      .filter(({ entry, event }) => event === undefined || serverText(entry.sql) !== event.sql)
      .map(({ entry, event }) => `${entry.sql}\n  event: ${event?.sql ?? '(none)'}`);
    assert.deepEqual(wrong, []);
  });

  it('normalizeSql(SQL_TEXT) equals DIGEST_TEXT in at least 95 % of the statements', (t) => {
    const withDigest = pairs().flatMap(({ event }) => (event?.digest == null ? [] : [event]));
    const mismatches: string[] = [];
    for (const e of withDigest) {
      const ours = normalizeSql(e.sql, { maxDigestLength });
      if (fold(ours) !== fold(e.digest ?? '')) {
        mismatches.push(`SQL_TEXT:    ${e.sql}\n  DIGEST_TEXT: ${e.digest ?? ''}\n  sonde:       ${ours}`);
      }
    }
    const rate = (withDigest.length - mismatches.length) / withDigest.length;
    t.diagnostic(
      `digest match: ${withDigest.length - mismatches.length}/${withDigest.length} = ${(rate * 100).toFixed(1)} % ` +
        `(${corpus.length - withDigest.length} statements without a digest: the parser refused them)`,
    );
    for (const m of mismatches) t.diagnostic(`mismatch\n  ${m}`);
    assert.ok(withDigest.length >= corpus.length * 0.9, `only ${withDigest.length} statements parsed`);
    assert.ok(rate >= 0.95, `match rate ${(rate * 100).toFixed(1)} %:\n${mismatches.join('\n')}`);
  });

  it('lets no literal through, in any statement, obfuscated or normalized', () => {
    const found: string[] = [];
    for (const { entry, event } of pairs()) {
      for (const text of [entry.sql, event?.sql ?? '']) {
        for (const out of [obfuscateSql(text), normalizeSql(text)]) {
          const leaked = leaks(out, entry);
          if (leaked.length > 0) found.push(`${text}\n  -> ${out}\n  leaked ${leaked.join(', ')}`);
        }
      }
    }
    assert.deepEqual(found, []);
  });

  it('the server digests leave the sentinels out too (they are literals)', () => {
    const found = pairs().flatMap(({ entry, event }) =>
      event?.digest == null ? [] : leaks(event.digest, entry),
    );
    assert.deepEqual(found, []);
  });
});
