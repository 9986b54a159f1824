/**
 * A MySQL front door that authenticates like an RDS instance with IAM database
 * authentication, in front of a real local MariaDB (which cannot check IAM tokens itself).
 *
 * For each client connection it:
 * 1. passes on the MariaDB greeting, offering TLS (or not, in `plain` mode);
 * 2. upgrades to TLS when the client asks (SSLRequest), with the test certificate;
 * 3. reads the login packet and asks for the password in clear text, as RDS does
 *    (AuthSwitchRequest to `mysql_clear_password`);
 * 4. checks that password as an IAM token: a presigned `connect` URL whose SigV4 signature
 *    verifies for the test credentials, service `rds-db`, the region, this `host:port` and
 *    the login user (sigv4.ts). A bad token gets error 1045, as RDS answers;
 * 5. logs in to MariaDB as the mapped real user (mysql_native_password), hands the
 *    client MariaDB's OK packet, and from then on relays bytes both ways.
 *
 * Every attempt is recorded: user, whether TLS was on, the password received (if any) and
 * the verdict.
 */
import { createHash } from 'node:crypto';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { verifyPresignedUrl, type PresignVerdict, type TestCredentials } from './sigv4.js';

const CLIENT_CONNECT_WITH_DB = 0x8;
const CLIENT_COMPRESS = 0x20;
const CLIENT_SSL = 0x800;
const CLIENT_SECURE_CONNECTION = 0x8000;
const CLIENT_PLUGIN_AUTH = 0x80000;
const CLIENT_CONNECT_ATTRS = 0x100000;
const CLIENT_PLUGIN_AUTH_LENENC = 0x200000;

export interface FrontAttempt {
  user: string;
  tls: boolean;
  /** The cleartext password the client sent; undefined when it sent none. */
  password?: string;
  verdict?: PresignVerdict;
  /** True once the client was logged in to MariaDB. */
  admitted: boolean;
}

export interface FrontOptions {
  backendPort: number;
  /** Login user → the MariaDB account it is mapped to. */
  accounts: Record<string, { user: string; password: string }>;
  credentials: TestCredentials;
  region: string;
  /** Offer TLS with this key and certificate (PEM); omit for a front without TLS. */
  tls?: { key: string; cert: string };
}

export interface IamFront {
  readonly port: number;
  readonly attempts: FrontAttempt[];
  close(): Promise<void>;
}

interface Packet {
  seq: number;
  payload: Buffer;
}

