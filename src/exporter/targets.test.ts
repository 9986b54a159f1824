import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allowedTargets } from './targets.js';

describe('allowedTargets (--probe.allowed-targets)', () => {
  it('is undefined without entries: any target', () => {
    assert.equal(allowedTargets([]), undefined);
    assert.equal(allowedTargets([' , ']), undefined);
  });

  it('matches networks, hosts, host:port and sockets', () => {
    const ok = allowedTargets([
      '10.0.0.0/8,fd00::/8',
      'DB1.example',
      'db2.example:3307',
      '192.0.2.7',
      'unix:///run/m.sock',
    ]);
    assert.ok(ok);
    for (const t of [
      '10.1.2.3:3306',
      '[fd00::5]:3306',
      'db1.example:3306',
      'db1.EXAMPLE.:3310',
      'db2.example:3307',
      '192.0.2.7:3306',
      'unix:///run/m.sock',
    ])
      assert.equal(ok(t), true, t);
    for (const t of [
      '11.0.0.1:3306',
      '[fe80::1]:3306',
      'db2.example:3306',
      'db3.example:3306',
      '192.0.2.8:3306',
      'unix:///tmp/x.sock',
      'localhost:3306',
    ])
      assert.equal(ok(t), false, t);
  });

  it('refuses a bad entry naming it', () => {
    assert.throws(() => allowedTargets(['10.0.0.0/33']), {
      message: 'invalid network "10.0.0.0/33": want address/prefix',
    });
    assert.throws(() => allowedTargets(['db:port']), /invalid target "db:port"/);
  });
});
