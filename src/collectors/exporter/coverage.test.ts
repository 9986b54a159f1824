import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EXPORTER_DOMAIN_PREFIX, UPSTREAM_SCRAPERS } from '../../core/upstream.js';
import { builtinCollectors } from '../builtin.js';

const doc = (name: string) => readFileSync(new URL(`../../../../docs/${name}`, import.meta.url), 'utf8');
const PAGES = [
  'exporter-scrapers-replication.md',
  'exporter-scrapers-info-schema.md',
  'exporter-scrapers-perf-schema.md',
];

describe("mysqld_exporter's collectors in sonde", () => {
  it('serves every collector of the table, and no exporter.* domain outside it', () => {
    const registry = builtinCollectors();
    assert.equal(UPSTREAM_SCRAPERS.length, 36);
    for (const s of UPSTREAM_SCRAPERS)
      assert.ok(registry.has(s.domain), `${s.name} → ${s.domain} is not registered`);
    const known = new Set(UPSTREAM_SCRAPERS.map((s) => s.domain));
    const extra = registry.domains().filter((d) => d.startsWith(EXPORTER_DOMAIN_PREFIX) && !known.has(d));
    assert.deepEqual(extra, []);
  });

  it('lists every collector in docs/exporter.md with its default and domain, and documents each on a collector page', () => {
    const table = doc('exporter.md');
    const pages = PAGES.map(doc).join('\n');
    for (const s of UPSTREAM_SCRAPERS) {
      const row = `| \`${s.name}\` | ${s.enabled ? 'on' : 'off'} | \`${s.domain}\` |`;
      assert.ok(table.includes(row), `docs/exporter.md lacks the row ${row}`);
      if (s.domain.startsWith(EXPORTER_DOMAIN_PREFIX))
        assert.match(
          pages,
          new RegExp(`^#{2,3} ${s.name.replace(/\./g, '\\.')}\\b`, 'm'),
          `${s.name} has no section`,
        );
    }
  });
});
