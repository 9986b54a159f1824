/**
 * The RocksDB variables' HELP texts: a throwaway MariaDB with the MyRocks engine
 * (Debian's mariadb-plugin-rocksdb), scraped by the real mysqld_exporter and by the sonde
 * binary with the same command line; every `mysql_global_variables_rocksdb_*` family has the
 * same HELP and TYPE in both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSondeCli, type CliExporter } from '../helpers/exporter-cli.js';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { httpGet, parseExposition, rootSocketDsn, startMysqldExporter, type Peer } from './exporter-peers.js';

const PLUGIN = '/usr/lib/mysql/plugin/ha_rocksdb.so';

let server: MariaDB;
let real: Peer;
let sonde: CliExporter;
let dir: string;

describe('RocksDB variables as mysqld_exporter describes them', { timeout: 120_000 }, () => {
  before(async () => {
    if (!existsSync(PLUGIN))
      throw new Error(
        `${PLUGIN} is missing: apt-get install mariadb-plugin-rocksdb (scripts/ensure-deps.sh does it)`,
      );
    server = await startMariaDB({ args: ['--plugin-load-add=ha_rocksdb'] });
    dir = mkdtempSync(join(tmpdir(), 'sonde-rocksdb-'));
    const cnf = join(dir, 'my.cnf');
    writeFileSync(cnf, `[client]\nuser=root\nsocket=${server.socket}\n`);
    real = await startMysqldExporter(rootSocketDsn(server.socket), ['--collect.global_variables']);
    const address = `127.0.0.1:${await freePort()}`;
    sonde = await startSondeCli(
      ['--config.my-cnf', cnf, `--web.listen-address=${address}`, '--collect.global_variables'],
      address,
    );
  });
  after(async () => {
    await sonde?.stop();
    await real?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves every rocksdb variable with the HELP and TYPE of the real exporter', async () => {
    const rocksdb = async (url: string) =>
      new Map(
        [...parseExposition((await httpGet(url)).body)].filter(([n]) =>
          n.startsWith('mysql_global_variables_rocksdb_'),
        ),
      );
    const [r, s] = [
      await rocksdb(`http://${real.address}/metrics`),
      await rocksdb(`http://${sonde.address}/metrics`),
    ];
    assert.ok(r.size > 50, `the real exporter served ${r.size} rocksdb variables`);
    assert.deepEqual([...s.keys()].sort(), [...r.keys()].sort());
    const described = [...r].filter(([, f]) => f.help !== 'Generic gauge metric from SHOW GLOBAL VARIABLES.');
    assert.ok(described.length > 30, `${described.length} variables with their own HELP`);
    for (const [name, f] of r) {
      assert.equal(s.get(name)?.help, f.help, name);
      assert.equal(s.get(name)?.type, f.type, name);
    }
  });
});
