import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { FakeDb } from '../kit/test-helpers.js';
import {
  DOMAIN,
  TABLE_NAME_QUERY,
  registration,
  tablespacesQuery,
} from './info_schema_innodb_tablespaces.js';
import { lines, scrapeWith } from './scrape-fixture.js';

function server(version: string, table: string | undefined, rows: Row[]): FakeDb {
  return new FakeDb(version, (sql) => {
    if (sql === TABLE_NAME_QUERY) return table === undefined ? [] : [{ TABLE_NAME: table }];
    return rows;
  });
}

void describe(DOMAIN, () => {
  void it('MySQL 8.0: INNODB_TABLESPACES with SPACE_TYPE; no FILE_FORMAT column, so file_format NONE', async () => {
    const db = server('8.0.36', 'INNODB_TABLESPACES', [
      {
        SPACE: '4294967294',
        NAME: 'mysql',
        FILE_FORMAT: 'NONE',
        ROW_FORMAT: 'Any',
        SPACE_TYPE: 'General',
        FILE_SIZE: '25165824',
        ALLOCATED_SIZE: '25169920',
      },
    ]);
    const r = await scrapeWith(registration, db);
    assert.equal(r.error, undefined);
    assert.equal(db.queries[1]?.sql, tablespacesQuery('INNODB_TABLESPACES', true));
    assert.match(
      db.queries[1]?.sql ?? '',
      /ifnull\(SPACE_TYPE, 'NONE'\) as SPACE_TYPE, FILE_SIZE.* FROM information_schema\.`INNODB_TABLESPACES`$/,
    );
    assert.deepEqual(lines(r.values), [
      'mysql_info_schema_innodb_tablespace_space_info{tablespace_name="mysql",file_format="NONE",row_format="Any",space_type="General"} 4294967294',
      'mysql_info_schema_innodb_tablespace_file_size_bytes{tablespace_name="mysql"} 25165824',
      'mysql_info_schema_innodb_tablespace_allocated_size_bytes{tablespace_name="mysql"} 25169920',
    ]);
  });

  void it('MySQL 5.7: INNODB_SYS_TABLESPACES, whose FILE_FORMAT column makes the label the text FILE_FORMAT', async () => {
    const db = server('5.7.44-log', 'INNODB_SYS_TABLESPACES', [
      {
        SPACE: '23',
        NAME: 'shop/orders',
        FILE_FORMAT: 'FILE_FORMAT',
        ROW_FORMAT: 'Dynamic',
        SPACE_TYPE: 'Single',
        FILE_SIZE: '98304',
        ALLOCATED_SIZE: '98304',
      },
    ]);
    const r = await scrapeWith(registration, db);
    assert.equal(db.queries[1]?.sql, tablespacesQuery('INNODB_SYS_TABLESPACES', true));
    assert.ok(
      lines(r.values)[0]?.includes('file_format="FILE_FORMAT",row_format="Dynamic",space_type="Single"'),
    );
  });

  void it('MariaDB 10.5+: no SPACE_TYPE in the query, the label empty; MariaDB 10.4 still asks for it', async () => {
    const row = {
      SPACE: '5',
      NAME: 'shop/packed',
      FILE_FORMAT: 'NONE',
      ROW_FORMAT: 'Compressed',
      FILE_SIZE: '65536',
      ALLOCATED_SIZE: '65536',
    };
    const db = server('10.11.6-MariaDB', 'INNODB_SYS_TABLESPACES', [row]);
    const r = await scrapeWith(registration, db);
    assert.equal(db.queries[1]?.sql, tablespacesQuery('INNODB_SYS_TABLESPACES', false));
    assert.doesNotMatch(db.queries[1]?.sql ?? '', /SPACE_TYPE/);
    assert.equal(
      lines(r.values)[0],
      'mysql_info_schema_innodb_tablespace_space_info{tablespace_name="shop/packed",file_format="NONE",row_format="Compressed",space_type=""} 5',
    );
    const old = server('10.4.32-MariaDB', 'INNODB_SYS_TABLESPACES', [{ ...row, SPACE_TYPE: 'Single' }]);
    const r2 = await scrapeWith(registration, old);
    assert.equal(old.queries[1]?.sql, tablespacesQuery('INNODB_SYS_TABLESPACES', true));
    assert.ok(lines(r2.values)[0]?.includes('space_type="Single"'));
  });

  void it('no tablespace table, or an unexpected name: an error, no samples', async () => {
    const none = await scrapeWith(registration, server('8.0.36', undefined, []));
    assert.match(none.error?.message ?? '', /no rows in result set/);
    const odd = await scrapeWith(registration, server('8.0.36', 'innodb_tablespaces', []));
    assert.match(odd.error?.message ?? '', /couldn't find INNODB_SYS_TABLESPACES or INNODB_TABLESPACES/);
  });

  void it('MySQL before 5.7 is not served (upstream skips the scraper there)', async () => {
    const db = server('5.6.51', 'INNODB_SYS_TABLESPACES', []);
    const r = await scrapeWith(registration, db);
    assert.match(r.error?.message ?? '', /not supported on .*5\.6\.51.*before MySQL 5\.7/);
    assert.deepEqual(db.queries, []);
  });

  void it('a SPACE beyond 32 bits is a scan error', async () => {
    const r = await scrapeWith(
      registration,
      server('8.0.36', 'INNODB_TABLESPACES', [
        {
          SPACE: '4294967296',
          NAME: 'x',
          FILE_FORMAT: 'NONE',
          ROW_FORMAT: 'Any',
          SPACE_TYPE: 'General',
          FILE_SIZE: '1',
          ALLOCATED_SIZE: '1',
        },
      ]),
    );
    assert.match(r.error?.message ?? '', /column SPACE: .*out of range/);
  });
});
