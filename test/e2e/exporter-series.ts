/**
 * Series checks for the live diff against the real mysqld_exporter (exporter-upstream.test.ts):
 * where the series of a scraper are deterministic on the test servers (schemas, tables,
 * users, clients, page sizes, tablespaces, histogram bounds), sonde must serve the same label
 * VALUES as mysqld_exporter, not only the same label names.
 *
 * Counters such as the userstat tables grow while the test runs (the scrapes themselves are
 * statements), and a new series may appear between two scrapes. So each check scrapes the
 * real exporter before and after sonde: every series the real one served before must be in
 * sonde's answer, and every series sonde served must be in the real one's after.
 */
import assert from 'node:assert/strict';
import type { Db } from '../../src/core/db.js';
import { httpGet, parseExposition, withoutGoRuntime, type ParsedFamily } from './exporter-peers.js';

/** One server with both exporters in front of it. */
export interface SeriesSide {
  where: string;
  realAddress: string;
  sondeAddress: string;
  /** sonde's pool on the server. */
  db: Db;
}

type Families = Map<string, ParsedFamily>;

/** Families of one scraper, without the exporter's own. */
async function scrape(address: string, scraper: string): Promise<Families> {
  const r = await httpGet(`http://${address}/metrics?collect[]=${encodeURIComponent(scraper)}`);
  assert.equal(r.status, 200, `${address}: ${r.body.slice(0, 300)}`);
  const all = withoutGoRuntime(parseExposition(r.body));
  return new Map([...all].filter(([n]) => !/^(mysql_up|mysql_exporter_|mysqld_exporter_)/.test(n)));
}

/** `family{labels}` of every series. */
function seriesKeys(fams: Families, keep: (key: string) => boolean = () => true): Set<string> {
  const out = new Set<string>();
  for (const [name, f] of fams) for (const key of f.series.keys()) if (keep(key)) out.add(name + key);
  return out;
}

interface SandwichOptions {
  /** Series of the real exporter that sonde leaves out on purpose. */
  realOnly?: (key: string) => boolean;
  /** Also require each of sonde's values to be one the real exporter served. */
  values?: boolean;
}

/** Real before ⊆ sonde ⊆ real after (series keys), and optionally the values too. */
function sandwich(scraper: string, opts: SandwichOptions = {}) {
  return async (side: SeriesSide): Promise<void> => {
    const keep = (key: string) => !(opts.realOnly?.(key) ?? false);
    const before = await scrape(side.realAddress, scraper);
    const sonde = await scrape(side.sondeAddress, scraper);
    const after = await scrape(side.realAddress, scraper);
    const [b, s, a] = [seriesKeys(before, keep), seriesKeys(sonde), seriesKeys(after, keep)];
    assert.ok(b.size > 0, `${side.where}: mysqld_exporter served no series for ${scraper}`);
    assert.deepEqual(
      [...b].filter((k) => !s.has(k)),
      [],
      `${side.where}: series only mysqld_exporter serves`,
    );
    assert.deepEqual(
      [...s].filter((k) => !a.has(k)),
      [],
      `${side.where}: series only sonde serves`,
    );
    if (opts.values !== true) return;
    for (const [name, f] of sonde)
      for (const [key, value] of f.series) {
        const real = [before.get(name)?.series.get(key), after.get(name)?.series.get(key)];
        assert.ok(
          real.includes(value),
          `${side.where}: ${name}${key} = ${value}, mysqld_exporter: ${real.join(' / ')}`,
        );
      }
  };
}

/**
 * info_schema.innodb_tablespaces: 0.14 fails on MariaDB 10.5+ (it asks for SPACE_TYPE), so
 * sonde is checked against the table itself: one space_info series per tablespace, its ID as
 * the value, file_format NONE (no FILE_FORMAT column), space_type empty.
 */
async function tablespaces(side: SeriesSide): Promise<void> {
  const rows = await side.db.query(
    "SELECT SPACE, NAME, ifnull(ROW_FORMAT, 'NONE') AS ROW_FORMAT FROM information_schema.INNODB_SYS_TABLESPACES",
  );
  const info = (await scrape(side.sondeAddress, 'info_schema.innodb_tablespaces')).get(
    'mysql_info_schema_innodb_tablespace_space_info',
  );
  const expected = rows.map((r) => {
    const key = `{file_format="NONE",row_format="${r.ROW_FORMAT}",space_type="",tablespace_name="${r.NAME}"}`;
    return `${key} ${Number(r.SPACE)}`;
  });
  assert.ok(expected.length > 0);
  const served = [...(info?.series ?? [])].map(([key, value]) => `${key} ${Number(value)}`);
  assert.deepEqual(served.sort(), expected.sort(), side.where);
}

function bounds(f: ParsedFamily | undefined): number[] {
  const out: number[] = [];
  for (const key of f?.series.keys() ?? []) {
    const le = /le="([^"]+)"/.exec(key)?.[1];
    if (le !== undefined && le !== '+Inf') out.push(Number(le));
  }
  return out.sort((x, y) => x - y);
}

/**
 * info_schema.query_response_time: sonde's histogram has the bucket bounds mysqld_exporter
 * serves, and a count between the real one's before and after.
 */
async function responseTimeBounds(side: SeriesSide): Promise<void> {
  const name = 'mysql_info_schema_query_response_time_seconds';
  const get = async (address: string) => (await scrape(address, 'info_schema.query_response_time')).get(name);
  const before = await get(side.realAddress);
  const sonde = await get(side.sondeAddress);
  const after = await get(side.realAddress);
  assert.ok(sonde !== undefined && before !== undefined && after !== undefined, side.where);
  assert.ok(bounds(before).length > 0, side.where);
  assert.deepEqual(bounds(sonde), bounds(before), side.where);
  const count = (f: ParsedFamily) => Number(f.series.get('{le="+Inf"}'));
  assert.ok(
    count(before) <= count(sonde) && count(sonde) <= count(after),
    `${side.where}: count ${count(sonde)}`,
  );
}

/** Scraper → its series check. */
export const SERIES_CHECKS: Readonly<Record<string, (side: SeriesSide) => Promise<void>>> = {
  'info_schema.clientstats': sandwich('info_schema.clientstats'),
  'info_schema.innodb_cmp': sandwich('info_schema.innodb_cmp'),
  'info_schema.innodb_cmpmem': sandwich('info_schema.innodb_cmpmem'),
  'info_schema.innodb_tablespaces': tablespaces,
  'info_schema.query_response_time': responseTimeBounds,
  'info_schema.schemastats': sandwich('info_schema.schemastats'),
  // 0.20 leaves the sys schema out (0.14 reads it); the table sizes and versions are stable.
  'info_schema.tables': sandwich('info_schema.tables', {
    realOnly: (k) => k.includes('schema="sys"'),
    values: true,
  }),
  'info_schema.tablestats': sandwich('info_schema.tablestats'),
  'info_schema.userstats': sandwich('info_schema.userstats'),
};