/** Reads MySQL packets from a socket until released. */
class PacketReader {
  #buf = Buffer.alloc(0);
  #waiters: Array<(p: Packet | undefined) => void> = [];
  #ended = false;
  readonly #onData = (d: Buffer): void => {
    this.#buf = Buffer.concat([this.#buf, d]);
    this.#drain();
  };
  readonly #onEnd = (): void => {
    this.#ended = true;
    this.#drain();
  };
  constructor(readonly sock: Socket) {
    sock.on('data', this.#onData);
    sock.on('close', this.#onEnd);
    sock.on('error', this.#onEnd);
  }
  #drain(): void {
    while (this.#waiters.length > 0) {
      if (this.#buf.length >= 4) {
        const len = this.#buf.readUIntLE(0, 3);
        if (this.#buf.length >= 4 + len) {
          const p = { seq: this.#buf[3] ?? 0, payload: this.#buf.subarray(4, 4 + len) };
          this.#buf = this.#buf.subarray(4 + len);
          this.#waiters.shift()?.(p);
          continue;
        }
      }
      if (this.#ended) this.#waiters.shift()?.(undefined);
      else return;
    }
  }
  next(): Promise<Packet | undefined> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#drain();
    });
  }
  /** Stop reading; returns bytes already received and not consumed. */
  release(): Buffer {
    this.sock.pause();
    this.sock.off('data', this.#onData);
    this.sock.off('close', this.#onEnd);
    this.sock.off('error', this.#onEnd);
    return this.#buf;
  }
}

/** A stream that yields `prefix`, then what `sock` receives; writes go to `sock`. */
function withPrefix(sock: Socket, prefix: Buffer): Duplex {
  const d = new Duplex({
    read: () => void sock.resume(),
    write: (chunk: Buffer, _enc, cb) => void sock.write(chunk, cb),
    final: (cb) => {
      sock.end();
      cb();
    },
  });
  if (prefix.length > 0) d.push(prefix);
  sock.on('data', (c: Buffer) => {
    if (!d.push(c)) sock.pause();
  });
  sock.on('end', () => d.push(null));
  sock.on('close', () => d.destroy());
  return d;
}

function packet(seq: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUIntLE(payload.length, 0, 3);
  head[3] = seq & 0xff;
  return Buffer.concat([head, payload]);
}

function cstr(buf: Buffer, at: number): [string, number] {
  const end = buf.indexOf(0, at);
  const stop = end < 0 ? buf.length : end;
  return [buf.subarray(at, stop).toString('utf8'), stop + 1];
}

interface Greeting {
  payload: Buffer;
  scramble: Buffer;
  /** Offset of the lower 2 capability bytes. */
  capsAt: number;
}

function parseGreeting(p: Buffer): Greeting {
  const [, afterVersion] = cstr(p, 1);
  const part1 = p.subarray(afterVersion + 4, afterVersion + 12);
  const capsAt = afterVersion + 13;
  const authLen = p[capsAt + 7] ?? 0; // after caps(2), charset(1), status(2), upper caps(2)
  const part2At = capsAt + 8 + 10; // then 10 reserved bytes
  const part2 = p.subarray(part2At, part2At + Math.max(13, authLen - 8) - 1);
  return { payload: p, scramble: Buffer.concat([part1, part2]).subarray(0, 20), capsAt };
}

interface Login {
  caps: number;
  head: Buffer; // max packet, charset, filler (28 bytes after caps)
  user: string;
}

function parseLogin(p: Buffer): Login {
  const caps = p.readUInt32LE(0);
  const [user] = cstr(p, 32);
  return { caps, head: p.subarray(4, 32), user };
}

/** mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))). */
function nativeScramble(password: string, scramble: Buffer): Buffer {
  const sha1 = (b: Buffer | string): Buffer => createHash('sha1').update(b).digest();
  const h1 = sha1(password);
  const h3 = sha1(Buffer.concat([scramble, sha1(h1)]));
  return Buffer.from(h1.map((b, i) => b ^ (h3[i] ?? 0)));
}

function errPacket(seq: number, errno: number, state: string, msg: string): Buffer {
  const head = Buffer.alloc(3);
  head[0] = 0xff;
  head.writeUInt16LE(errno, 1);
  return packet(seq, Buffer.concat([head, Buffer.from(`#${state}${msg}`)]));
}

/** Logs in to MariaDB as `account`, the client's capabilities kept where they matter. */
async function backendLogin(
  backend: PacketReader,
  greeting: Greeting,
  login: Login,
  account: { user: string; password: string },
): Promise<Packet | undefined> {
  const caps =
    (login.caps &
      ~(
        CLIENT_SSL |
        CLIENT_CONNECT_ATTRS |
        CLIENT_CONNECT_WITH_DB |
        CLIENT_COMPRESS |
        CLIENT_PLUGIN_AUTH_LENENC
      )) |
    CLIENT_SECURE_CONNECTION |
    CLIENT_PLUGIN_AUTH;
  const capsBuf = Buffer.alloc(4);
  capsBuf.writeUInt32LE(caps >>> 0);
  const auth = nativeScramble(account.password, greeting.scramble);
  const body = Buffer.concat([
    capsBuf,
    login.head,
    Buffer.from(`${account.user}\0`),
    Buffer.from([auth.length]),
    auth,
    Buffer.from('mysql_native_password\0'),
  ]);
  backend.sock.write(packet(1, body));
  let reply = await backend.next();
  if (reply?.payload[0] === 0xfe) {
    // Auth switch to mysql_native_password with a new scramble.
    const [, at] = cstr(reply.payload, 1);
    const fresh = reply.payload.subarray(at, at + 20);
    backend.sock.write(packet(reply.seq + 1, nativeScramble(account.password, fresh)));
    reply = await backend.next();
  }
  return reply;
}

async function serve(client: Socket, opts: FrontOptions, attempts: FrontAttempt[]): Promise<void> {
  const backendSock = netConnect(opts.backendPort, '127.0.0.1');
  const backend = new PacketReader(backendSock);
  const close = (): void => {
    client.destroy();
    backendSock.destroy();
  };
  try {
    const hello = await backend.next();
    if (!hello) return close();
    const greeting = parseGreeting(Buffer.from(hello.payload));
    const offered = Buffer.from(greeting.payload);
    const lower = offered.readUInt16LE(greeting.capsAt);
    offered.writeUInt16LE(opts.tls ? lower | CLIENT_SSL : lower & ~CLIENT_SSL, greeting.capsAt);
    client.write(packet(0, offered));
    let reader = new PacketReader(client);
    let sock: Socket = client;
    let p = await reader.next();
    if (!p) return close();
    let tls = false;
    if (p.payload.length === 32 && (p.payload.readUInt32LE(0) & CLIENT_SSL) !== 0 && opts.tls) {
      // The TLS ClientHello may already be read: hand it to TLS ahead of the rest.
      const raw = withPrefix(client, reader.release());
      const secure = new TLSSocket(raw, { isServer: true, key: opts.tls.key, cert: opts.tls.cert });
      await new Promise<void>((resolve, reject) => {
        secure.once('secure', resolve);
        secure.once('error', reject);
      });
      sock = secure;
      tls = true;
      reader = new PacketReader(secure);
      p = await reader.next();
      if (!p) return close();
    }
    const login = parseLogin(p.payload);
    const attempt: FrontAttempt = { user: login.user, tls, admitted: false };
    attempts.push(attempt);
    let seq = p.seq + 1;
    sock.write(packet(seq, Buffer.from('\xfemysql_clear_password\0', 'latin1')));
    const answer = await reader.next();
    if (!answer) return close();
    const pw = answer.payload.toString('utf8');
    attempt.password = pw.endsWith('\0') ? pw.slice(0, -1) : pw;
    seq = answer.seq + 1;
    const v = verifyPresignedUrl(attempt.password, opts.credentials, {
      service: 'rds-db',
      region: opts.region,
    });
    attempt.verdict = v;
    const account = opts.accounts[login.user];
    const good =
      v.ok &&
      v.host === `127.0.0.1:${(client.localPort ?? 0).toString()}` &&
      v.params.get('Action') === 'connect' &&
      v.params.get('DBUser') === login.user &&
      account !== undefined;
    if (!good || account === undefined) {
      sock.end(
        errPacket(
          seq,
          1045,
          '28000',
          `Access denied for user '${login.user}'@'127.0.0.1' (using password: YES)`,
        ),
      );
      backendSock.destroy();
      return;
    }
    const ok = await backendLogin(backend, greeting, login, account);
    if (!ok) return close();
    sock.write(packet(seq, ok.payload));
    if (ok.payload[0] !== 0x00) return close();
    attempt.admitted = true;
    // Relay: leftovers first, then both directions as raw bytes.
    const fromClient = reader.release();
    const fromBackend = backend.release();
    if (fromClient.length > 0) backendSock.write(fromClient);
    if (fromBackend.length > 0) sock.write(fromBackend);
    sock.pipe(backendSock);
    backendSock.pipe(sock);
    sock.on('error', close);
    backendSock.on('error', close);
    sock.on('close', close);
    backendSock.on('close', close);
  } catch {
    close();
  }
}

export async function startIamFront(opts: FrontOptions): Promise<IamFront> {
  const attempts: FrontAttempt[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    void serve(client, opts, attempts);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
