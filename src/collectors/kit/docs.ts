/**
 * docs/domains.md, generated from each collector's help (the one description that also
 * drives plan validation and `--print-domains`) and from the source table (sources.ts).
 * scripts/gen-docs.mjs writes the file; docs.test.ts fails when the committed file differs
 * from what the built-in collectors and the table generate, so the reference cannot go stale.
 *
 * The output is plain CommonMark/GFM. Help texts are free text written for `--print-domains`,
 * so they are escaped before they go into Markdown: see `text()`.
 */
import type { CollectorHelp, OptionHelp } from '../../core/collector.js';
import { METRIC_TYPE_NAMES } from '../../core/metrics.js';
import {
  SERVER_COLUMNS,
  SOURCE_STEPS,
  choicesInColumn,
  sourceList,
  type ColumnPiece,
  type SourceChoice,
  type SourceRule,
} from './sources.js';

/** The command that regenerates docs/domains.md, printed in its header. */
export const REGENERATE_COMMAND = 'npx tsc -p . && node scripts/gen-docs.mjs';

/** Collapse line breaks: every help text becomes one Markdown line (or table cell). */
function oneLine(s: string): string {
  return s.replace(/\s*\r?\n\s*/g, ' ').trim();
}

/**
 * Free text made safe for Markdown, keeping the source readable:
 * - `\`, `` ` ``, `*`, `[`, `]`, `<`, `>` and `|` are backslash-escaped (code, emphasis,
 *   links, HTML tags such as `<filter>`, table cells);
 * - `_` only when it could start or end emphasis, i.e. not between two letters or digits
 *   (GFM never treats `innodb_log_waits` as emphasis, so names stay as written).
 */
