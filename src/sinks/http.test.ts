import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { makeTlsFiles } from '../../test/helpers/tls.js';
import { bodyText, httpPost, parseTarget } from './http.js';
import { startHttpReceiver } from './receivers.fixture.js';
import type { HttpReceiver } from './receivers.fixture.js';

/** A forward proxy recording what it saw: absolute-URI requests and CONNECT tunnels. */
async function startProxy(): Promise<{
  url: string;
  seen: Array<{ method: string; url: string; auth: string | undefined }>;
  close(): Promise<void>;
}> {
  const seen: Array<{ method: string; url: string; auth: string | undefined }> = [];
  const tunnels = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const up = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
    seen.push({ method: 'CONNECT', url: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      tunnels.add(client).add(upstream);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://user:s%40cret@127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of tunnels) t.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('httpPost', () => {
  let rx: HttpReceiver;
  before(async () => {
    rx = await startHttpReceiver();
  });
  after(async () => {
    await rx.close();
  });

  it('posts the body with the headers and a Content-Length, and returns status and body', async () => {
    rx.reply = () => ({ status: 418, body: '"no"' });
    const res = await httpPost({
      url: `${rx.url}/v2/x?a=1`,
      headers: { 'Content-Type': 'text/plain', 'X-Token': 't' },
      body: 'hello',
    });
    assert.equal(res.status, 418);
    assert.equal(res.body.toString(), '"no"');
    const got = rx.requests.at(-1);
    assert.equal(got?.method, 'POST');
    assert.equal(got?.url, '/v2/x?a=1');
    assert.equal(got?.headers['content-type'], 'text/plain');
    assert.equal(got?.headers['x-token'], 't');
    assert.equal(got?.headers['content-length'], '5');
    assert.equal(got?.body.toString(), 'hello');
  });

  it('fails with the URL and the abort reason when the signal fires, and with a timeout text', async () => {
    rx.reply = () => new Promise((resolve) => setTimeout(() => resolve({ status: 200 }), 3000));
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('send-timeout 50ms exceeded')), 50);
    await assert.rejects(httpPost({ url: rx.url, body: 'x', signal: ac.signal }), {
      message: `POST ${rx.url}: request aborted: send-timeout 50ms exceeded`,
    });
    await assert.rejects(httpPost({ url: rx.url, body: 'x', timeoutMs: 50 }), {
      message: `POST ${rx.url}: request timeout after 50 ms`,
    });
    rx.reply = () => ({ status: 202, body: '{}' });
  });

  it('fails with the transport error when nothing listens', async () => {
    const dead = await startHttpReceiver();
    const url = dead.url;
    await dead.close();
    await assert.rejects(httpPost({ url, body: 'x' }), /ECONNREFUSED/);
  });

  it('forwards plain-http requests through http.proxy with Proxy-Authorization, never echoing it', async () => {
    const proxy = await startProxy();
    try {
      rx.reply = () => ({ status: 200, body: 'ok' });
      const res = await httpPost({ url: `${rx.url}/p`, body: 'via', proxy: proxy.url });
      assert.equal(res.status, 200);
      assert.deepEqual(proxy.seen, [
        {
          method: 'POST',
          url: `${rx.url}/p`,
          auth: `Basic ${Buffer.from('user:s@cret').toString('base64')}`,
        },
      ]);
      assert.equal(rx.requests.at(-1)?.body.toString(), 'via');
      assert.equal(rx.requests.at(-1)?.headers['proxy-authorization'], undefined);
    } finally {
      await proxy.close();
    }
  });

  it('tunnels https requests through http.proxy with CONNECT', async () => {
    const files = makeTlsFiles();
    const ca = readFileSync(files.ca);
    const bodies: string[] = [];
    const server = https.createServer(
      { cert: readFileSync(files.cert), key: readFileSync(files.key) },
      (req, res) => {
        let b = '';
        req.on('data', (c: Buffer) => (b += c.toString()));
        req.on('end', () => {
          bodies.push(`${req.url ?? ''} ${b}`);
          res.writeHead(200);
          res.end('"OK"');
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const proxy = await startProxy();
    try {
      const res = await httpPost({
        url: `https://localhost:${port}/v2/datapoint`,
        body: 'tls',
        proxy: proxy.url,
        ca,
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), '"OK"');
      assert.deepEqual(bodies, ['/v2/datapoint tls']);
      assert.equal(proxy.seen[0]?.method, 'CONNECT');
      assert.equal(proxy.seen[0]?.url, `localhost:${port}`);
      // Direct https with the same CA works too.
      const direct = await httpPost({ url: `https://127.0.0.1:${port}/d`, body: 'x', ca });
      assert.equal(direct.status, 200);
    } finally {
      await proxy.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('does not put the proxy credentials in its errors', async () => {
    const dead = await startHttpReceiver();
    const port = dead.port;
    await dead.close();
    const err = await httpPost({
      url: 'https://example.invalid/x',
      body: 'x',
      proxy: `http://user:topsecret@127.0.0.1:${port}`,
    }).catch((e: unknown) => e as Error);
    assert.ok(err instanceof Error);
    assert.match(err.message, /^POST https:\/\/example\.invalid\/x: proxy connect: .*ECONNREFUSED/);
    assert.doesNotMatch(err.message, /topsecret/);
  });
});

describe('parseTarget', () => {
  it('moves user info into a Basic authorization and out of the URL', () => {
    assert.deepEqual(parseTarget('http://al%40ice:pw@gw:9091/x', 'addr'), {
      url: 'http://gw:9091/x',
      authorization: `Basic ${Buffer.from('al@ice:pw').toString('base64')}`,
    });
    assert.deepEqual(parseTarget('https://gw/', 'addr'), { url: 'https://gw/' });
  });

  it('rejects a relative URL or another scheme without echoing the value', () => {
    assert.throws(() => parseTarget('gw:pw@9091', 'prom-pushgateway addr'), {
      message: 'invalid prom-pushgateway addr: scheme must be http or https, not gw',
    });
    assert.throws(() => parseTarget('/secret', 'otlp endpoint'), {
      message: 'invalid otlp endpoint: not an absolute URL',
    });
  });
});

describe('bodyText', () => {
  it('trims the body and cuts it at 512 characters', () => {
    assert.equal(bodyText(Buffer.from('  nope\n')), 'nope');
    assert.equal(bodyText(Buffer.from('x'.repeat(600))), `${'x'.repeat(512)}…`);
  });
});
