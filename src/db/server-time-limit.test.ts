import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerInfo } from '../core/db.js';
import { withServerTimeLimit } from './pool.js';

const info = (flavor: ServerInfo['flavor'], version: [number, number, number]): ServerInfo => ({
  flavor,
  version,
  versionString: version.join('.'),
});

describe('withServerTimeLimit', () => {
  it('wraps a MariaDB statement in SET STATEMENT max_statement_time (seconds)', () => {
    assert.equal(
      withServerTimeLimit('SELECT 1', info('mariadb', [10, 11, 6]), 800),
      'SET STATEMENT max_statement_time=0.800 FOR SELECT 1',
    );
  });

  it('gives a MySQL SELECT the MAX_EXECUTION_TIME hint (ms), and leaves other statements alone', () => {
    assert.equal(
      withServerTimeLimit('  select a FROM t', info('mysql', [8, 0, 36]), 1500),
      '  select /*+ MAX_EXECUTION_TIME(1500) */ a FROM t',
    );
    assert.equal(withServerTimeLimit('SHOW TABLES', info('mysql', [8, 0, 36]), 1500), 'SHOW TABLES');
  });

  it('leaves servers without a statement time limit alone', () => {
    assert.equal(withServerTimeLimit('SELECT 1', info('mariadb', [10, 0, 38]), 800), 'SELECT 1');
    assert.equal(withServerTimeLimit('SELECT 1', info('mysql', [5, 6, 51]), 800), 'SELECT 1');
    assert.equal(withServerTimeLimit('SELECT 1', info('mysql', [5, 7, 7]), 800), 'SELECT 1');
  });
});
