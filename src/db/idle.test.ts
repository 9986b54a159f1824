import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { IdleConnections } from './idle.js';

/** A pool connection that records its end(). */
class FakeConnection extends EventEmitter {
  ended = 0;
  constructor(readonly name: string) {
    super();
  }
  end(): void {
    this.ended++;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

void describe('IdleConnections', () => {
  void it('closes all but the most recently released one, once two or more are idle', async () => {
    const idle = new IdleConnections(20);
    const [a, b, c] = [new FakeConnection('a'), new FakeConnection('b'), new FakeConnection('c')];
    for (const conn of [a, b, c]) idle.taken(conn);
    idle.released(b);
    idle.released(a);
    idle.released(c);
    assert.equal(idle.size, 3);
    await sleep(60);
    assert.deepEqual(
      [a, b, c].map((conn) => conn.ended),
      [1, 1, 0],
      'c went back last and stays',
    );
    assert.equal(idle.size, 1);
    // Taken again and given back alone: nothing more to close.
    idle.taken(c);
    idle.released(c);
    await sleep(60);
    assert.equal(c.ended, 0);
  });

  void it('closes nothing while one connection is idle and the others are in use', async () => {
    const idle = new IdleConnections(20);
    const [a, b] = [new FakeConnection('a'), new FakeConnection('b')];
    idle.taken(a);
    idle.taken(b);
    idle.released(a);
    await sleep(60);
    assert.equal(a.ended, 0);
    // b comes back, then a is taken before the timer fires: one idle again, nothing closed.
    idle.released(b);
    idle.taken(a);
    await sleep(60);
    assert.deepEqual([a.ended, b.ended], [0, 0]);
  });

  void it('forgets a connection that ended or failed while idle, and ignores ones it never lent', async () => {
    const idle = new IdleConnections(20);
    const [a, b, other] = [new FakeConnection('a'), new FakeConnection('b'), new FakeConnection('batch')];
    idle.taken(a);
    idle.taken(b);
    idle.released(a);
    idle.released(b);
    a.emit('end');
    b.emit('error', new Error('read ECONNRESET'));
    assert.equal(idle.size, 0);
    idle.released(other);
    assert.equal(idle.size, 0, 'a connection never taken (the batch pool) is not counted');
    await sleep(60);
    assert.deepEqual([a.ended, b.ended, other.ended], [0, 0, 0]);
  });

  void it('stops closing once the pool ends', async () => {
    const idle = new IdleConnections(20);
    const [a, b] = [new FakeConnection('a'), new FakeConnection('b')];
    idle.taken(a);
    idle.taken(b);
    idle.released(a);
    idle.released(b);
    idle.close();
    await sleep(60);
    assert.deepEqual([a.ended, b.ended], [0, 0]);
    idle.released(a);
    assert.equal(idle.size, 0);
  });
});
