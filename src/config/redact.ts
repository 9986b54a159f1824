/**
 * The rules that keep secrets out of every printed config (`--print-config`,
 * `--print-monitors`, `GET /config`, `GET /config?json`). They work on the shape of keys and
 * values, so a sink option added later is covered without being listed here:
 *
 * - a key that looks like a secret (`key`, `token`, `secret`, `password`, `passwd`, `pwd`,
 *   `auth`, `credential`, any case, anywhere in the key) has its whole value printed as `...`,
 *   unless the key ends in `-file` (its value is a path; the file is never printed);
 * - header values: every value of `headers` (`name=value,...`) and of a `header.<name>` key;
 * - in any value, the userinfo of a URL (`http://user:pw@host` → `http://user:...@host`;
 *   a user alone may be a token: `http://...@host`), a leading `user:pw@host` without scheme,
 *   and URL query parameters whose name looks like a secret (`?api_key=...`);
 * - in option values (sink options, exporter flags, meta), a `Name: value` header line and
 *   a list of `name=value` pairs keep the names only.
 */

/** What a secret is printed as. */
export const REDACTED = '...';

const SECRET_KEY = /key|token|secret|password|passwd|pwd|auth|credential/i;

/** True when a key's value is a secret by its name (see the file comment). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !/-file$/i.test(key);
}

const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)([^/?#@\s]*)@/gi;
const LEADING_USERINFO = /^([^/?#@\s:]+):([^/?#@\s]*)@/;
const QUERY_PARAM = /([?&;])([^=&#\s]+)=([^&#\s]*)/g;
const HEADER_LINE = /^(\s*[A-Za-z0-9_-]+\s*:)\s+\S.*$/s;
const PAIR_LIST = /^\s*[^=,\s]+\s*=[^,]*(?:,\s*[^=,\s]+\s*=[^,]*)*$/;

function userinfo(info: string): string {
  const colon = info.indexOf(':');
  return colon < 0 ? REDACTED : `${info.slice(0, colon)}:${REDACTED}`;
}

/** URL userinfo and secret-named query parameters in any text. */
export function redactText(value: string): string {
  if (value === '') return value;
  return value
    .replace(URL_USERINFO, (_m, scheme: string, info: string) => `${scheme}${userinfo(info)}@`)
    .replace(LEADING_USERINFO, (_m, user: string) => `${user}:${REDACTED}@`)
    .replace(QUERY_PARAM, (m, sep: string, name: string) =>
      isSecretKey(name) ? `${sep}${name}=${REDACTED}` : m,
    );
}

/** `a=1, b=2` → `a=..., b=...` (spaces around names kept). */
function redactPairs(value: string): string {
  return value
    .split(',')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0 ? pair : `${pair.slice(0, eq + 1)}${REDACTED}`;
    })
    .join(',');
}

/**
 * The printed form of one option value (a sink option, an exporter flag, a meta value) under
 * key `key`: the whole value when the key is a secret or a single header, each value of a
 * header list or `name=value` list, a header line's value, and the URL parts of redactText.
 */
export function redactOption(key: string, value: string): string {
  if (value === '') return value;
  const k = key.toLowerCase();
  if (isSecretKey(k) || k.startsWith('header.')) return REDACTED;
  if (k === 'headers' || PAIR_LIST.test(value)) return redactPairs(value);
  const header = HEADER_LINE.exec(value);
  if (header) return `${header[1]} ${REDACTED}`;
  return redactText(value);
}
