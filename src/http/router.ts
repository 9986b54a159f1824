/**
 * A small request router on `node:http`, behind sonde's management API. It answers the way
 * Go's `http.ServeMux` does, in one-line `text/plain` reasons:
 *
 * - routes match the decoded path exactly (case-sensitive, no trailing-slash folding), or
 *   every path under a prefix (`/ui/` for static files); anything else is `404 page not
 *   found`;
 * - a GET route also answers HEAD (headers only); a known path asked with another method is
 *   `405 method not allowed` with `Allow`;
 * - a request target that does not decode (`/%zz`) is `400 Bad Request`;
 * - request bodies are read and dropped up to a limit (`413 Payload Too Large` above it, then
 *   the connection is closed), so that a kept-alive connection stays in step;
 * - after shutdown(), `503 server is shutting down` and the connection is closed.
 *
 * A handler gets the raw request and response: it may answer at once (answers in
 * http-answer.ts) or keep the answer open (a stream), ending it when `call.signal` aborts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refuseMethod, sendText } from './answer.js';

/** A route's method; GET routes answer HEAD too, any other method changes state. */
export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request being answered by a route. */
export interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path, percent-decoded (the escapes of reserved characters such as `%2F` are kept). */
  readonly path: string;
  readonly query: Query;
  /**
   * Aborted once the answer is closed: finished, the client went away, or the router was
   * shut down. A handler that keeps its answer open (a stream) ends it then.
   */
  readonly signal: AbortSignal;
}

export type RouteHandler = (call: Call) => void | Promise<void>;

export interface Route {
  method: RouteMethod;
  /** The path; with `prefix`, every path that starts with it (e.g. `/ui/`). */
  path: string;
  prefix?: boolean;
  handler: RouteHandler;
}

export interface RouterOptions {
  /**
   * Checks made on every request once its target decodes, before routing (Host, token):
   * answer the refusal and return false.
   */
  admit?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
  /** Checks made before a state-changing route (any method but GET) reads the body. */
  admitChange?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Request bodies are read and dropped up to this many bytes; a larger one is refused. */
  bodyLimit: number;
  /** A failure of a handler or a check before anything was answered: answer it. */
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void;
}

/** Methods whose request bodies are read (and dropped) before routing. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY']);

/** Query parameters. A key repeated keeps its first value, as Go's `Query().Get` does. */
export class Query {
  readonly #raw: string;
  #values: Map<string, string> | undefined;

  constructor(raw: string) {
    this.#raw = raw;
  }

  /** The first value of `key` ('' for `?key` or `?key=`), or undefined when absent. */
  get(key: string): string | undefined {
    return this.#parsed().get(key);
  }

  has(key: string): boolean {
    return this.#parsed().has(key);
  }

  #parsed(): Map<string, string> {
    if (this.#values !== undefined) return this.#values;
    const values = new Map<string, string>();
    for (const pair of this.#raw === '' ? [] : this.#raw.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const key = queryUnescape(eq < 0 ? pair : pair.slice(0, eq));
      if (!values.has(key)) values.set(key, eq < 0 ? '' : queryUnescape(pair.slice(eq + 1)));
    }
    this.#values = values;
    return values;
  }
}

/** `+` is a space, `%XX` escapes decode; text whose escapes do not decode is kept as written. */
function queryUnescape(text: string): string {
  const spaced = text.replaceAll('+', ' ');
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * The path of an absolute-form target (`http://host:port/path?q`), as if the client had
 * sent the origin form; undefined when it is not a usable URL. Other targets (`*`) are kept.
 */
function originForm(target: string): string | undefined {
  const scheme = /^https?:\/\//i.exec(target);
  if (scheme === null) return target;
  const rest = target.slice(scheme[0].length);
  const end = rest.search(/[/?]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if (authority === '' || rest.includes('#') || !URL.canParse(target)) return undefined;
  const tail = end < 0 ? '' : rest.slice(end);
  return tail.startsWith('/') ? tail : `/${tail}`;
}

/**
 * A request target split into its decoded path and its raw query (the text after the first
 * `?` or `#`); undefined when the path's escapes do not decode. `%25` stays escaped, and so
 * do the escapes of reserved characters (`%2F` never becomes a path separator).
 */
export function splitTarget(url: string): { path: string; query: string } | undefined {
  const target = url.startsWith('/') ? url : originForm(url);
  if (target === undefined) return undefined;
  const end = target.search(/[?#]/);
  const raw = end < 0 ? target : target.slice(0, end);
  const query = end < 0 ? '' : target.slice(end + 1);
  if (!raw.includes('%')) return { path: raw, query };
  try {
    return { path: decodeURI(raw.replaceAll('%25', '%2525')), query };
  } catch {
    return undefined;
  }
}

/** Whether a request comes with a body to read (a length other than 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  if (!BODY_METHODS.has(req.method ?? '')) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Read a request body to its end and drop it: `large` as soon as it exceeds `limit`. */
function dropBody(req: IncomingMessage, limit: number): Promise<'read' | 'large' | 'gone'> {
  if (Number(req.headers['content-length']) > limit) return Promise.resolve('large');
  return new Promise((resolve) => {
    let size = 0;
    const finish = (how: 'read' | 'large' | 'gone'): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onGone);
      req.off('error', onGone);
      resolve(how);
    };
    // Still flowing once finished: the rest of a refused body is read and thrown away.
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish('large');
    };
    const onEnd = (): void => finish('read');
    const onGone = (): void => finish('gone');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onGone);
    req.on('error', onGone);
  });
}

