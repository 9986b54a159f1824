import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectorHelp } from '../../core/collector.js';
import { MetricType } from '../../core/metrics.js';
import { builtinCollectors } from '../builtin.js';
import { anchor, code, domainsMarkdown, REGENERATE_COMMAND, text } from './docs.js';
import { SOURCE_TABLE, type SourceRule } from './sources.js';

/** A small help exercising every section and every escaping rule. */
const SMALL: CollectorHelp = {
  domain: 'size.demo',
  description: 'Sizes of <things> | from a demo',
  sources: ['SELECT a FROM t WHERE x = `y`'],
  options: [
    {
      name: 'total',
      description: 'Report a total',
      default: 'no',
      values: { yes: 'Values plus the total', no: 'Values only' },
    },
    { name: 'exclude', description: 'Tables to skip: db.*, _tmp', default: 'mysql.*' },
    { name: 'include', description: 'Tables to report.', default: '' },
  ],
  errors: [{ name: 'access-denied', description: 'No SELECT on the table', errnos: [1045, 1142] }],
  groups: [{ key: 'db', description: 'Database name' }],
  meta: [{ key: 'ts', description: 'Unix milliseconds' }],
  metrics: [
    { name: 'bytes', type: MetricType.Gauge, description: 'Data plus index bytes' },
    { name: 'rows_read', type: MetricType.CumulativeCounter, description: 'Rows read' },
  ],
};

/** A domain with nothing but a name, sorted before SMALL. */
const BARE: CollectorHelp = {
  domain: 'bare',
  description: 'A bare domain',
  sources: [],
  options: [],
  errors: [],
  groups: [],
  meta: [],
  metrics: [],
};

/** A source table for SMALL and BARE, with a version split, a try order and a step row. */
const SMALL_TABLE: Record<string, SourceRule[]> = {
  'size.demo': [
    { flavor: 'mysql', min: '8.0.22', source: 'new' },
    { flavor: 'mysql', source: 'old,older' },
    { flavor: 'mariadb', unsupported: 'no <demo> | here' },
  ],
  bare: [
    { flavor: 'mysql', source: 'x' },
    { flavor: 'mariadb', source: 'x' },
  ],
  truncate: [
    { flavor: 'mysql', source: 'truncate' },
    { flavor: 'mariadb', source: 'set-statement-truncate' },
  ],
};

