import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../core/db.js';
import { parseValue, upstreamValues } from './values.js';

void describe('parseValue', () => {
  void it('parses decimal numbers', () => {
    assert.equal(parseValue('123'), 123);
    assert.equal(parseValue('-1.5'), -1.5);
    assert.equal(parseValue('1e+06'), 1e6);
    assert.equal(parseValue('+7'), 7);
    assert.equal(parseValue('0'), 0);
    assert.equal(parseValue('.5'), 0.5);
    assert.equal(parseValue('5.'), 5);
    assert.equal(parseValue('2.5E-3'), 0.0025);
    assert.equal(parseValue('0.000000'), 0);
    // every character a number may start with: sign, point, digit
    assert.equal(parseValue('-.5'), -0.5);
    assert.equal(parseValue('+.5e3'), 500);
    assert.equal(parseValue('-0'), -0);
  });

  void it('reads BIGINT UNSIGNED max as the nearest float', () => {
    assert.equal(parseValue('18446744073709551615'), 1.8446744073709552e19);
  });

  void it('maps the exact keywords ON, YES, Yes to 1', () => {
    assert.equal(parseValue('ON'), 1);
    assert.equal(parseValue('YES'), 1);
    assert.equal(parseValue('Yes'), 1);
  });

  void it('maps the exact keywords OFF, NO, No, DISABLED, Connecting to 0', () => {
    assert.equal(parseValue('OFF'), 0);
    assert.equal(parseValue('NO'), 0);
    assert.equal(parseValue('No'), 0);
    assert.equal(parseValue('DISABLED'), 0);
    assert.equal(parseValue('Connecting'), 0);
  });

  void it('treats keywords case-sensitively', () => {
    for (const s of ['on', 'off', 'yes', 'no', 'Off', 'On', 'disabled', 'connecting', 'Primary', 'TRUE']) {
      assert.equal(parseValue(s), undefined, s);
    }
  });

  void it('parses the OpenSSL date layout as Unix seconds in UTC', () => {
    assert.equal(parseValue('Jan 02 15:04:05 2006 MST'), Date.UTC(2006, 0, 2, 15, 4, 5) / 1000);
    assert.equal(parseValue('Apr 10 12:00:00 2034 GMT'), Date.UTC(2034, 3, 10, 12, 0, 0) / 1000);
    assert.equal(parseValue('Dec 31 23:59:59 2030 UTC'), Date.UTC(2030, 11, 31, 23, 59, 59) / 1000);
    // OpenSSL pads one-digit days with a space
    assert.equal(parseValue('Apr  1 08:00:00 2034 GMT'), Date.UTC(2034, 3, 1, 8, 0, 0) / 1000);
  });

  void it('parses YYYY-MM-DD HH:MM:SS as UTC Unix seconds', () => {
    assert.equal(parseValue('2024-03-05 10:11:12'), 1709633472);
    assert.equal(parseValue('1970-01-01 00:00:00'), 0);
    assert.equal(parseValue('2024-03-05 10:11:12.999'), 1709633472);
  });

  void it('rejects impossible dates', () => {
    assert.equal(parseValue('2023-02-30 00:00:00'), undefined);
    assert.equal(parseValue('2023-13-01 00:00:00'), undefined);
    assert.equal(parseValue('2023-01-01 24:00:00'), undefined);
    assert.equal(parseValue('Foo 10 12:00:00 2034 GMT'), undefined);
  });

  void it('skips everything else, including the Number() traps', () => {
    for (const s of [
      '',
      ' ',
      'NULL',
      'AUTH_MASTER',
      'Disconnected',
      '0x10',
      '1_000',
      'Infinity',
      'NaN',
      '1e400',
      '12abc',
      ' 12',
      '12 ',
      '1.2.3',
      'TLS_AES_256_GCM_SHA384',
      '2024-03-05',
      '.',
      '-',
      '+e1',
      'e1',
      '/var/lib/mysql/',
      'utf8mb4_general_ci',
      'jan 02 15:04:05 2006 MST',
      ' Jan 02 15:04:05 2006 MST',
      '2024-03-05 10:11:1',
    ]) {
      assert.equal(parseValue(s), undefined, JSON.stringify(s));
    }
    assert.equal(parseValue(null), undefined);
  });
});

void describe('upstreamValues (mysqld_exporter reading)', () => {
  void it('rewrites mysqld_exporter keywords (any case) and keeps wanted text values', () => {
    const rows: Row[] = [
      { Variable_name: 'a', Value: 'ON' },
      { Variable_name: 'b', Value: 'Off' },
      { Variable_name: 'c', Value: 'Primary' },
      { Variable_name: 'd', Value: 'non-Primary' },
      { Variable_name: 'e', Value: 'CONNECTING' },
      { Variable_name: 'f', Value: 'yes' },
      { Variable_name: 'g', Value: '12' },
      { Variable_name: 'h', Value: 'AUTH_MASTER' },
      { Variable_name: 'version', Value: '10.11.19-MariaDB' },
      { Variable_name: 'Version_Comment', Value: 'Debian 12' },
      { Variable_name: 'i', Value: null },
    ];
    const text: Record<string, string> = {};
    upstreamValues(rows, new Set(['version', 'version_comment']), text);
    assert.deepEqual(
      rows.map((r) => r.Value),
      ['1', '0', '1', '0', '0', '1', '12', 'AUTH_MASTER', '10.11.19-MariaDB', 'Debian 12', null],
    );
    assert.deepEqual(text, { version: '10.11.19-MariaDB', version_comment: 'Debian 12' });
  });

  void it('reads upper-case columns (VARIABLE_NAME, VALUE) and writes the keyword back to the same column', () => {
    const rows: Row[] = [
      { VARIABLE_NAME: 'WSREP_READY', VALUE: 'off' },
      { VARIABLE_NAME: 'wsrep_cluster_state_uuid', VALUE: 'abc-123' },
    ];
    const text: Record<string, string> = {};
    upstreamValues(rows, new Set(['wsrep_cluster_state_uuid']), text);
    assert.deepEqual(rows, [
      { VARIABLE_NAME: 'WSREP_READY', VALUE: '0' },
      { VARIABLE_NAME: 'wsrep_cluster_state_uuid', VALUE: 'abc-123' },
    ]);
    assert.deepEqual(text, { wsrep_cluster_state_uuid: 'abc-123' });
  });
});
