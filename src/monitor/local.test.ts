import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import type { ConnectionSpec, Db } from '../core/db.js';
import { autoDetectLocal, candidateOf, candidates, detectionOf, socketsFromProcNetUnix } from './local.js';

describe('socketsFromProcNetUnix', () => {
  it('keeps mysql socket paths and skips mysqlx and abstract sockets', () => {
    const text = [
      'Num       RefCount Protocol Flags    Type St Inode Path',
      '0000000000000000: 00000002 00000000 00010000 0001 01 23456 /run/mysqld/mysqld.sock',
      '0000000000000000: 00000002 00000000 00010000 0001 01 23457 /var/run/mysqld/mysqlx.sock',
      '0000000000000000: 00000002 00000000 00010000 0001 01 23458 @/tmp/.X11-unix/X0',
      '0000000000000000: 00000002 00000000 00010000 0001 01 23459 /run/systemd/notify',
      '0000000000000000: 00000003 00000000 00000000 0001 03 23460 /run/mysqld/mysqld.sock',
    ].join('\n');
    assert.deepEqual(socketsFromProcNetUnix(text), ['/run/mysqld/mysqld.sock']);
  });
});

describe('auto-detect candidates', () => {
  it('an absolute path is a socket, anything else host:port', () => {
    assert.deepEqual(candidateOf('/tmp/x.sock'), {
      name: 'socket /tmp/x.sock',
      where: { socket: '/tmp/x.sock' },
    });
    assert.deepEqual(candidateOf(' 10.0.0.1:3307 '), {
      name: 'tcp 10.0.0.1:3307',
      where: { hostname: '10.0.0.1:3307' },
    });
  });

  it('monitor-loader.local.candidates replaces the discovered list', async () => {
    const config = { 'monitor-loader': { local: { candidates: ['/a.sock', '127.0.0.1:3307'] } } } as Config;
    const { list, from } = await candidates(config);
    assert.deepEqual(
      list.map((c) => c.name),
      ['socket /a.sock', 'tcp 127.0.0.1:3307'],
    );
    assert.equal(from, 'monitor-loader.local.candidates');
  });

  it('without it, ends with 127.0.0.1:3306', async () => {
    const { list } = await candidates({});
    assert.equal(list.at(-1)?.name, 'tcp 127.0.0.1:3306');
  });
});

/**
 * Deps whose "server" accepts `ok` (user@socket or user@hostname): the ping of any other
 * pair fails, as a refused login or an absent server does.
 */
function deps(ok: string[]) {
  return {
    finalize: (m: MonitorConfig) => m as FinalMonitorConfig,
    buildConnection: async (m: FinalMonitorConfig) => ({ m }) as unknown as ConnectionSpec,
    createDb: (spec: ConnectionSpec) => {
      const m = (spec as unknown as { m: MonitorConfig }).m;
      const key = `${m.username ?? ''}@${m.socket ?? m.hostname ?? ''}`;
      return {
        ping: async () => {
          if (!ok.includes(key)) throw new Error(`refused ${key}`);
        },
        close: async () => undefined,
      } as unknown as Db & { close(): Promise<void> };
    },
  };
}

describe('autoDetectLocal', () => {
  const config = (c: string[]): Config => ({
    mysql: { username: 'mon' },
    'monitor-loader': { local: { candidates: c } },
  });

  it('the only server that answers: chosen, and the reason says so', async () => {
    const m = await autoDetectLocal(config(['/a.sock', '/b.sock']), deps(['mon@/b.sock']));
    assert.deepEqual(m, { id: 'localhost', username: 'mon', socket: '/b.sock' });
    assert.equal(
      detectionOf(m),
      'socket /b.sock as mon: the only candidate that answered (candidates from monitor-loader.local.candidates)',
    );
  });

  it('several answer: the first in order, the others named', async () => {
    const m = await autoDetectLocal(
      config(['/a.sock', '/b.sock', '127.0.0.1:3306']),
      deps(['root@/b.sock', 'root@127.0.0.1:3306']),
    );
    assert.deepEqual(m, { id: 'localhost', username: 'root', socket: '/b.sock' });
    assert.equal(
      detectionOf(m),
      'socket /b.sock as root (mon: no candidate accepted it): the first of 2 candidates that answered, in the order of monitor-loader.local.candidates; not chosen: tcp 127.0.0.1:3306',
    );
  });

  it('root is not tried with disable-auto-root; nothing answers: undefined', async () => {
    const c = config(['/a.sock']);
    c['monitor-loader']!.local!['disable-auto-root'] = true;
    assert.equal(await autoDetectLocal(c, deps(['root@/a.sock'])), undefined);
  });
});