export function text(s: string): string {
  return oneLine(s)
    .replace(/[\\`*[\]<>|]/g, (c) => `\\${c}`)
    .replace(/_/g, (c, i: number, all: string) =>
      /[A-Za-z0-9]/.test(all[i - 1] ?? '') && /[A-Za-z0-9]/.test(all[i + 1] ?? '') ? c : `\\${c}`,
    );
}

/**
 * A code span holding `s` literally: the fence is one backtick longer than the longest run of
 * backticks inside, padded with spaces when `s` starts or ends with one. Inside a table cell
 * `|` still splits the cell, so it is escaped (GFM removes the backslash again).
 */
export function code(s: string, inTable = false): string {
  const v = oneLine(s);
  const longest = Math.max(0, ...(v.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = v.startsWith('`') || v.endsWith('`') || v === '' ? ' ' : '';
  const body = inTable ? v.replace(/\|/g, '\\|') : v;
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** GitHub's heading anchor: lowercase, punctuation other than `-` and `_` dropped, spaces → `-`. */
export function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

/** `s` as a sentence: ends with one `.` (or `?`/`!`), unless it is empty. */
function sentence(s: string): string {
  return s === '' || /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * One option as a list item. An option with a value list gets a nested list (the default
 * marked); a free-form one states its default, or that it has none.
 */
function optionLines(o: OptionHelp): string[] {
  const values = o.values ? Object.entries(o.values) : [];
  const parts = [sentence(text(o.description))];
  if (values.length > 0) {
    if (o.default !== '' && !values.some(([v]) => v === o.default))
      parts.push(`Default: ${code(o.default)}.`);
    parts.push('One of:');
  } else {
    parts.push(o.default === '' ? 'No default.' : `Default: ${code(o.default)}.`);
  }
  const lines = [`- ${code(o.name)} — ${parts.filter((p) => p !== '').join(' ')}`];
  for (const [v, vdesc] of values) {
    const d = text(vdesc);
    lines.push(`  - ${code(v)}${v === o.default ? ' (default)' : ''}${d === '' ? '' : `: ${d}`}`);
  }
  return lines;
}

function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** One `## <domain>` section, ending with a blank line. */
function domainSection(h: CollectorHelp): string[] {
  const out = [`## ${h.domain}`, '', text(h.description), ''];
  if (h.sources.length > 0) {
    out.push('**Sources**', '', ...h.sources.map((s) => `- ${code(s)}`), '');
  }
  out.push('**Options**', '');
  if (h.options.length === 0) out.push('None: a plan that gives this domain any option is rejected.');
  else for (const o of h.options) out.push(...optionLines(o));
  out.push('');
  if (h.errors.length > 0) {
    out.push(
      '**Errors** (policy names for `errors:` in a plan)',
      '',
      ...table(
        ['Name', 'MySQL errors', 'Description'],
        h.errors.map((e) => [
          code(e.name, true),
          e.errnos && e.errnos.length > 0 ? e.errnos.join(', ') : '',
          text(e.description),
        ]),
      ),
      '',
    );
  }
  if (h.groups.length > 0) {
    out.push(
      '**Groups** (part of each value’s identity)',
      '',
      ...table(
        ['Key', 'Description'],
        h.groups.map((g) => [code(g.key, true), text(g.description)]),
      ),
      '',
    );
  }
  if (h.meta.length > 0) {
    out.push(
      '**Meta** (annotations on each value, not identity)',
      '',
      ...table(
        ['Key', 'Description'],
        h.meta.map((m) => [code(m.key, true), text(m.description)]),
      ),
      '',
    );
  }
  out.push('**Metrics**', '');
  if (h.metrics.length === 0) {
    out.push('No fixed list: the metric names are the ones the server reports (see Sources and Options).');
  } else {
    out.push(
      ...table(
        ['Metric', 'Type', 'Description'],
        h.metrics.map((m) => [code(m.name, true), METRIC_TYPE_NAMES[m.type], text(m.description)]),
      ),
    );
  }
  out.push('');
  return out;
}

/** One answer of the source table as table-cell text. */
function choiceText(choice: SourceChoice): string {
  if ('unsupported' in choice) return `not supported: ${text(choice.unsupported)}`;
  return sourceList(choice.source)
    .map((src) => code(src, true))
    .join(' → ');
}

/** A cell: one answer, or the answers of a column split at the versions where rules change. */
function pieceText(pieces: readonly ColumnPiece[]): string {
  if (pieces.length === 1) return choiceText(pieces[0]?.choice ?? { unsupported: '' });
  return pieces
    .map((p, i) =>
      i === 0
        ? `before ${pieces[1]?.from ?? ''}: ${choiceText(p.choice)}`
        : `from ${p.from ?? ''}: ${choiceText(p.choice)}`,
    )
    .join('; ');
}

/** The `## Sources by server` section: the source table, one row per domain or step. */
function sourcesSection(
  domains: ReadonlySet<string>,
  sources: Readonly<Record<string, readonly SourceRule[]>>,
): string[] {
  const keys = Object.keys(sources).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rows = keys.map((key) => [
    domains.has(key) ? `[${code(key, true)}](#${anchor(key)})` : code(key, true),
    ...SERVER_COLUMNS.map((column) => pieceText(choicesInColumn(key, column, sources))),
  ]);
  const steps = keys.filter((k) => !domains.has(k));
  return [
    '## Sources by server',
    '',
    'Which source each domain reads on each kind of server (the source table in',
    '`src/collectors/kit/sources.ts`). `a` → `b`: tried in that order, the first that works is used.',
    '*not supported*: the domain reports `<domain>: not supported on <flavor> <x.y.z>: <reason>`',
    'once and stops until the plan is activated again. Percona Server counts as MySQL.',
    '',
    ...table(['Domain', ...SERVER_COLUMNS.map((c) => text(c.title))], rows),
    '',
    ...(steps.length === 0
      ? []
      : [
          'Rows that are not domains are steps several domains share:',
          '',
          ...steps.map((k) => `- ${code(k)}: ${text(SOURCE_STEPS[k] ?? '')}`),
          '',
        ]),
  ];
}

/**
 * The whole docs/domains.md for the given collectors' help and source table: a header, an
 * index table, the sources by server, then one section per domain, sorted by domain name
 * (code-unit order, so the output never depends on the locale). Ends with exactly one newline.
 */
export function domainsMarkdown(
  helps: CollectorHelp[],
  sources: Readonly<Record<string, readonly SourceRule[]>>,
): string {
  const sorted = [...helps].sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
  const out = [
    '# Metric domains',
    '',
    `<!-- Generated from each collector's help() and the source table by \`${REGENERATE_COMMAND}\`. Do not edit by hand. -->`,
    '',
    'Every metric domain this build of sonde can collect. Use the domain names under `collect:`',
    'in a plan ([plans.md](plans.md)); the options, error policy names and metric names below are',
    'exactly what plan validation accepts. `sonde --print-domains` prints the same information.',
    '',
    'A metric is reported as `<domain>.<metric>` (for example `status.global.queries`). Types:',
    '*cumulative counter* (grows since server start), *delta counter* (amount during the interval),',
    '*gauge* (current value), *bool* (0 or 1).',
    '',
    ...table(
      ['Domain', 'Description'],
      sorted.map((h) => [`[${code(h.domain, true)}](#${anchor(h.domain)})`, text(h.description)]),
    ),
    '',
    ...sourcesSection(new Set(helps.map((h) => h.domain)), sources),
  ];
  for (const h of sorted) out.push(...domainSection(h));
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