const EXPECTED = `# Metric domains

<!-- Generated from each collector's help() and the source table by \`npx tsc -p . && node scripts/gen-docs.mjs\`. Do not edit by hand. -->

Every metric domain this build of sonde can collect. Use the domain names under \`collect:\`
in a plan ([plans.md](plans.md)); the options, error policy names and metric names below are
exactly what plan validation accepts. \`sonde --print-domains\` prints the same information.

A metric is reported as \`<domain>.<metric>\` (for example \`status.global.queries\`). Types:
*cumulative counter* (grows since server start), *delta counter* (amount during the interval),
*gauge* (current value), *bool* (0 or 1).

| Domain | Description |
|---|---|
| [\`bare\`](#bare) | A bare domain |
| [\`size.demo\`](#sizedemo) | Sizes of \\<things\\> \\| from a demo |

## Sources by server

Which source each domain reads on each kind of server (the source table in
\`src/collectors/kit/sources.ts\`). \`a\` → \`b\`: tried in that order, the first that works is used.
*not supported*: the domain reports \`<domain>: not supported on <flavor> <x.y.z>: <reason>\`
once and stops until the plan is activated again. Percona Server counts as MySQL.

| Domain | MySQL 5.7 | MySQL 8.0 | MySQL 8.1–8.4 | MySQL 9.x | MySQL, version unknown | MariaDB 10.x–11.x |
|---|---|---|---|---|---|---|
| [\`bare\`](#bare) | \`x\` | \`x\` | \`x\` | \`x\` | \`x\` | \`x\` |
| [\`size.demo\`](#sizedemo) | \`old\` → \`older\` | before 8.0.22: \`old\` → \`older\`; from 8.0.22: \`new\` | \`new\` | \`new\` | \`old\` → \`older\` | not supported: no \\<demo\\> \\| here |
| \`truncate\` | \`truncate\` | \`truncate\` | \`truncate\` | \`truncate\` | \`truncate\` | \`set-statement-truncate\` |

Rows that are not domains are steps several domains share:

- \`truncate\`: how query.response-time, wait.io.table and error.\\* empty their performance_schema table after reading it

## bare

A bare domain

**Options**

None: a plan that gives this domain any option is rejected.

**Metrics**

No fixed list: the metric names are the ones the server reports (see Sources and Options).

## size.demo

Sizes of \\<things\\> \\| from a demo

**Sources**

- \`\` SELECT a FROM t WHERE x = \`y\` \`\`

**Options**

- \`total\` — Report a total. One of:
  - \`yes\`: Values plus the total
  - \`no\` (default): Values only
- \`exclude\` — Tables to skip: db.\\*, \\_tmp. Default: \`mysql.*\`.
- \`include\` — Tables to report. No default.

**Errors** (policy names for \`errors:\` in a plan)

| Name | MySQL errors | Description |
|---|---|---|
| \`access-denied\` | 1045, 1142 | No SELECT on the table |

**Groups** (part of each value’s identity)

| Key | Description |
|---|---|
| \`db\` | Database name |

**Meta** (annotations on each value, not identity)

| Key | Description |
|---|---|
| \`ts\` | Unix milliseconds |

**Metrics**

| Metric | Type | Description |
|---|---|---|
| \`bytes\` | gauge | Data plus index bytes |
| \`rows_read\` | cumulative counter | Rows read |
`;

describe('domainsMarkdown', () => {
  it('renders every section of a small help and source table exactly, domains sorted by name', () => {
    assert.equal(domainsMarkdown([SMALL, BARE], SMALL_TABLE), EXPECTED);
  });

  it('names the regenerate command that scripts/gen-docs.mjs documents', () => {
    assert.equal(REGENERATE_COMMAND, 'npx tsc -p . && node scripts/gen-docs.mjs');
  });

  it('is the committed docs/domains.md for the built-in collectors and the source table (regenerate with the command above)', () => {
    const registry = builtinCollectors();
    const helps = registry.domains().map((d) => registry.help(d));
    const committed = readFileSync(new URL('../../../../docs/domains.md', import.meta.url), 'utf8');
    assert.equal(
      committed,
      domainsMarkdown(helps, SOURCE_TABLE),
      `docs/domains.md is stale: run \`${REGENERATE_COMMAND}\` and commit it`,
    );
  });
});

describe('Markdown helpers', () => {
  it('escapes Markdown syntax in free text but keeps underscores inside words', () => {
    assert.equal(text('innodb_log_waits'), 'innodb_log_waits');
    assert.equal(
      text('_x_ and *y* [z](u) <b> a|b `c` \\'),
      '\\_x\\_ and \\*y\\* \\[z\\](u) \\<b\\> a\\|b \\`c\\` \\\\',
    );
    assert.equal(text('two\n  lines'), 'two lines');
  });

  it('fences code spans past any backticks inside and escapes pipes in tables', () => {
    assert.equal(code('a'), '`a`');
    assert.equal(code('a`b'), '``a`b``');
    assert.equal(code('`a`'), '`` `a` ``');
    assert.equal(code('a|b', true), '`a\\|b`');
    assert.equal(code('a|b'), '`a|b`');
  });

  it('makes GitHub heading anchors', () => {
    assert.equal(anchor('status.global'), 'statusglobal');
    assert.equal(anchor('repl.lag'), 'repllag');
    assert.equal(anchor('wait.io.table'), 'waitiotable');
  });
});
