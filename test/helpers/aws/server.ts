/**
 * A small local AWS endpoint for tests: one HTTP server on 127.0.0.1, port 0, that the SDK
 * reaches through its standard endpoint variables (`AWS_ENDPOINT_URL_<SERVICE>`,
 * `AWS_EC2_METADATA_SERVICE_ENDPOINT`).
 *
 * Requests are routed three ways:
 * - JSON protocols (1.0 and 1.1): by the `X-Amz-Target` header, e.g.
 *   `secretsmanager.GetSecretValue` or `GraniteServiceVersion20100801.GetMetricData`;
 * - Query protocol: by the `Action` form field (body or URL query), e.g. `DescribeDBInstances`;
 * - plain routes (`METHOD /path`, e.g. `PUT /latest/api/token`) for unsigned endpoints such
 *   as the EC2 instance metadata service.
 *
 * Every JSON or Query operation has its SigV4 signature checked first (sigv4.ts); a bad
 * signature is answered with the error AWS sends and the handler is not called. Every
 * request, refused or not, is recorded.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { verifyAuthorizationHeader } from './sigv4.js';
import type { SigV4Accepted, SigV4Rejected, SignedRequest, TestCredentials } from './sigv4.js';

export type AwsProtocol = 'json' | 'query' | 'plain';

/** A request as the handler sees it. */
export interface AwsRequest extends SignedRequest {
  protocol: AwsProtocol;
  /** The path without the query. */
  path: string;
  /** The URL query. */
  query: URLSearchParams;
  /** JSON protocols: the `X-Amz-Target` value. */
  target?: string;
  /** Query protocol: the `Action`. */
  action?: string;
  /** Query protocol: every form field (body and URL query together). */
  params?: URLSearchParams;
  /** JSON protocols: the parsed body (`{}` for an empty one). */
  input?: unknown;
  /** JSON and Query: what the signature check proved. */
  signature?: SigV4Accepted;
}

/** One recorded request: what came in and how it was answered. */
export interface RecordedAwsRequest extends AwsRequest {
  /** The key it was routed by (target, action or `METHOD /path`), `undefined` when unknown. */
  operation?: string;
  /** Set when the signature check refused it. */
  rejected?: SigV4Rejected;
  status: number;
}

/** What to answer. */
export interface AwsReply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export type AwsHandler = (req: AwsRequest) => AwsReply | Promise<AwsReply>;

export interface AwsServerOptions {
  /** The credentials signatures are checked against (several allowed: key rotation tests). */
  credentials?: TestCredentials | TestCredentials[];
  /** The signing name the credential scope must carry (`secretsmanager`, `rds`, `monitoring`). */
  service?: string;
  /** The region the credential scope must carry. */
  region?: string;
  /** JSON targets and Query actions → handler. */
  operations?: Record<string, AwsHandler>;
  /** Unsigned `METHOD /path` → handler. */
  routes?: Record<string, AwsHandler>;
}

export interface AwsServer {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly port: number;
  readonly requests: RecordedAwsRequest[];
  /** Adds or replaces the handler of a JSON target or Query action. */
  operation(name: string, handler: AwsHandler): void;
  /** Adds or replaces an unsigned route (`PUT /latest/api/token`). */
  route(key: string, handler: AwsHandler): void;
  /** Replaces the credentials signatures are checked against. */
  setCredentials(credentials: TestCredentials | TestCredentials[]): void;
  close(): Promise<void>;
}

let requestSeq = 0;
function requestId(): string {
  requestSeq += 1;
  return `00000000-0000-4000-8000-${requestSeq.toString(16).padStart(12, '0')}`;
}

/** A JSON protocol answer (`application/x-amz-json-1.1` unless told). */
export function jsonReply(
  output: unknown,
  status = 200,
  contentType = 'application/x-amz-json-1.1',
): AwsReply {
  return {
    status,
    headers: { 'content-type': contentType, 'x-amzn-requestid': requestId() },
    body: JSON.stringify(output),
  };
}

/**
 * A JSON protocol error: `{"__type": code, "message": …}` with `X-Amzn-ErrorType`. `extra`
 * adds headers, e.g. `x-amzn-query-error: Code;Sender` for query-compatible services.
 */
export function jsonError(
  code: string,
  message: string,
  status = 400,
  extra: Record<string, string> = {},
): AwsReply {
  return {
    status,
    headers: {
      'content-type': 'application/x-amz-json-1.1',
      'x-amzn-requestid': requestId(),
      'x-amzn-errortype': code,
      ...extra,
    },
    body: JSON.stringify({ __type: code, message }),
  };
}

