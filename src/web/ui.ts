/**
 * The web page on the API listener (docs/ui.md): `GET /` (the page), `GET /ui/<file>` (its
 * script and styles, and uPlot's, all served from the package: the page works offline), and
 * the JSON it reads, `GET /api/ui/fleet`, `GET /api/ui/monitor?id=ID` and the Queries tab's
 * `GET /api/ui/queries?id=ID` (docs/api.md).
 *
 * The page and its files hold no data, so they are served without the API token; the JSON
 * needs it like every other path. Every answer of the page carries a Content-Security-Policy
 * that allows scripts, styles and requests from the listener only (no inline script). Files
 * are read once, when the routes are built (at boot), and kept with an ETag; the gzipped copy
 * is made at the first request that accepts gzip (compressing the page's files at level 9
 * took a few milliseconds of every start) and kept.
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { UiSource } from '../core/ui.js';
import { send, sendText } from '../http/answer.js';
import type { Call, Route } from '../http/router.js';
import { readShipped } from '../util/shipped.js';
import { escapeHtml } from '../util/text.js';

/** The page's own files: `web/` at the package root (next to `dist/`). */
const WEB_DIR = resolve(import.meta.dirname, '../../../web');
const require = createRequire(import.meta.url);

/** Where the static files under `/ui/` come from, and their types. */
const FILES: Readonly<Record<string, { path: () => string; type: string }>> = {
  'app.js': { path: () => join(WEB_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'app.css': { path: () => join(WEB_DIR, 'app.css'), type: 'text/css; charset=utf-8' },
  'queries.js': { path: () => join(WEB_DIR, 'queries.js'), type: 'text/javascript; charset=utf-8' },
  'uplot.min.js': {
    path: () => require.resolve('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uplot.min.css': {
    path: () => require.resolve('uplot/dist/uPlot.min.css'),
    type: 'text/css; charset=utf-8',
  },
  'uplot-LICENSE.txt': {
    path: () => join(require.resolve('uplot/dist/uPlot.min.css'), '../../LICENSE'),
    type: 'text/plain; charset=utf-8',
  },
};
const PAGE = { path: () => join(WEB_DIR, 'index.html'), type: 'text/html; charset=utf-8' };

/** Scripts, styles, images and requests from this listener only; no framing, no inline code. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

const JSON_TYPE = 'application/json; charset=utf-8';

/** What the page learns before it reads anything: whether to ask for the token, and hide actions. */
const SESSION_PATH = '/api/ui/session';

/**
 * The paths open without the token: the page, its files and whether a token is needed (no
 * data in them).
 */
export function isPublicUiPath(path: string): boolean {
  return (
    path === '/' || path === SESSION_PATH || (path.startsWith('/ui/') && Object.hasOwn(FILES, path.slice(4)))
  );
}

/** How the API is set up, as the page needs to know it. */
export interface UiSession {
  /** `api.token-file` is set: the page asks for the token before reading. */
  tokenRequired: boolean;
  /** `api.read-only`: the page shows no actions. */
  readOnly: boolean;
}

interface Asset {
  body: Buffer;
  /** The gzipped body, once a request asked for it. */
  gzip?: Buffer;
  /** The ETag, once a request asked for the file. */
  etag?: string;
  type: string;
}

/**
 * Read once and keep: the body, and on first use its ETag (a hash of the content: Node's
 * crypto is loaded then, not at start) and its gzipped copy.
 */
function assetCache(): (name: string, file: { path: () => string; type: string }) => Asset {
  const cache = new Map<string, Asset>();
  return (name, file) => {
    let a = cache.get(name);
    if (a === undefined) {
      a = { body: readShipped(`web/${name}`, file.path), type: file.type };
      cache.set(name, a);
    }
    return a;
  };
}

/** A file's ETag: a hash of its content. */
function etagOf(body: Buffer): string {
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256').update(body);
  return `"${hash.digest('base64url').slice(0, 22)}"`;
}

/** Answer a file: 304 when the client has it, gzipped when it accepts gzip. */
function sendAsset(call: Call, a: Asset): void {
  const { req, res } = call;
  const etag = (a.etag ??= etagOf(a.body));
  const headers: Record<string, string> = {
    ...PAGE_HEADERS,
    ETag: etag,
    'Cache-Control': 'no-cache',
    Vary: 'Accept-Encoding',
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const gz = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  send(
    res,
    req,
    200,
    a.type,
    gz ? (a.gzip ??= process.getBuiltinModule('node:zlib').gzipSync(a.body, { level: 9 })) : a.body,
    gz ? { ...headers, 'Content-Encoding': 'gzip' } : headers,
  );
}

/** JSON that must not be cached (it changes at every collection). */
function sendJson(call: Call, value: unknown): void {
  send(call.res, call.req, 200, JSON_TYPE, JSON.stringify(value), {
    ...PAGE_HEADERS,
    'Cache-Control': 'no-store',
  });
}

/** The page's routes: GET only (HEAD rides along); state changes stay the API's POST paths. */
export function uiRoutes(source: UiSource, session: UiSession): Route[] {
  const asset = assetCache();
  // Every file is read now, when the API is built: a request never opens a file, so the page
  // answers even while the process has no descriptor to spare. A file that cannot be read
  // now is tried again at its first request, which reports the error.
  for (const [name, file] of [['index.html', PAGE] as const, ...Object.entries(FILES)]) {
    try {
      asset(name, file);
    } catch {
      // read again (and reported) at the first request
    }
  }
  return [
    { method: 'GET', path: SESSION_PATH, handler: (call) => sendJson(call, session) },
    { method: 'GET', path: '/', handler: (call) => sendAsset(call, asset('index.html', PAGE)) },
    {
      method: 'GET',
      path: '/ui/',
      prefix: true,
      handler: (call) => {
        const name = call.path.slice(4);
        const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
        if (file === undefined) return sendText(call.res, call.req, 404, '404 page not found');
        sendAsset(call, asset(name, file));
      },
    },
    { method: 'GET', path: '/api/ui/fleet', handler: (call) => sendJson(call, source.fleet()) },
    {
      method: 'GET',
      path: '/api/ui/queries',
      handler: (call) => {
        const id = call.query.get('id');
        if (id === undefined || id === '')
          return sendText(call.res, call.req, 400, 'missing id=monitorId in query');
        const q = source.queries?.(id);
        if (q === undefined)
          return sendText(
            call.res,
            call.req,
            404,
            `monitor ${escapeHtml(id.replace(/[\r\n]/g, ''))} not loaded`,
          );
        sendJson(call, q);
      },
    },
    {
      method: 'GET',
      path: '/api/ui/monitor',
      handler: (call) => {
        const id = call.query.get('id');
        if (id === undefined || id === '')
          return sendText(call.res, call.req, 400, 'missing id=monitorId in query');
        const view = source.monitor(id);
        if (view === undefined)
          return sendText(
            call.res,
            call.req,
            404,
            `monitor ${escapeHtml(id.replace(/[\r\n]/g, ''))} not loaded`,
          );
        sendJson(call, view);
      },
    },
  ];
}
