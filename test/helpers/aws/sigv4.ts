/**
 * An AWS Signature Version 4 checker for the local AWS fakes: it recomputes the canonical
 * request, the string to sign and the signature from the test credentials with node:crypto
 * alone (no SDK code), so a test fails when the client signs wrongly even if the SDK's own
 * signer agrees with itself.
 *
 * Two forms are checked:
 * - a request signed in its `Authorization` header (`AWS4-HMAC-SHA256 Credential=…,
 *   SignedHeaders=…, Signature=…`), as every SDK API call is;
 * - a presigned URL (`X-Amz-Algorithm`, `X-Amz-Credential`, … `X-Amz-Signature` in the
 *   query string), as an RDS IAM authentication token is (`host:port/?Action=connect&…`).
 *
 * A failed check carries the HTTP status, error code and message AWS answers with, so the
 * fake can send them back and the client sees the failure the real service would produce.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Credentials the test hands both to the client (through the environment) and to the fake. */
export interface TestCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** When set, the request must carry the same `X-Amz-Security-Token`. */
  sessionToken?: string;
}

/** The parts of an incoming request the signature covers. */
export interface SignedRequest {
  method: string;
  /** Path and query exactly as received on the wire, e.g. `/` or `/a%20b?x=1`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What a good signature proved. */
export interface SigV4Accepted {
  ok: true;
  accessKeyId: string;
  /** `YYYYMMDD` of the credential scope. */
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  /** The `X-Amz-Date` the request was signed at. */
  amzDate: Date;
}

/** Why a signature was refused, in the words AWS uses. */
export interface SigV4Rejected {
  ok: false;
  status: number;
  /** The AWS error code, e.g. `InvalidSignatureException`, `SignatureDoesNotMatch`. */
  code: string;
  message: string;
}

export type SigV4Verdict = SigV4Accepted | SigV4Rejected;

/** Constraints the fake puts on the credential scope and the clock. */
export interface VerifyOptions {
  /** The signing name the service expects (`secretsmanager`, `rds`, `monitoring`, `rds-db`). */
  service?: string;
  /** The region the fake plays; a signature scoped to another region is refused. */
  region?: string;
  /** The clock to compare `X-Amz-Date` with (default: now). */
  now?: Date;
  /**
   * How the error is worded: `json` for the JSON protocols (`InvalidSignatureException`…),
   * `query` for the Query protocol (`SignatureDoesNotMatch`…). Default `json`.
   */
  flavour?: 'json' | 'query';
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** How far a header-signed request's clock may be from the server's, as AWS allows. */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** The longest validity a presigned URL may ask for (seven days). */
const MAX_EXPIRES_S = 7 * 24 * 3600;
const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** The key derived from the secret for one day, region and service. */
export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const kDate = hmac(`AWS4${secret}`, date);
  const kRegion = hmac(kDate, region);
  const kService = hmac(kRegion, service);
  return hmac(kService, 'aws4_request');
}

/** RFC 3986 percent-encoding: everything but `A-Z a-z 0-9 - _ . ~` is escaped. */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, '%20'));
  } catch {
    return s;
  }
}

/**
 * The canonical URI: the path as sent, with `.`/`..` segments and empty segments removed,
 * then percent-encoded once more (every AWS service but S3 signs the path twice-encoded).
 */
export function canonicalUri(rawPath: string): string {
  const segments: string[] = [];
  for (const seg of rawPath.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') segments.pop();
    else segments.push(seg);
  }
  const trailing = rawPath.length > 1 && rawPath.endsWith('/') && segments.length > 0 ? '/' : '';
  const normal = `/${segments.join('/')}${trailing}`;
  return uriEncode(normal).replace(/%2F/g, '/');
}

/** Query pairs decoded from a raw query string (`a=1&b=%20`), in order. */
export function parseQuery(raw: string): Array<[string, string]> {
  if (raw === '') return [];
  return raw
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const i = p.indexOf('=');
      return i < 0 ? [decode(p), ''] : [decode(p.slice(0, i)), decode(p.slice(i + 1))];
    });
}

/** The canonical query string: pairs re-encoded, sorted by name then value, `X-Amz-Signature` left out. */
export function canonicalQuery(pairs: Array<[string, string]>): string {
  return pairs
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : v;
}

/** `name:value\n` for each signed header, values trimmed and inner runs of spaces collapsed. */
function canonicalHeaders(headers: IncomingHttpHeaders, signed: string[]): string | undefined {
  let out = '';
  for (const name of signed) {
    const v = headerValue(headers, name);
    if (v === undefined) return undefined;
    out += `${name}:${v.trim().replace(/\s+/g, ' ')}\n`;
  }
  return out;
}

/** Parses `20240102T030405Z`. */
export function parseAmzDate(s: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, se] = m.map(Number) as [number, number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, se));
}

