import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGoDsn } from './go-dsn.js';

describe('parseGoDsn (DATA_SOURCE_NAME)', () => {
  it('reads the forms Debian documents for mysqld_exporter', () => {
    assert.deepEqual(parseGoDsn('prometheus:nopassword@unix(/run/mysqld/mysqld.sock)/'), {
      user: 'prometheus',
      password: 'nopassword',
      socket: '/run/mysqld/mysqld.sock',
      insecureTls: false,
    });
    assert.deepEqual(parseGoDsn('prometheus@unix(/run/mysqld/mysqld.sock)/'), {
      user: 'prometheus',
      password: '',
      socket: '/run/mysqld/mysqld.sock',
      insecureTls: false,
    });
    assert.deepEqual(parseGoDsn('prometheus:password@(db1:3307)/dbname'), {
      user: 'prometheus',
      password: 'password',
      address: 'db1:3307',
      insecureTls: false,
    });
  });

  it('splits at the last @ before the last /, so the password may hold @ : and /', () => {
    const d = parseGoDsn('exp:p@ss:w/rd@tcp(127.0.0.1:3306)/?tls=skip-verify');
    assert.deepEqual(d, { user: 'exp', password: 'p@ss:w/rd', address: '127.0.0.1:3306', insecureTls: true });
    assert.deepEqual(parseGoDsn('u@/'), {
      user: 'u',
      password: '',
      address: '127.0.0.1:3306',
      insecureTls: false,
    });
  });

  it('refuses what it cannot honour, naming it and never the password', () => {
    assert.throws(
      () => parseGoDsn('u:secret@tcp(h:1)'),
      /^Error: missing the "\/" before the database name$/,
    );
    assert.throws(() => parseGoDsn('u:secret@udp(h:1)/'), /^Error: network "udp\(h:1\)": want tcp/);
    assert.throws(
      () => parseGoDsn('u:secret@tcp(h:1)/?parseTime=true'),
      /^Error: parameter parseTime: not supported/,
    );
    assert.throws(() => parseGoDsn('u:secret@tcp(h:1)/?tls=true'), /^Error: tls=true: not supported/);
    assert.throws(() => parseGoDsn('u:secret@unix()/'), /no socket path/);
    for (const bad of ['u:secret@udp(h:1)/', 'u:secret@tcp(h:1)/?x=1']) {
      try {
        parseGoDsn(bad);
      } catch (err) {
        assert.ok(!String(err).includes('secret'), String(err));
      }
    }
  });
});
