/**
 * The heartbeat table (see docs/heartbeat.md): its DDL and how a configured name becomes SQL.
 */

/** Default table, used by both the writer (`heartbeat.table`) and the reader (`table` option). */
export const DEFAULT_HEARTBEAT_TABLE = 'blip.heartbeat';

/**
 * DDL of the heartbeat table (never created by sonde: the DBA creates it once on the
 * writable source and it replicates). `freq` is milliseconds in a smallint, so a
 * heartbeat frequency above 65.535 s cannot be stored.
 */
export const HEARTBEAT_TABLE_DDL = `CREATE TABLE IF NOT EXISTS heartbeat (
  src_id   varchar(200)      NOT NULL PRIMARY KEY,
  src_role varchar(200)          NULL DEFAULT NULL,
  ts       timestamp(3)      NOT NULL,  -- heartbeat
  freq     smallint unsigned NOT NULL   -- milliseconds
) ENGINE=InnoDB`;

/** Largest heartbeat frequency the `freq` column can hold, in milliseconds. */
export const MAX_FREQ_MS = 65_535;

function quoteIdent(name: string): string {
  return '`' + name.replaceAll('`', '``') + '`';
}

function unquote(part: string): string {
  const p = part.trim();
  if (p.length >= 2 && p.startsWith('`') && p.endsWith('`')) return p.slice(1, -1).replaceAll('``', '`');
  return p;
}

/**
 * `tbl` → `` `blip`.`tbl` ``, `db.tbl` → `` `db`.`tbl` `` (already back-quoted parts are
 * accepted). Each part is quoted, so a table option can never inject SQL. Throws on an
 * empty name or part.
 */
export function heartbeatTableSql(name: string = DEFAULT_HEARTBEAT_TABLE): string {
  const text = name.trim() === '' ? DEFAULT_HEARTBEAT_TABLE : name.trim();
  // Split on the first dot outside back-quotes.
  let dot = -1;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '`') quoted = !quoted;
    else if (ch === '.' && !quoted) {
      dot = i;
      break;
    }
  }
  const db = dot < 0 ? 'blip' : unquote(text.slice(0, dot));
  const tbl = unquote(dot < 0 ? text : text.slice(dot + 1));
  if (db === '' || tbl === '') throw new Error(`invalid heartbeat table name: "${name}"`);
  return `${quoteIdent(db)}.${quoteIdent(tbl)}`;
}
