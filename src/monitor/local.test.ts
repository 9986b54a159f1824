import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { socketsFromProcNetUnix } from './local.js';

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
