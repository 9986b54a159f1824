import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerInfo } from '../../../core/db.js';
import type { PooledDb } from '../../../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../../test/helpers/mariadb.js';
import { NO_SIGNAL, planOf } from '../test-helpers.js';
import { QueryTopCollector } from '../../query.top/index.js';
import { canonicalSql, limited } from './shared.js';

const info = (flavor: 'mysql' | 'mariadb'): ServerInfo => ({
  flavor,
  version: [8, 0, 36],
  versionString: '',
});

void describe('query analytics statement limits', () => {
  void it('puts every statement under the server time limit of its flavor', () => {
    assert.equal(
      limited('SELECT 1 FROM t', info('mariadb'), 2000),
      'SET STATEMENT max_statement_time=2.000 FOR SELECT 1 FROM t',
    );
    assert.equal(
      limited('SELECT 1 FROM t', info('mysql'), 2000),
      'SELECT /*+ MAX_EXECUTION_TIME(2000) */ 1 FROM t',
    );
    // MySQL limits SELECT only: other statements run under sonde's deadline alone.
    assert.equal(
      limited('EXPLAIN FORMAT=JSON FOR CONNECTION 4', info('mysql'), 2000),
      'EXPLAIN FORMAT=JSON FOR CONNECTION 4',
    );
  });

  void it('compares statement texts as digests do', () => {
    assert.equal(
      canonicalSql('SET STATEMENT max_statement_time=2.000 FOR SELECT a FROM t WHERE x IN (?, ?)'),
      canonicalSql('SET STATEMENT `max_statement_time` = ? FOR SELECT `a` FROM `t` WHERE `x` IN (...)'),
    );
  });
});

void describe('query analytics under the server limit and without a grant', () => {
  let server: MariaDB;
  let db: PooledDb;
  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=ON'] });
    await server.createUser('nogrant', 'pw-123456', []);
    db = connectAs(server, 'nogrant', 'pw-123456');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  void it('names the missing grant', async () => {
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.match(
      res.error?.message ?? '',
      /^reading the digest summary failed: .*denied.* \(grant SELECT ON performance_schema\.\* TO the monitor's user\)$/,
    );
  });

  void it('a statement over the limit is stopped by the server itself', async () => {
    const root = connectAs(server, 'root', '');
    try {
      await assert.rejects(root.query(limited('SELECT SLEEP(3)', info('mariadb'), 100)), (err: Error) => {
        // MariaDB: max_statement_time exceeded (the statement is killed, not left running).
        return /max_statement_time|interrupted/i.test(err.message);
      });
    } finally {
      await root.close();
    }
  });
});
