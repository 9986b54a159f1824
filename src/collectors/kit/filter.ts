/**
 * Schema/table include-exclude filters shared by size.table, autoinc, wait.io.table (table
 * filters) and size.database (schema filter).
 *
 * The point of a filter is to let the *server* drop what is not wanted: every filter turns
 * into a parameterised SQL condition (`condition()`), so a monitor with thousands of tables
 * only gets back the rows it asked for. `matches()` gives the same answer in JavaScript for
 * rows that were fetched anyway and for tests.
 *
 * Table filter tokens (comma-separated, spaces around tokens trimmed, empty tokens ignored):
 *
 * | token      | selects                                  | SQL                               |
 * |------------|------------------------------------------|-----------------------------------|
 * | `db.*`     | every table of schema `db`               | `(schema = ?)`                    |
 * | `db.tbl`   | table `tbl` of schema `db`               | `(schema = ? AND table = ?)`      |
 * | `tbl`      | tables named `tbl` in any schema         | `(table = ?)`                     |
 * | `*.tbl`    | same as `tbl` (sonde extension)          | `(table = ?)`                     |
 * | `app_*.*`  | glob: `*` in a part matches any run      | `(schema LIKE ? ESCAPE '!')`      |
 *
 * (In the SQL actually built, every `?` is `CAST(? AS BINARY)`, see patternSql.)
 *
 * A part beyond the second (`a.b.c`) is ignored, as Blip does. `*` is the only wildcard:
 * SQL's `%` and `_` are matched literally (escaped). Blip compares every part with `=`, so a
 * Blip plan whose names contain no `*` selects the same tables here, except that sonde never
 * lets `Items` match `items` (see below).
 *
 * `include` (when it has at least one token) selects the union of its tokens and `exclude`
 * is then ignored; otherwise `exclude` removes its tokens. The default exclude
 * ({@link DEFAULT_TABLE_EXCLUDE}) applies only when the `exclude` key is absent: an explicit
 * empty `exclude` means "no filter at all" (system schemas included).
 *
 * Name comparison is exact and case-sensitive, as identifiers are on Linux servers, both
 * in `matches()` and in SQL (binary comparison). size.database's entries keep Blip's plain
 * `IN` / `LIKE`, so there the column collation decides.
 */

/** A parameterised SQL condition: `sql` holds one `?` per entry of `params`. */
export interface SqlCondition {
  sql: string;
  params: string[];
}

/** Exclude applied by size.table, autoinc and wait.io.table when the option is absent. */
export const DEFAULT_TABLE_EXCLUDE = 'mysql.*,information_schema.*,performance_schema.*,sys.*';

/** Exclude applied by size.database when the option is absent or empty. */
export const DEFAULT_SCHEMA_EXCLUDE = 'mysql,information_schema,performance_schema,sys';

/** How a filter selects: by its include list, by its exclude list, or not at all. */
export type FilterMode = 'include' | 'exclude' | 'all';

/**
 * One part of a token: an exact name, or a glob with `*`. An absent part (`undefined` in
 * {@link TableToken}) places no condition on its column.
 */
export interface NamePattern {
  /** The text as written, e.g. `app_*`. */
  readonly text: string;
  /** True when the text contains `*` (compared with LIKE instead of `=`). */
  readonly glob: boolean;
}

/** One parsed table token. */
export interface TableToken {
  /** As written (trimmed). */
  readonly text: string;
  readonly db: NamePattern | undefined;
  readonly tbl: NamePattern | undefined;
}

/** A parsed table filter. */
export interface TableFilter {
  readonly mode: FilterMode;
  /** The tokens of the list in use (include or exclude); empty when mode is `all`. */
  readonly tokens: readonly TableToken[];
  /**
   * Whether table `db`.`tbl` is selected. Without `tbl` the question is about the schema
   * as a whole: only schema-wide tokens (`db.*`) count, tokens naming a table are ignored.
   */
  matches(db: string, tbl?: string): boolean;
  /**
   * The filter as a condition on the given columns (e.g. `C.TABLE_SCHEMA`, `C.TABLE_NAME`),
   * wrapped in parentheses so it can be joined with AND; undefined when nothing is filtered.
   */
  condition(schemaCol: string, tableCol: string): SqlCondition | undefined;
}

