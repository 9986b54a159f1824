/**
 * Interpolation, with sonde's semantics:
 * every token is replaced on its own, surrounding text is kept, values are literal.
 */

const ENV_TOKEN = /\$\{([A-Za-z0-9_.-]+)(?::-([A-Za-z0-9_.-]*))?\}/g;

/** `${NAME}` and `${NAME:-default}`; `:-` applies when NAME is unset or empty. */
export function interpolateEnv(s: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!s.includes('${')) return s;
  return s.replace(ENV_TOKEN, (_m, name: string, def: string | undefined) => {
    const v = env[name] ?? '';
    if (v === '' && def !== undefined) return def;
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
