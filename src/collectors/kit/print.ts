/**
 * `--print-domains` text, generated from each collector's help. The same
 * help drives plan validation and docs/domains.md.
 */
import type { CollectorHelp } from '../../core/collector.js';
import { METRIC_TYPE_NAMES } from '../../core/metrics.js';

function block(title: string, lines: string[]): string[] {
  if (lines.length === 0) return [];
  return [`\t${title}:`, ...lines.map((l) => `\t\t${l}`)];
}

/** One domain's help as text. */
function domainText(h: CollectorHelp): string {
  const out = [h.domain, `\t${h.description}`];
  if (h.options.length === 0) out.push('\t(No options)');
  else {
    out.push('\tOptions:');
    for (const o of h.options) {
      if (o.values) {
        out.push(`\t\t${o.name}: ${o.description}`);
        for (const [v, desc] of Object.entries(o.values)) {
          out.push(`\t\t| ${v} = ${desc}${v === o.default ? ' (default)' : ''}`);
        }
      } else {
        out.push(`\t\t${o.name}: ${o.description}${o.default === '' ? '' : ` (default: ${o.default})`}`);
      }
    }
  }
  out.push(
    ...block(
      'Errors',
      h.errors.map((e) => `${e.name}: ${e.description}`),
    ),
  );
  out.push(
    ...block(
      'Groups',
      h.groups.map((g) => `${g.key}: ${g.description}`),
    ),
  );
  out.push(
    ...block(
      'Meta',
      h.meta.map((m) => `${m.key}: ${m.description}`),
    ),
  );
  out.push(
    ...block(
      'Metrics',
      h.metrics.map((m) => `${m.name} (${METRIC_TYPE_NAMES[m.type]}): ${m.description}`),
    ),
  );
  return `${out.join('\n')}\n`;
}

/** Every domain, sorted by name, separated by blank lines. */
export function printDomains(helps: CollectorHelp[]): string {
  return [...helps]
    .sort((a, b) => a.domain.localeCompare(b.domain))
    .map(domainText)
    .join('\n');
}