/** A parsed schema filter (size.database). */
export interface SchemaFilter {
  readonly mode: Exclude<FilterMode, 'all'>;
  /** Schema names, or LIKE patterns when `like` is true. */
  readonly names: readonly string[];
  readonly like: boolean;
  /** Whether schema `db` is selected. */
  matches(db: string): boolean;
  /** The filter as a parenthesised condition on `schemaCol`. */
  condition(schemaCol: string): SqlCondition;
}

/** Column references are put into SQL text, so only plain (optionally qualified) identifiers pass. */
const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

function checkColumn(col: string): string {
  if (!COLUMN.test(col)) throw new Error(`invalid column reference for a filter: ${col}`);
  return col;
}

/** Split a comma-separated list, trimming each entry and dropping empty ones. */
export function splitList(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

const regexCache = new Map<string, RegExp>();

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `*` glob → anchored RegExp. */
function globRegex(glob: string): RegExp {
  const key = `g\0${glob}`;
  let re = regexCache.get(key);
  if (re === undefined) {
    re = new RegExp(`^${glob.split('*').map(escapeRegex).join('.*')}$`, 's');
    regexCache.set(key, re);
  }
  return re;
}

/** SQL LIKE pattern (`%`, `_`, backslash escapes) → anchored RegExp. */
function likeRegex(pattern: string): RegExp {
  const key = `l\0${pattern}`;
  let re = regexCache.get(key);
  if (re === undefined) {
    let src = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i] ?? '';
      if (c === '\\' && i + 1 < pattern.length) src += escapeRegex(pattern[++i] ?? '');
      else if (c === '%') src += '.*';
      else if (c === '_') src += '.';
      else src += escapeRegex(c);
    }
    re = new RegExp(`^${src}$`, 's');
    regexCache.set(key, re);
  }
  return re;
}

/**
 * `*` glob → LIKE pattern for `LIKE ? ESCAPE '!'`. `!` is the escape character rather
 * than backslash so the SQL means the same with and without NO_BACKSLASH_ESCAPES.
 */
export function globToLike(glob: string): string {
  return glob.replace(/[!%_]/g, '!$&').replace(/\*/g, '%');
}

function pattern(text: string): NamePattern | undefined {
  if (text === '*') return undefined;
  return { text, glob: text.includes('*') };
}

function patternMatches(p: NamePattern | undefined, name: string): boolean {
  if (p === undefined) return true;
  return p.glob ? globRegex(p.text).test(name) : p.text === name;
}

/**
 * One part as SQL. The bound value is cast to BINARY so the comparison is exact and
 * case-sensitive on every server: MariaDB's information_schema columns use a
 * case-insensitive collation, and there `table_name = 'Items'` inside an OR also selects
 * `items`. The cast keeps MariaDB's information_schema lookup (`table_schema = <const>`
 * still scans one schema only, checked with EXPLAIN).
 */
function patternSql(p: NamePattern, col: string, params: string[]): string {
  if (p.glob) {
    params.push(globToLike(p.text));
    return `${col} LIKE CAST(? AS BINARY) ESCAPE '!'`;
  }
  params.push(p.text);
  return `${col} = CAST(? AS BINARY)`;
}

/**
 * Parse one table token. Throws on an empty part (`db.`, `.tbl`), which would silently
 * match nothing.
 */
export function parseTableToken(text: string): TableToken {
  const parts = text.split('.');
  const [a = '', b] = parts;
  if (a === '' || b === '')
    throw new Error(`invalid table filter entry "${text}": empty schema or table name`);
  if (b === undefined) return { text, db: undefined, tbl: pattern(a) };
  return { text, db: pattern(a), tbl: pattern(b) };
}

