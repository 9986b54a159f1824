/**
 * The docs name only what the code knows: every config key, endpoint, status key and domain
 * that docs/*.md (sinks/ included) and README.md name must exist in the code. What counts as
 * naming one is in doc-refs.ts; what the code knows is read from the code here: the config
 * schema, the routes of every listener, the status-key catalogue, the collectors' help, the
 * sinks and mysqld_exporter's flags.
 *
 * A name that is right but outside those catalogues goes in EXCEPTIONS with the reason.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_HELP } from '../../src/collectors/builtin.js';
import { configKeyKind, configKeyKindAnywhere, configSections } from '../../src/config/schema-keys.js';
import { STATUS_KEYS } from '../../src/core/status-keys.js';
import { CLI_FLAGS } from '../../src/bin/exporter-cli.js';
import { PROBE_PATHS } from '../../src/exporter/probe.js';
import { DEFAULT_PATH, RELOAD_PATH } from '../../src/exporter/server.js';
import { apiRoutes, type ApiDeps } from '../../src/server/api.js';
import { BUILTIN_SINKS } from '../../src/sinks/builtin.js';
import { uiRoutes } from '../../src/web/ui.js';
import { OTEL_METRICS } from '../../src/sinks/otel-names.js';
import { OTLP_MONITOR_KEYS } from '../../src/sinks/otlp.js';
import { RECORD_ATTRIBUTES } from '../../src/collectors/kit/query/attributes.js';
import type { UiSource } from '../../src/core/ui.js';
import { findUnknown, type Finding, type Kind, type Known, type Route } from './doc-refs.js';

/** The repository root (this file runs from dist/test/docs/). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Names the docs rightly use that no catalogue of the code holds, each with why. Add one as
 * `'name': 'why'`, the name exactly as back-quoted in the doc; an entry no doc uses any more
 * fails the test, so the list stays short.
 */
const EXCEPTIONS: Readonly<Record<string, string>> = {
  'mysql.user': 'a MySQL system table (grants)',
  'mysql.global_priv': 'a MySQL system table (grants)',
  '/metrics/job/blip': "a Pushgateway path (the prom-pushgateway sink's target)",
  'custom.orders': "the domain of plugins.md's example plugin (a plugin's domain is not built in)",
};

/**
 * At least this many references of each kind are in the docs today: fewer means the
 * extraction stopped seeing them (a changed doc format), not that the docs are right.
 */
const AT_LEAST: Readonly<Record<Kind, number>> = {
  'config key': 300,
  endpoint: 100,
  'status key': 40,
  domain: 150,
};

/** Every route of every sonde listener: the API with the web page, the exporter, the probe listener. */
function routes(): Route[] {
  const stub = {} as ApiDeps;
  const api = apiRoutes(stub).map((r) => ({ method: r.method, path: r.path, prefix: r.prefix }));
  const ui = uiRoutes({} as UiSource, { tokenRequired: false, readOnly: false });
  const get = (path: string): Route => ({ method: 'GET', path });
  return [
    ...api,
    ...ui.map((r) => ({ method: r.method, path: r.path, prefix: r.prefix })),
    // One monitor's exporter endpoint (web.telemetry-path defaults to /metrics).
    get(DEFAULT_PATH),
    get('/'),
    { method: 'POST', path: RELOAD_PATH },
    // The agent-wide probe listener.
    ...Object.values(PROBE_PATHS).map(get),
  ];
}

/** What the code knows, read from the code. */
export function knownFromCode(): Known {
  return {
    configKey: configKeyKind,
    configKeyAnywhere: configKeyKindAnywhere,
    configSections: new Set(configSections()),
    domains: new Map(BUILTIN_HELP.map((h) => [h.domain, h.metrics.map((m) => m.name)])),
    domainOptions: new Map(BUILTIN_HELP.map((h) => [h.domain, h.options.map((o) => o.name)])),
    exporterFlags: new Set(CLI_FLAGS.map((f) => f.name)),
    sinks: new Set(BUILTIN_SINKS.map((s) => s.name)),
    routes: routes(),
    statusKeys: new Set(STATUS_KEYS.map((s) => s.key)),
    emittedNames: new Set([...Object.keys(OTEL_METRICS), ...OTLP_MONITOR_KEYS, ...RECORD_ATTRIBUTES]),
  };
}

/** docs/**.md and README.md, relative to the root. */
function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return ['README.md', ...docs].sort();
}

const show = (f: Finding): string => `${f.file}:${f.line}: ${f.kind} \`${f.text}\`: ${f.why}`;

describe('the docs name only what the code knows', () => {
  const known = knownFromCode();

  it('finds a made-up config key, endpoint, status key and domain (the check itself works)', () => {
    const md = [
      '# Sample',
      'Set `api.read-only` and `api.raed-only`, `monitor-loader.aws.regions`, `plans.change.<state>.plan`.',
      'Call `POST /monitors/stop`, `GET /status/monitorz` and `GET /debug`; see `/status/monitors`.',
      'The status key `error:collect`, `error:repl.lag`, `error:bogus.domain` and `level-collectt` status.',
      'Domains `status.global`, `repl.lag.current`, `repl.lagg`; flags `exporter.flags.web.listen-address`, `exporter.flags.web.nope`.',
      'Prefixed `mysql.status.global.queries`, `mysql.repl.lagg.current`; `config.api.bind`, `config.api.bnid`.',
      '',
      '### `api`',
      '',
      '| Key | Type |',
      '|---|---|',
      '| `bind` | x |',
      '| `bnid` | x |',
      '',
      '```yaml',
      'kpi:',
      '  freq: 5s',
      '  collect:',
      '    status.global: {}',
      '    status.globl: {}',
      '```',
      '',
      '```yaml',
      'api:',
      '  bind: 127.0.0.1:7522',
      'heartbeat:',
      '  freqq: 1s',
      'sinks:',
      '  nosink: {}',
      '```',
    ].join('\n');
    const found = findUnknown('sample.md', md, known).map((f) => `${f.kind} ${f.text}`);
    assert.deepEqual(found.sort(), [
      'config key api.raed-only',
      'config key bnid',
      'config key config.api.bnid',
      'config key exporter.flags.web.nope',
      'config key heartbeat.freqq',
      'config key mysql.repl.lagg.current',
      'config key sinks.nosink',
      'domain repl.lagg',
      'domain status.globl',
      'endpoint GET /debug',
      'endpoint GET /status/monitorz',
      'status key error:bogus.domain',
      'status key level-collectt',
    ]);
  });

  it('every config key, endpoint, status key and domain in docs/ and README.md is known to the code', () => {
    const used = new Set<string>();
    const unknown: Finding[] = [];
    const checked: Record<Kind, number> = { 'config key': 0, endpoint: 0, 'status key': 0, domain: 0 };
    for (const file of docFiles()) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const f of findUnknown(file, text, known, (kind) => checked[kind]++)) {
        if (Object.hasOwn(EXCEPTIONS, f.text)) used.add(f.text);
        else unknown.push(f);
      }
    }
    assert.deepEqual(unknown.map(show), [], `relative to ${relative(process.cwd(), ROOT) || '.'}`);
    const stale = Object.keys(EXCEPTIONS).filter((e) => !used.has(e));
    assert.deepEqual(stale, [], 'exceptions no doc needs any more: remove them');
    for (const [kind, n] of Object.entries(AT_LEAST)) {
      assert.ok(
        checked[kind as Kind] >= n,
        `only ${checked[kind as Kind]} references of kind ${kind} checked`,
      );
    }
    console.log(`checked: ${JSON.stringify(checked)}`);
  });
});
