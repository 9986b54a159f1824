/**
 * Rendering of the server config (`GET /config`, `--print-config`) and of finalized monitors
 * (`--print-monitors`).
 *
 * Key order is the order of the sections and keys in docs/config.md; map keys are sorted;
 * empty values and empty sections are omitted; a tri-state boolean is printed whenever it is
 * set (also `false`), a plain boolean only when `true`. Secrets are printed as `...` (sonde's
 * choice; Blip prints them in clear): `password` everywhere, and in sink options, exporter
 * flags, meta, tags and `http.proxy` whatever the rules of redact.ts find.
 */
import { stringify } from 'yaml';
import type {
  AwsConfig,
  Config,
  ExporterConfig,
  FinalMonitorConfig,
  HeartbeatConfig,
  MonitorConfig,
  PlansConfig,
  SinksConfig,
  TlsConfig,
} from '../core/config.js';

import { REDACTED, redactOption, redactText } from './redact.js';

export { REDACTED };

type Out = Record<string, unknown>;
type Entry = [string, unknown];

/** An object of the entries whose value is not undefined; undefined when none is left. */
function obj(entries: Entry[]): Out | undefined {
  const out: Out = {};
  for (const [k, v] of entries) if (v !== undefined) out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

const str = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);
const secret = (v: string | undefined): string | undefined => (str(v) === undefined ? undefined : REDACTED);
const plainBool = (v: boolean | undefined): true | undefined => (v === true ? true : undefined);
const triBool = (v: boolean | undefined): boolean | undefined => v;
const list = (v: string[] | undefined): string[] | undefined => (v && v.length > 0 ? [...v] : undefined);

/** A string map with sorted keys, each value through `redact`; undefined when empty. */
function sortedMap(
  m: Record<string, string> | undefined,
  redact: (key: string, value: string) => string,
): Out | undefined {
  if (!m) return undefined;
  const keys = Object.keys(m).sort();
  if (keys.length === 0) return undefined;
  const out: Out = {};
  for (const k of keys) out[k] = redact(k, m[k] ?? '');
  return out;
}

const textOnly = (_key: string, value: string): string => redactText(value);

function sinks(s: SinksConfig | undefined): Out | undefined {
  if (!s) return undefined;
  const names = Object.keys(s).sort();
  if (names.length === 0) return undefined;
  const out: Out = {};
  for (const name of names) {
    const opts: Out = {};
    const o = s[name] ?? {};
    for (const k of Object.keys(o).sort()) opts[k] = redactOption(k, o[k] ?? '');
    out[name] = opts; // a sink with no options is still a sink: `log: {}`
  }
  return out;
}

function aws(a: AwsConfig | undefined): Out | undefined {
  return obj([
    ['iam-auth', triBool(a?.['iam-auth'])],
    ['password-secret', str(a?.['password-secret'])],
    ['region', str(a?.region)],
    ['disable-auto-region', triBool(a?.['disable-auto-region'])],
    ['disable-auto-tls', triBool(a?.['disable-auto-tls'])],
  ]);
}

function exporter(e: ExporterConfig | undefined): Out | undefined {
  return obj([
    ['mode', str(e?.mode)],
    ['plan', str(e?.plan)],
    ['token-file', str(e?.['token-file'])],
    ['flags', sortedMap(e?.flags, redactOption)],
  ]);
}

function heartbeat(h: HeartbeatConfig | undefined): Out | undefined {
  return obj([
    ['freq', str(h?.freq)],
    ['source-id', str(h?.['source-id'])],
    ['role', str(h?.role)],
    ['table', str(h?.table)],
  ]);
}

function plans(p: PlansConfig | undefined): Out | undefined {
  const change = p?.change;
  const state = (s: { after?: string; plan?: string } | undefined): Out | undefined =>
    obj([
      ['after', str(s?.after)],
      ['plan', str(s?.plan)],
    ]);
  return obj([
    ['files', list(p?.files)],
    ['table', str(p?.table)],
    ['monitor', p?.monitor ? monitor(p.monitor) : undefined],
    ['disable-default-plans', plainBool(p?.['disable-default-plans'])],
    [
      'change',
      obj([
        ['offline', state(change?.offline)],
        ['standby', state(change?.standby)],
        ['read-only', state(change?.['read-only'])],
        ['active', state(change?.active)],
      ]),
    ],
  ]);
}