function tokenMatches(t: TableToken, db: string, tbl: string | undefined): boolean {
  if (!patternMatches(t.db, db)) return false;
  if (t.tbl === undefined) return true;
  return tbl !== undefined && patternMatches(t.tbl, tbl);
}

function tokenSql(t: TableToken, schemaCol: string, tableCol: string, params: string[]): string {
  const parts: string[] = [];
  if (t.db !== undefined) parts.push(patternSql(t.db, schemaCol, params));
  if (t.tbl !== undefined) parts.push(patternSql(t.tbl, tableCol, params));
  return `(${parts.length === 0 ? '1 = 1' : parts.join(' AND ')})`;
}

/**
 * Parse the `include` and `exclude` options of a table-filtering domain. Pass the raw
 * option values (not lowercased: names are case-sensitive), `undefined` when the key is
 * absent from the plan. Throws on a malformed token (plan preparation then fails, naming it).
 */
export function parseTableFilter(include: string | undefined, exclude: string | undefined): TableFilter {
  const inc = splitList(include);
  let mode: FilterMode;
  let texts: string[];
  if (inc.length > 0) {
    mode = 'include';
    texts = inc;
  } else {
    texts = splitList(exclude ?? DEFAULT_TABLE_EXCLUDE);
    mode = texts.length > 0 ? 'exclude' : 'all';
  }
  const tokens = texts.map(parseTableToken);
  return {
    mode,
    tokens,
    matches(db: string, tbl?: string): boolean {
      if (mode === 'all') return true;
      const hit = tokens.some((t) => tokenMatches(t, db, tbl));
      return mode === 'include' ? hit : !hit;
    },
    condition(schemaCol: string, tableCol: string): SqlCondition | undefined {
      if (mode === 'all') return undefined;
      checkColumn(schemaCol);
      checkColumn(tableCol);
      const params: string[] = [];
      const each = tokens.map((t) => tokenSql(t, schemaCol, tableCol, params));
      const sql = mode === 'include' ? each.join(' OR ') : each.map((s) => `NOT ${s}`).join(' AND ');
      return { sql: `(${sql})`, params };
    },
  };
}

/**
 * Parse size.database's `include`, `exclude` and `like` options. `include` (non-empty)
 * wins; otherwise `exclude`, or {@link DEFAULT_SCHEMA_EXCLUDE} when it is absent or empty.
 * Without `like`, names are exact and a trailing `.*` is dropped (`mysql.*` = `mysql`, so
 * size.table's list can be reused); with `like`, entries are SQL LIKE patterns.
 */
export function parseSchemaFilter(
  include: string | undefined,
  exclude: string | undefined,
  like = false,
): SchemaFilter {
  let mode: 'include' | 'exclude' = 'include';
  let names = splitList(include);
  if (names.length === 0) {
    mode = 'exclude';
    names = splitList(exclude);
    if (names.length === 0) names = splitList(DEFAULT_SCHEMA_EXCLUDE);
  }
  if (!like) names = names.map((n) => (n.endsWith('.*') && n.length > 2 ? n.slice(0, -2) : n));
  const set = new Set(names);
  return {
    mode,
    names,
    like,
    matches(db: string): boolean {
      const hit = like ? names.some((p) => likeRegex(p).test(db)) : set.has(db);
      return mode === 'include' ? hit : !hit;
    },
    condition(schemaCol: string): SqlCondition {
      const col = checkColumn(schemaCol);
      const params = [...names];
      if (!like) {
        const list = names.map(() => '?').join(', ');
        return { sql: `(${col} ${mode === 'include' ? 'IN' : 'NOT IN'} (${list}))`, params };
      }
      const sql =
        mode === 'include'
          ? names.map(() => `${col} LIKE ?`).join(' OR ')
          : names.map(() => `${col} NOT LIKE ?`).join(' AND ');
      return { sql: `(${sql})`, params };
    },
  };
}
