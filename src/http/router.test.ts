import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { httpCall } from '../../test/helpers/http-call.js';
import { send, sendText } from './answer.js';
import { Query, Router, splitTarget, type Route } from './router.js';
import { createListener, type Listener } from './server.js';

const listeners: Listener[] = [];
after(async () => {
  await Promise.all(listeners.map((l) => l.close('drop')));
});

/** A router on 127.0.0.1:0; failures are answered 500 with their message. */
async function serve(routes: Route[]): Promise<{ port: number; router: Router; listener: Listener }> {
  const router = new Router(routes, {
    bodyLimit: 1024,
    onError: (err, req, res) => sendText(res, req, 500, String(err)),
  });
  const listener = createListener(router.handle, { keepAliveMs: 5_000 });
  listeners.push(listener);
  const addr = await listener.listen('127.0.0.1', 0);
  return { port: Number(addr.slice(addr.lastIndexOf(':') + 1)), router, listener };
}

describe('router', () => {
  it('serves every path under a prefix route, GET and HEAD, the longest prefix first', async () => {
    const { port } = await serve([
      {
        method: 'GET',
        path: '/ui/',
        prefix: true,
        handler: (c) => send(c.res, c.req, 200, 'text/html', `ui ${c.path}`),
      },
      {
        method: 'GET',
        path: '/ui/api/',
        prefix: true,
        handler: (c) => sendText(c.res, c.req, 200, `api ${c.path}`),
      },
      { method: 'GET', path: '/ui', handler: (c) => sendText(c.res, c.req, 200, 'exact') },
    ]);
    assert.equal((await httpCall(port, '/ui/app.js')).body, 'ui /ui/app.js');
    assert.equal((await httpCall(port, '/ui/a%20b.css')).body, 'ui /ui/a b.css');
    assert.equal((await httpCall(port, '/ui/api/x')).body, 'api /ui/api/x\n');
    assert.equal((await httpCall(port, '/ui')).body, 'exact\n');
    const head = await httpCall(port, '/ui/index.html', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], String('ui /ui/index.html'.length));
    assert.equal(head.body, '');
    const post = await httpCall(port, '/ui/x', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await httpCall(port, '/uix')).status, 404);
  });

  it('lists every method of a path in Allow, HEAD after GET', async () => {
    const ok = (c: Parameters<Route['handler']>[0]): void => sendText(c.res, c.req, 200, 'ok');
    const { port } = await serve([
      { method: 'GET', path: '/x', handler: ok },
      { method: 'POST', path: '/x', handler: ok },
    ]);
    const res = await httpCall(port, '/x', { method: 'DELETE' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, POST');
    assert.equal((await httpCall(port, '/x', { method: 'POST' })).status, 200);
  });

  it('refuses a route defined twice', () => {
    const ok = (): void => undefined;
    const routes: Route[] = [
      { method: 'GET', path: '/x', handler: ok },
      { method: 'GET', path: '/x', handler: ok },
    ];
    assert.throws(() => new Router(routes, { bodyLimit: 1, onError: () => undefined }), {
      message: 'route GET /x is defined twice',
    });
  });

  it('ends a streaming answer when the router shuts down, so that the listener can close', async () => {
    const { port, router, listener } = await serve([
      {
        method: 'GET',
        path: '/events',
        handler: (c) => {
          c.res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          c.res.write('data: hello\n\n');
          c.signal.addEventListener('abort', () => c.res.end('data: bye\n\n'), { once: true });
        },
      },
    ]);
    const received = new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/events', agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
          // The first event is out: shut down while the answer is open.
          if (body === 'data: hello\n\n') {
            router.shutdown();
            void listener.close();
          }
        });
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(await received, 'data: hello\n\ndata: bye\n\n');
    await listener.close();
  });

  it('answers 503 and closes the connection after shutdown', async () => {
    const { port, router } = await serve([
      { method: 'GET', path: '/x', handler: (c) => sendText(c.res, c.req, 200, 'ok') },
    ]);
    router.shutdown();
    const res = await httpCall(port, '/x');
    assert.equal(res.status, 503);
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.body, 'server is shutting down\n');
  });
});

describe('request targets and queries', () => {
  it('decodes the path but keeps %25 and the escapes of reserved characters', () => {
    assert.deepEqual(splitTarget('/monitor%73?id=a'), { path: '/monitors', query: 'id=a' });
    assert.deepEqual(splitTarget('/status%2Fmonitors'), { path: '/status%2Fmonitors', query: '' });
    assert.deepEqual(splitTarget('/a%25zz'), { path: '/a%25zz', query: '' });
    assert.deepEqual(splitTarget('/monitors#x'), { path: '/monitors', query: 'x' });
    for (const bad of ['/%zz', '/%', '/%ff', 'http:///x', 'http://h/x#y'])
      assert.equal(splitTarget(bad), undefined, bad);
  });

  it('takes the path of an absolute-form target and keeps other targets as they are', () => {
    assert.deepEqual(splitTarget('http://127.0.0.1:7522/status?x=1'), { path: '/status', query: 'x=1' });
    assert.deepEqual(splitTarget('HTTPS://h'), { path: '/', query: '' });
    assert.deepEqual(splitTarget('http://h?id=1'), { path: '/', query: 'id=1' });
    assert.deepEqual(splitTarget('*'), { path: '*', query: '' });
  });

  it('keeps the first of repeated keys, decodes + and escapes, and keeps what does not decode', () => {
    const q = new Query('id=db1&id=db2&a+b=c%20d&json&e=&bad=%zz&utf=%ff%fe&&=v&%6Aey=1');
    assert.equal(q.get('id'), 'db1');
    assert.equal(q.get('a b'), 'c d');
    assert.equal(q.get('json'), '');
    assert.equal(q.has('json'), true);
    assert.equal(q.get('e'), '');
    assert.equal(q.get('bad'), '%zz');
    assert.equal(q.get('utf'), '%ff%fe');
    assert.equal(q.get(''), 'v');
    assert.equal(q.get('jey'), '1');
    assert.equal(q.has('JSON'), false);
    assert.equal(new Query('a=1;id=2').get('id'), undefined);
  });
});