export function xmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A Query protocol answer: `<ActionResponse><ActionResult>…</ActionResult>…`. */
export function queryReply(action: string, resultXml: string, xmlns: string): AwsReply {
  const body =
    `<${action}Response xmlns="${xmlns}"><${action}Result>${resultXml}</${action}Result>` +
    `<ResponseMetadata><RequestId>${requestId()}</RequestId></ResponseMetadata></${action}Response>`;
  return { status: 200, headers: { 'content-type': 'text/xml' }, body };
}

/** A Query protocol error (`<ErrorResponse><Error><Type>…<Code>…<Message>…`). */
export function queryError(
  code: string,
  message: string,
  status = 400,
  type: 'Sender' | 'Receiver' = 'Sender',
): AwsReply {
  const body =
    `<ErrorResponse><Error><Type>${type}</Type><Code>${xmlEscape(code)}</Code>` +
    `<Message>${xmlEscape(message)}</Message></Error><RequestId>${requestId()}</RequestId></ErrorResponse>`;
  return { status, headers: { 'content-type': 'text/xml' }, body };
}

function headerString(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Works out the protocol and routing key of a request. */
function classify(req: SignedRequest): AwsRequest {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  const target = headerString(req.headers, 'x-amz-target');
  if (target !== undefined) {
    let input: unknown = {};
    const text = req.body.toString('utf8');
    if (text.trim() !== '') {
      try {
        input = JSON.parse(text) as unknown;
      } catch {
        input = undefined;
      }
    }
    return { ...req, protocol: 'json', path, query, target, input };
  }
  const ctype = headerString(req.headers, 'content-type') ?? '';
  const params = new URLSearchParams(query);
  if (ctype.startsWith('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(req.body.toString('utf8'))) params.append(k, v);
  }
  const action = params.get('Action') ?? undefined;
  if (action !== undefined && headerString(req.headers, 'authorization') !== undefined) {
    return { ...req, protocol: 'query', path, query, action, params };
  }
  return { ...req, protocol: 'plain', path, query };
}

/** Routes one classified request to its handler, checking the signature first. */
async function dispatch(
  r: AwsRequest,
  opts: AwsServerOptions,
  operations: Map<string, AwsHandler>,
  routes: Map<string, AwsHandler>,
): Promise<{ reply: AwsReply; operation?: string; rejected?: SigV4Rejected }> {
  if (r.protocol === 'plain') {
    const key = `${r.method} ${r.path}`;
    const h = routes.get(key);
    if (!h) return { reply: { status: 404, body: 'Not Found' } };
    return { reply: await h(r), operation: key };
  }
  const flavour = r.protocol === 'json' ? 'json' : 'query';
  const creds = opts.credentials ?? [];
  const verdict = verifyAuthorizationHeader(r, creds, {
    service: opts.service,
    region: opts.region,
    flavour,
  });
  const name = r.protocol === 'json' ? (r.target ?? '') : (r.action ?? '');
  if (!verdict.ok) {
    const reply =
      flavour === 'json'
        ? jsonError(verdict.code, verdict.message, verdict.status)
        : queryError(verdict.code, verdict.message, verdict.status);
    return { reply, operation: name, rejected: verdict };
  }
  r.signature = verdict;
  const h = operations.get(name);
  if (!h) {
    const reply =
      flavour === 'json'
        ? jsonError('UnknownOperationException', '')
        : queryError('InvalidAction', `Could not find operation ${name}`);
    return { reply };
  }
  if (r.protocol === 'json' && r.input === undefined) {
    return {
      reply: jsonError('SerializationException', 'Start of structure or map found where not expected.'),
      operation: name,
    };
  }
  return { reply: await h(r), operation: name };
}

export async function startAwsServer(opts: AwsServerOptions = {}): Promise<AwsServer> {
  const operations = new Map(Object.entries(opts.operations ?? {}));
  const routes = new Map(Object.entries(opts.routes ?? {}));
  const options: AwsServerOptions = { ...opts };
  const requests: RecordedAwsRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = classify({
        method: req.method ?? '',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      dispatch(r, options, operations, routes)
        .catch((err: unknown) => ({ reply: { status: 500, body: String(err) } }))
        .then(
          ({
            reply,
            operation,
            rejected,
          }: {
            reply: AwsReply;
            operation?: string;
            rejected?: SigV4Rejected;
          }) => {
            const status = reply.status ?? 200;
            requests.push({ ...r, operation, rejected, status });
            res.writeHead(status, reply.headers ?? {});
            res.end(reply.body ?? '');
          },
        )
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    requests,
    operation: (name, handler) => void operations.set(name, handler),
    route: (key, handler) => void routes.set(key, handler),
    setCredentials: (c) => {
      options.credentials = c;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