function tls(t: TlsConfig | undefined): Out | undefined {
  return obj([
    ['ca', str(t?.ca)],
    ['cert', str(t?.cert)],
    ['key', str(t?.key)],
    ['skip-verify', triBool(t?.['skip-verify'])],
    ['disable', triBool(t?.disable)],
  ]);
}

/** One monitor, keys in the order of docs/config.md; `id` is always printed (`""` when unset). */
function monitor(m: MonitorConfig): Out {
  return {
    id: m.id ?? '',
    ...obj([
      ['database-type', str(m['database-type'])],
      ['database-config', sortedMap(m['database-config'], redactOption)],
      ['hostname', str(m.hostname)],
      ['socket', str(m.socket)],
      ['mycnf', str(m.mycnf)],
      ['username', str(m.username)],
      ['password', secret(m.password)],
      ['password-file', str(m['password-file'])],
      ['timeout-connect', str(m['timeout-connect'])],
      ['tags', sortedMap(m.tags, textOnly)],
      ['meta', sortedMap(m.meta, redactOption)],
      ['plan', str(m.plan)],
      ['ui-history', triBool(m['ui-history'])],
      ['aws', aws(m.aws)],
      ['exporter', exporter(m.exporter)],
      ['heartbeat', heartbeat(m.heartbeat)],
      ['plans', plans(m.plans)],
      ['sinks', sinks(m.sinks)],
      ['tls', tls(m.tls)],
    ]),
  };
}

/** The secrets of one monitor's own keys: password, secret options, URL passwords. */
function monitorSecrets(m: MonitorConfig | undefined, out: string[]): void {
  if (!m) return;
  if (m.password) out.push(m.password);
  const maps = [
    ...Object.values(m.sinks ?? {}),
    m.exporter?.flags ?? {},
    m.meta ?? {},
    m['database-config'] ?? {},
  ];
  for (const map of maps) {
    for (const [k, v] of Object.entries(map)) {
      if (redactOption(k, v) === REDACTED) out.push(v);
      else if (k.toLowerCase() === 'headers')
        out.push(...v.split(',').map((p) => p.slice(p.indexOf('=') + 1).trim()));
      else out.push(...urlPasswords(v));
    }
  }
  monitorSecrets(m.plans?.monitor, out);
}

