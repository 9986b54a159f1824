import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { SQL, registration, sanitizeTokudbName } from './engine_tokudb_status.js';
import { collectOnce, dbError, render } from './recorded.fixture.js';

const row = (Name: string, Status: string | null) => ({ Type: 'TokuDB', Name, Status });

/** Percona Server 5.7 with TokuDB (a selection of rows, in the server's spelling). */
const ROWS = [
  row('time of environment creation', 'Wed May  1 12:00:00 2024'),
  row('db opens', '3'),
  row('checkpoint: period', '60'),
  row('checkpoint: last checkpoint began', '2024-05-01 12:00:00'),
  row('cachetable: size current', '1048576'),
  row('ft: promotion: leaf roots injected into', '0'),
  row('loader: number of calls to loader->put', '12'),
  row('txn: begin (read-only)', '5'),
  row('ft: basements decompressed for prelocked range (bytes)', '1.5e3'),
  row('engine: panic code', 'ON'),
  row('filesystem: ENOSPC redzone state', 'disabled'),
  row('file number in use', 'txn-log.000042'),
  row('cachetable: cleaner executions / period', '7'),
  row('cachetable: miss time+something', '8'),
  row('memory: mallocator version', '5.2.1-0-g0'),
  row('memory: size (%) of the heap', '9'),
  row('db opens', '4'),
  row('extra', null),
];

void describe('exporter.engine_tokudb_status', () => {
  void it('Percona Server: every numeric row as an untyped family named after it', async () => {
    const db = new FakeDb('5.7.44-48', () => ROWS);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    const P = 'mysql_engine_tokudb_';
    assert.deepEqual(render(res.values), [
      `${P}cachetable_cleaner_executions_and_period 7`,
      `${P}cachetable_miss_timeandsomething 8`,
      `${P}cachetable_size_current 1048576`,
      `${P}checkpoint_last_checkpoint_began 1714564800`,
      `${P}checkpoint_period 60`,
      `${P}db_opens 3`,
      `${P}engine_panic_code 1`,
      `${P}filesystem_enospc_redzone_state 0`,
      `${P}ft_basements_decompressed_for_prelocked_range_bytes 1500`,
      `${P}ft_promotion_leaf_roots_injected_into 0`,
      `${P}loader_number_of_calls_to_loader_put 12`,
      `${P}txn_begin_read_only 5`,
    ]);
    assert.ok(
      res.values.every(
        (v) => v.type === 0 && v.meta?.help === 'Generic metric from SHOW ENGINE TOKUDB STATUS.',
      ),
    );
  });

  void it('sanitizes names: lowercase, drops >,:() and maps space/- to _ and +,/ to and', () => {
    assert.equal(sanitizeTokudbName('A>B,C:D(E)F G-H+I/J'), 'abcdef_g_handiandj');
    assert.equal(
      sanitizeTokudbName('loader: number of calls to loader->put'),
      'loader_number_of_calls_to_loader_put',
    );
  });

  void it('no TokuDB engine (MariaDB before 10.6 without the plugin, MySQL): the error', async () => {
    const db = new FakeDb('10.5.24-MariaDB', () => {
      throw dbError(1286, "Unknown storage engine 'TOKUDB'");
    });
    const { res } = await collectOnce(registration, db);
    assert.equal(res.error?.errno, 1286);
  });

  void it('MariaDB 10.6+: not supported, no statement sent', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    const { res } = await collectOnce(registration, db);
    assert.match(res.error?.message ?? '', /not supported on mariadb 10\.11\.6.*no TokuDB engine/i);
    assert.deepEqual(
      db.queries.filter((q) => q.sql === SQL),
      [],
    );
  });
});