/** `20240102T030405Z` for a date. */
export function formatAmzDate(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

type RefusalKind = 'mismatch' | 'unknown-key' | 'missing' | 'expired' | 'scope' | 'token';

/** Each refusal: its error code in the Query protocol, in JSON, and its default message. */
const REFUSALS: Record<RefusalKind, { query: string; json: string; message: string }> = {
  mismatch: { query: 'SignatureDoesNotMatch', json: 'InvalidSignatureException', message: MISMATCH },
  'unknown-key': {
    query: 'InvalidClientTokenId',
    json: 'UnrecognizedClientException',
    message: 'The security token included in the request is invalid.',
  },
  token: {
    query: 'InvalidClientTokenId',
    json: 'UnrecognizedClientException',
    message: 'The security token included in the request is invalid.',
  },
  missing: {
    query: 'MissingAuthenticationToken',
    json: 'MissingAuthenticationTokenException',
    message: 'Missing Authentication Token',
  },
  expired: {
    query: 'SignatureDoesNotMatch',
    json: 'InvalidSignatureException',
    message: 'Signature expired',
  },
  scope: {
    query: 'SignatureDoesNotMatch',
    json: 'InvalidSignatureException',
    message: 'Credential should be scoped to a valid region.',
  },
};

/** The refusal, worded for the protocol the fake speaks (403 in Query, 400 in JSON). */
function reject(flavour: 'json' | 'query', kind: RefusalKind, detail?: string): SigV4Rejected {
  const r = REFUSALS[kind];
  const q = flavour === 'query';
  // The mismatch and key refusals always say AWS's own words; the others may say more.
  const fixed = kind === 'mismatch' || kind === 'unknown-key' || kind === 'token';
  return {
    ok: false,
    status: q ? 403 : 400,
    code: q ? r.query : r.json,
    message: fixed ? r.message : (detail ?? r.message),
  };
}

interface Scope {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
}

/** A signature that checked out, by the scope it was made for. */
function accepted(scope: Scope, signedHeaders: string[], amzDate: Date): SigV4Accepted {
  return {
    ok: true,
    accessKeyId: scope.accessKeyId,
    date: scope.date,
    region: scope.region,
    service: scope.service,
    signedHeaders,
    amzDate,
  };
}

/** `AKID/20240102/us-east-1/secretsmanager/aws4_request` → its parts. */
function parseCredential(s: string): Scope | undefined {
  const parts = s.split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request') return undefined;
  const [accessKeyId, date, region, service] = parts as [string, string, string, string];
  if (!/^\d{8}$/.test(date) || region === '' || service === '') return undefined;
  return { accessKeyId, date, region, service };
}

/** Checks the scope against the fake's service, region, the date and the known keys. */
function checkScope(
  scope: Scope,
  amzDate: string,
  creds: TestCredentials[],
  opts: VerifyOptions,
): SigV4Rejected | TestCredentials {
  const flavour = opts.flavour ?? 'json';
  const cred = creds.find((c) => c.accessKeyId === scope.accessKeyId);
  if (!cred) return reject(flavour, 'unknown-key');
  if (!amzDate.startsWith(scope.date)) {
    return reject(
      flavour,
      'scope',
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${scope.date}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`,
    );
  }
  if (opts.service !== undefined && scope.service !== opts.service) {
    return reject(flavour, 'scope', `Credential should be scoped to correct service: '${opts.service}'. `);
  }
  if (opts.region !== undefined && scope.region !== opts.region) {
    return reject(flavour, 'scope', `Credential should be scoped to a valid region. `);
  }
  return cred;
}

function sameHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** The signature over one canonical request. */
export function computeSignature(
  canonicalRequest: string,
  amzDate: string,
  scope: Scope,
  secret: string,
): string {
  const credentialScope = `${scope.date}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  return createHmac('sha256', signingKey(secret, scope.date, scope.region, scope.service))
    .update(stringToSign, 'utf8')
    .digest('hex');
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q + 1)];
}

/** Parses `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`. */
function parseAuthorization(
  auth: string,
): { credential: string; signedHeaders: string; signature: string } | undefined {
  if (!auth.startsWith(`${ALGORITHM} `)) return undefined;
  const fields = new Map<string, string>();
  for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
    const i = part.indexOf('=');
    if (i > 0) fields.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (credential === undefined || signedHeaders === undefined || signature === undefined) return undefined;
  return { credential, signedHeaders, signature };
}

/** Verifies a request signed in its `Authorization` header. */
export function verifyAuthorizationHeader(
  req: SignedRequest,
  credentials: TestCredentials | TestCredentials[],
  opts: VerifyOptions = {},
): SigV4Verdict {
  const flavour = opts.flavour ?? 'json';
  const creds = Array.isArray(credentials) ? credentials : [credentials];
  const auth = headerValue(req.headers, 'authorization');
  const amzDate = headerValue(req.headers, 'x-amz-date');
  if (auth === undefined) return reject(flavour, 'missing');
  const parsed = parseAuthorization(auth);
  if (!parsed)
    return reject(
      flavour,
      'missing',
      `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.`,
    );
  if (amzDate === undefined)
    return reject(
      flavour,
      'missing',
      `Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.`,
    );
  const when = parseAmzDate(amzDate);
  const scope = parseCredential(parsed.credential);
  if (!when || !scope)
    return reject(flavour, 'missing', `Authorization header has a malformed Credential or X-Amz-Date.`);
  const cred = checkScope(scope, amzDate, creds, opts);
  if ('ok' in cred) return cred;
  const now = opts.now ?? new Date();
  if (Math.abs(now.getTime() - when.getTime()) > MAX_SKEW_MS) {
    return reject(
      flavour,
      'expired',
      `Signature expired: ${amzDate} is now earlier than ${formatAmzDate(new Date(now.getTime() - MAX_SKEW_MS))}`,
    );
  }
  const signed = parsed.signedHeaders.split(';');
  if (!signed.includes('host')) return reject(flavour, 'mismatch');
  const headers = canonicalHeaders(req.headers, signed);
  if (headers === undefined) return reject(flavour, 'mismatch');
  const [path, query] = splitUrl(req.url);
  const payloadHash = sha256Hex(req.body);
  const claimed = headerValue(req.headers, 'x-amz-content-sha256');
  if (claimed !== undefined && claimed !== payloadHash) return reject(flavour, 'mismatch');
  const canonical = [
    req.method.toUpperCase(),
    canonicalUri(path),
    canonicalQuery(parseQuery(query)),
    headers,
    parsed.signedHeaders,
    payloadHash,
  ].join('\n');
  if (!sameHex(computeSignature(canonical, amzDate, scope, cred.secretAccessKey), parsed.signature))
    return reject(flavour, 'mismatch');
  if (
    cred.sessionToken !== undefined &&
    headerValue(req.headers, 'x-amz-security-token') !== cred.sessionToken
  ) {
    return reject(flavour, 'token');
  }
  return accepted(scope, signed, when);
}

/** A presigned URL that verified, with its (decoded) query parameters. */
export interface PresignAccepted extends SigV4Accepted {
  /** The `host[:port]` the URL was signed for. */
  host: string;
  /** Every query parameter, decoded (including the `X-Amz-*` ones). */
  params: Map<string, string>;
  /** When the URL stops being valid. */
  expires: Date;
}

export type PresignVerdict = PresignAccepted | SigV4Rejected;

function queryParam(pairs: Array<[string, string]>, name: string): string | undefined {
  return pairs.find(([k]) => k === name)?.[1];
}

/**
 * Verifies a presigned URL: `https://host:port/path?…` or, as an RDS IAM token is written,
 * without the scheme (`host:port/?Action=connect&DBUser=…&X-Amz-…`). The only signed header
 * allowed is `host`; the payload is the empty body.
 */
export function verifyPresignedUrl(
  url: string,
  credentials: TestCredentials | TestCredentials[],
  opts: VerifyOptions & { method?: string } = {},
): PresignVerdict {
  const flavour = opts.flavour ?? 'query';
  const creds = Array.isArray(credentials) ? credentials : [credentials];
  const rest = url.replace(/^[a-z]+:\/\//i, '');
  const slash = rest.search(/[/?]/);
  const host = slash < 0 ? rest : rest.slice(0, slash);
  const [rawPath, rawQuery] = splitUrl(slash < 0 ? '/' : rest.slice(slash));
  const pairs = parseQuery(rawQuery);
  const get = (n: string): string | undefined => queryParam(pairs, n);
  if (get('X-Amz-Algorithm') !== ALGORITHM)
    return reject(flavour, 'missing', `X-Amz-Algorithm must be ${ALGORITHM}`);
  const amzDate = get('X-Amz-Date') ?? '';
  const when = parseAmzDate(amzDate);
  const scope = parseCredential(get('X-Amz-Credential') ?? '');
  const expiresS = Number(get('X-Amz-Expires'));
  const signature = get('X-Amz-Signature');
  const signedHeaders = get('X-Amz-SignedHeaders');
  if (!when || !scope || signature === undefined || signedHeaders === undefined) {
    return reject(
      flavour,
      'missing',
      'presigned URL lacks X-Amz-Date, X-Amz-Credential, X-Amz-SignedHeaders or X-Amz-Signature',
    );
  }
  if (!Number.isInteger(expiresS) || expiresS < 1 || expiresS > MAX_EXPIRES_S) {
    return reject(flavour, 'missing', 'X-Amz-Expires must be an integer between 1 and 604800');
  }
  const cred = checkScope(scope, amzDate, creds, opts);
  if ('ok' in cred) return cred;
  const now = opts.now ?? new Date();
  const expires = new Date(when.getTime() + expiresS * 1000);
  if (now.getTime() > expires.getTime()) return reject(flavour, 'expired', 'Request has expired');
  if (signedHeaders !== 'host') return reject(flavour, 'mismatch');
  const canonical = [
    (opts.method ?? 'GET').toUpperCase(),
    canonicalUri(rawPath),
    canonicalQuery(pairs),
    `host:${host}\n`,
    signedHeaders,
    sha256Hex(''),
  ].join('\n');
  if (!sameHex(computeSignature(canonical, amzDate, scope, cred.secretAccessKey), signature))
    return reject(flavour, 'mismatch');
  if (cred.sessionToken !== undefined && get('X-Amz-Security-Token') !== cred.sessionToken)
    return reject(flavour, 'token');
  return {
    ...accepted(scope, ['host'], when),
    host,
    params: new Map(pairs),
    expires,
  };
}
