/**
 * Collector help for plan tests: a few domains declared as the collectors declare theirs, enough to
 * exercise every validation path (free-form options, value lists, no options).
 */
import type { CollectorHelp, OptionHelp } from '../core/collector.js';

function help(domain: string, options: OptionHelp[]): CollectorHelp {
  return { domain, description: domain, sources: [], options, errors: [], groups: [], meta: [], metrics: [] };
}

const yesNo = { yes: 'yes', no: 'no' };

const HELP: Record<string, CollectorHelp> = {
  'status.global': help('status.global', [{ name: 'all', description: '', default: 'no', values: yesNo }]),
  'var.global': help('var.global', [
    { name: 'source', description: '', default: 'auto', values: { auto: '', select: '', pfs: '', show: '' } },
    { name: 'all', description: '', default: 'no', values: yesNo },
  ]),
  innodb: help('innodb', [
    { name: 'all', description: '', default: 'no', values: { yes: '', enabled: '', no: '' } },
  ]),
  repl: help('repl', [{ name: 'report-not-a-replica', description: '', default: 'yes', values: yesNo }]),
  'repl.lag': help('repl.lag', [
    { name: 'writer', description: '', default: 'auto', values: { auto: '', blip: '', pfs: '' } },
    { name: 'table', description: '', default: 'blip.heartbeat' },
  ]),
  'size.binlog': help('size.binlog', []),
  'size.database': help('size.database', [
    { name: 'total', description: '', default: 'no', values: { only: '', yes: '', no: '' } },
    { name: 'exclude', description: '', default: '' },
  ]),
  'size.table': help('size.table', [{ name: 'total', description: '', default: 'yes', values: yesNo }]),
};

/** getHelp for tests. */
export function testHelp(domain: string): CollectorHelp | undefined {
  return HELP[domain];
}
