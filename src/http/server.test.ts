import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { createListener } from './server.js';

/** Whether Node's timeout check (its interval timer, under a private symbol) is running. */
function checking(server: Server): boolean {
  const key = Object.getOwnPropertySymbols(server).find(
    (s) => s.description === 'http.server.connectionsCheckingInterval',
  );
  assert.ok(key !== undefined, "Node's timer is where this Node keeps it");
  const timer = (server as unknown as Record<symbol, { _destroyed?: boolean } | undefined>)[key];
  return timer !== undefined && timer._destroyed !== true;
}

const opened = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });

const until = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
};

void describe('createListener', () => {
  for (const tls of [false, true]) {
    void it(`checks the header and request timeouts only while a connection is open (${tls ? 'HTTPS' : 'HTTP'})`, async () => {
      const listener = createListener(
        (_req, res) => res.end('ok'),
        tls ? { tls: { key: undefined, cert: undefined } } : {},
      );
      try {
        const address = await listener.listen('127.0.0.1', 0);
        const port = Number(address.slice(address.lastIndexOf(':') + 1));
        assert.equal(checking(listener.server), false, 'no check while nothing is connected');
        const first = await opened(port);
        await until(() => checking(listener.server));
        assert.equal(checking(listener.server), true, 'checked while a connection is open');
        const second = await opened(port);
        first.destroy();
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(checking(listener.server), true, 'still checked: one connection is left');
        second.destroy();
        await until(() => !checking(listener.server));
        assert.equal(checking(listener.server), false, 'stopped with the last connection');
      } finally {
        await listener.close('drop');
      }
    });
  }
});
