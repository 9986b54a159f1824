/**
 * Interpolation, with sonde's semantics:
 * every token is replaced on its own, surrounding text is kept, values are literal.
 */

const ENV_TOKEN = /\$\{([A-Za-z0-9_.-]+)(?::-([A-Za-z0-9_.-]*))?\}/g;

/**
 * A `${NAME}` without a default whose variable is not set. The message names the variable
 * (never a value); callers put the file and key in front of it.
 */
export class UnsetVariableError extends Error {
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is not set (use \${${variable}:-default} for a default)`);
    this.name = 'UnsetVariableError';
  }
}

/**
 * `${NAME}` and `${NAME:-default}`. `${NAME}` is NAME's value, also when it is set to the
 * empty string; an unset NAME throws UnsetVariableError, so a forgotten variable never turns
 * a host or user silently into "". `${NAME:-default}` gives `default` when NAME is unset or
 * empty; `${NAME:-}` asks for the empty string explicitly.
 */
export function interpolateEnv(s: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!s.includes('${')) return s;
  return s.replace(ENV_TOKEN, (_m, name: string, def: string | undefined) => {
    const v = Object.hasOwn(env, name) ? env[name] : undefined;
    if (def !== undefined) return v === undefined || v === '' ? def : v;
    if (v === undefined) throw new UnsetVariableError(name);
    return v;
  });
}

/** The monitor fields `%{monitor.X}` can read. */
export interface MonitorFields {
  id?: string;
  hostname?: string;
  socket?: string;
  mycnf?: string;
  username?: string;
  password?: string;
  'password-file'?: string;
  'timeout-connect'?: string;
  tags?: Record<string, string>;
  meta?: Record<string, string>;
}

const MONITOR_TOKEN = /%\{monitor\.([^}]*)\}/g;

function monitorField(m: MonitorFields, path: string): string {
  if (path.startsWith('tags.')) return m.tags?.[path.slice(5)] ?? '';
  if (path.startsWith('meta.')) return m.meta?.[path.slice(5)] ?? '';
  switch (path.toLowerCase()) {
    case 'id':
    case 'monitor-id':
    case 'monitorid':
      return m.id ?? '';
    case 'hostname':
      return m.hostname ?? '';
    case 'socket':
      return m.socket ?? '';
    case 'mycnf':
      return m.mycnf ?? '';
    case 'username':
      return m.username ?? '';
    case 'password':
      return m.password ?? '';
    case 'password-file':
      return m['password-file'] ?? '';
    case 'timeout-connect':
      return m['timeout-connect'] ?? '';
    default:
      return '';
  }
}

/** `%{monitor.FIELD}`, `%{monitor.tags.KEY}`, `%{monitor.meta.KEY}`. */
export function interpolateMonitor(s: string, m: MonitorFields): string {
  if (!s.includes('%{monitor.')) return s;
  return s.replace(MONITOR_TOKEN, (_m, path: string) => monitorField(m, path));
}