/** The passwords written in URLs' userinfo. */
function urlPasswords(v: string): string[] {
  return [...v.matchAll(/:\/\/[^/?#@\s:]*:([^/?#@\s]+)@/g)].map((x) => x[1] ?? '');
}

/** Every secret written anywhere in the config, so that no other key can print one. */
function configSecrets(c: Config): string[] {
  const out: string[] = [];
  monitorSecrets({ ...c.mysql, sinks: c.sinks, exporter: c.exporter, plans: c.plans }, out);
  for (const m of c.monitors ?? []) monitorSecrets(m, out);
  out.push(...urlPasswords(c.http?.proxy ?? ''));
  // Very short values would blank out unrelated text; they are redacted by key only.
  return [...new Set(out)].filter((x) => x.length >= 4);
}

/**
 * `v` with every occurrence of a secret replaced by `...`, in every string value: a secret
 * copied into a tag or a host name (`%{monitor.password}`, one `${VAR}` used twice) is
 * hidden there too.
 */
function scrub(v: unknown, secrets: string[]): unknown {
  if (secrets.length === 0) return v;
  if (typeof v === 'string') return secrets.reduce((t, x) => t.split(x).join(REDACTED), v);
  if (Array.isArray(v)) return v.map((x) => scrub(x, secrets));
  if (v !== null && typeof v === 'object') {
    const out: Out = {};
    for (const [k, x] of Object.entries(v)) out[k] = scrub(x, secrets);
    return out;
  }
  return v;
}

/**
 * The server config as a plain object with kebab-case keys in render order (the `?json`
 * answer of GET /config; same omission and redaction rules as the YAML).
 */
export function renderConfigJson(c: Config): unknown {
  return scrub(configObject(c), configSecrets(c));
}

function configObject(c: Config): Out {
  const ml = c['monitor-loader'];
  const mysql = c.mysql;
  return (
    obj([
      [
        'api',
        obj([
          ['bind', str(c.api?.bind)],
          ['disable', plainBool(c.api?.disable)],
          ['allowed-hosts', list(c.api?.['allowed-hosts'])],
          ['token-file', str(c.api?.['token-file'])],
          [
            'tls',
            obj([
              ['cert', str(c.api?.tls?.cert)],
              ['key', str(c.api?.tls?.key)],
              ['client-ca', str(c.api?.tls?.['client-ca'])],
            ]),
          ],
          ['read-only', plainBool(c.api?.['read-only'])],
          ['ui-history', triBool(c.api?.['ui-history'])],
        ]),
      ],
      ['http', obj([['proxy', c.http?.proxy ? redactText(c.http.proxy) : undefined]])],
      [
        'probe',
        obj([
          ['bind', str(c.probe?.bind)],
          ['web-config-file', str(c.probe?.['web-config-file'])],
        ]),
      ],
      [
        'monitor-loader',
        obj([
          ['files', list(ml?.files)],
          ['stop-loss', str(ml?.['stop-loss'])],
          [
            'aws',
            obj([
              ['regions', list(ml?.aws?.regions)],
              ['engines', list(ml?.aws?.engines)],
              ['tags', sortedMap(ml?.aws?.tags, textOnly)],
            ]),
          ],
          [
            'local',
            obj([
              ['disable-auto', plainBool(ml?.local?.['disable-auto'])],
              ['disable-auto-root', plainBool(ml?.local?.['disable-auto-root'])],
              ['candidates', list(ml?.local?.candidates)],
            ]),
          ],
        ]),
      ],
      ['plugins', list(c.plugins)],
      ['sinks', sinks(c.sinks)],
      ['aws', aws(c.aws)],
      ['exporter', exporter(c.exporter)],
      // ha has no keys: never printed
      ['heartbeat', heartbeat(c.heartbeat)],
      [
        'mysql',
        obj([
          ['hostname', str(mysql?.hostname)],
          ['mycnf', str(mysql?.mycnf)],
          ['password', secret(mysql?.password)],
          ['password-file', str(mysql?.['password-file'])],
          ['socket', str(mysql?.socket)],
          ['timeout-connect', str(mysql?.['timeout-connect'])],
          ['username', str(mysql?.username)],
        ]),
      ],
      ['plans', plans(c.plans)],
      ['tags', sortedMap(c.tags, textOnly)],
      ['tls', tls(c.tls)],
      ['monitors', c.monitors && c.monitors.length > 0 ? c.monitors.map(monitor) : undefined],
    ]) ?? {}
  );
}

const YAML_OPTIONS = { lineWidth: 0 } as const;

/**
 * The server config as YAML (GET /config, `--print-config`). With only the defaults:
 * `api:\n  bind: 127.0.0.1:7522\nmysql:\n  timeout-connect: 10s\n  username: blip\n`.
 */
export function renderConfigYaml(c: Config): string {
  const o = renderConfigJson(c) as Out;
  return Object.keys(o).length === 0 ? '{}\n' : stringify(o, YAML_OPTIONS);
}

/** Finalized monitors as a YAML `monitors:` list (`--print-monitors`); passwords as `...`. */
export function renderMonitorsYaml(ms: FinalMonitorConfig[]): string {
  const secrets: string[] = [];
  for (const m of ms) monitorSecrets(m, secrets);
  const clean = [...new Set(secrets)].filter((x) => x.length >= 4);
  return stringify(scrub({ monitors: ms.map(monitor) }, clean), YAML_OPTIONS);
}