/** The `Allow` header of a path's routes: HEAD rides along with GET. */
function allowOf(routes: ReadonlyMap<string, Route>): string {
  const methods = [...routes.keys()];
  return methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', ');
}

class RouteCall implements Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  readonly query: Query;
  readonly #router: Router;
  #controller: AbortController | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, path: string, query: string, router: Router) {
    this.req = req;
    this.res = res;
    this.path = path;
    this.query = new Query(query);
    this.#router = router;
  }

  get signal(): AbortSignal {
    this.#controller ??= this.#router.track(this.res);
    return this.#controller.signal;
  }
}

/** The routes of one listener; `handle` is its request listener. */
export class Router {
  readonly #exact = new Map<string, Map<string, Route>>();
  /** Prefix routes, longest prefix first. */
  readonly #prefixes: { prefix: string; routes: Map<string, Route> }[] = [];
  readonly #opts: RouterOptions;
  readonly #open = new Set<AbortController>();
  #shutDown = false;

  constructor(routes: readonly Route[], opts: RouterOptions) {
    this.#opts = opts;
    for (const route of routes) this.#add(route);
    this.#prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  #add(route: Route): void {
    const found =
      route.prefix === true
        ? this.#prefixes.find((p) => p.prefix === route.path)?.routes
        : this.#exact.get(route.path);
    const methods = found ?? new Map<string, Route>();
    if (found === undefined && route.prefix === true)
      this.#prefixes.push({ prefix: route.path, routes: methods });
    else if (found === undefined) this.#exact.set(route.path, methods);
    if (methods.has(route.method)) throw new Error(`route ${route.method} ${route.path} is defined twice`);
    methods.set(route.method, route);
  }

  #lookup(path: string): Map<string, Route> | undefined {
    return this.#exact.get(path) ?? this.#prefixes.find((p) => path.startsWith(p.prefix))?.routes;
  }

  /** Node's request listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.#route(req, res).catch((err: unknown) => this.#failed(err, req, res));
  };

  /** Answer 503 to every later request and abort the signal of every answer still open. */
  shutdown(): void {
    this.#shutDown = true;
    for (const c of this.#open) c.abort(new Error('the server is shutting down'));
    this.#open.clear();
  }

  /** An abort controller for `res`, aborted when it closes or at shutdown. */
  track(res: ServerResponse): AbortController {
    const c = new AbortController();
    if (this.#shutDown || res.destroyed || res.writableEnded) {
      c.abort(new Error('the answer is closed'));
      return c;
    }
    this.#open.add(c);
    res.once('close', () => {
      this.#open.delete(c);
      c.abort(new Error('the answer is closed'));
    });
    return c;
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = splitTarget(req.url ?? '/');
    if (target === undefined) return sendText(res, req, 400, 'Bad Request');
    if (this.#shutDown) return sendText(res, req, 503, 'server is shutting down', { Connection: 'close' });
    if (this.#opts.admit !== undefined && !this.#opts.admit(req, res, target.path)) return;
    const routes = this.#lookup(target.path);
    const route = routes?.get(req.method === 'HEAD' ? 'GET' : (req.method ?? ''));
    const changes = route !== undefined && route.method !== 'GET';
    if (changes && this.#opts.admitChange !== undefined && !this.#opts.admitChange(req, res)) return;
    if (hasBody(req)) {
      const body = await dropBody(req, this.#opts.bodyLimit);
      if (body === 'gone') return;
      if (body === 'large') return sendText(res, req, 413, 'Payload Too Large', { Connection: 'close' });
    }
    if (routes === undefined) return sendText(res, req, 404, '404 page not found');
    if (route === undefined) return refuseMethod(res, req, allowOf(routes), 'method not allowed');
    await route.handler(new RouteCall(req, res, target.path, target.query, this));
  }

  #failed(err: unknown, req: IncomingMessage, res: ServerResponse): void {
    if (res.headersSent) res.destroy();
    else this.#opts.onError(err, req, res);
  }
}
