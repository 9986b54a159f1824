/**
 * The HTTP POST shared by the prom-pushgateway, chronosphere and otlp sinks: one request,
 * the whole answer read, errors as plain text that never holds a credential.
 *
 * A URL may carry `user:password@`: fetch refuses such URLs, so the credentials move to an
 * `Authorization: Basic` header (what Go's HTTP client, and so Blip, does with them) and
 * every message names the URL without them.
 */
import { Buffer } from 'node:buffer';
import { httpPost } from './http.js';

/** Upper bound for one request when the caller passes no deadline (Retry passes one). */
export const DEFAULT_POST_TIMEOUT_MS = 30_000;

/** Where to POST: the request URL, its printable form and optional basic auth. */
export interface PostTarget {
  /** URL without user info, used for the request and in messages. */
  readonly url: string;
  /** `Basic <base64>` when the configured URL had user info. */
  readonly authorization?: string;
}

/**
 * Parse an absolute http(s) URL. Throws `invalid <what>: <reason>` without echoing the
 * value (it may hold a password).
 */
export function parseTarget(raw: string, what: string): PostTarget {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`invalid ${what}: not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`invalid ${what}: scheme must be http or https, not ${u.protocol.replace(/:$/, '')}`);
  }
  let authorization: string | undefined;
  if (u.username !== '' || u.password !== '') {
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  return authorization === undefined ? { url: u.href } : { url: u.href, authorization };
}

/** What came back: status, body bytes and content type (lowercase, may be empty). */
export interface PostAnswer {
  status: number;
  body: Uint8Array;
  contentType: string;
}

/**
 * POST `body` to `url` (a full URL, usually `target.url` plus a path) through the sinks'
 * HTTP helper, without proxy (`http.proxy` applies to datadog and signalfx only). Resolves
 * with the answer whatever its status; rejects `POST <url>: <transport error>` when no
 * answer came (refused, reset, aborted by `signal` or by {@link DEFAULT_POST_TIMEOUT_MS}).
 */
export async function postBytes(
  target: PostTarget,
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
  signal?: AbortSignal,
): Promise<PostAnswer> {
  const all: Record<string, string> = { ...headers };
  if (target.authorization !== undefined) all['Authorization'] = target.authorization;
  try {
    const res = await httpPost({
      url,
      headers: all,
      body,
      timeoutMs: DEFAULT_POST_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    const ct = res.headers['content-type'];
    return { status: res.status, body: res.body, contentType: (ct ?? '').toLowerCase() };
  } catch (err) {
    throw new Error(`POST ${url}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** A response body as text for an error message: UTF-8, trimmed, at most 512 characters. */
export function bodyText(body: Uint8Array): string {
  const text = new TextDecoder().decode(body).trim();
  return text.length > 512 ? `${text.slice(0, 512)}…` : text;
}
