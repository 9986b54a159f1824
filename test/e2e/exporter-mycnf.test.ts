/**
 * my.cnf as mysqld_exporter reads it, through the real sonde binary started with
 * mysqld_exporter's command line, against a throwaway MariaDB that requires TLS
 * (`require_secure_transport`) and whose certificate names only `other.example` (so a check
 * of the host name 127.0.0.1 fails): `ssl-mode`, `tls`, `ssl-skip-verfication`, TLS versions,
 * `tls-server-name`, `${VAR}` in values, a password holding `$`, an unknown key (a warning),
 * and `tls=preferred` against a server without TLS.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSondeCli } from '../helpers/exporter-cli.js';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';

const PASSWORD = 'tls-Pass-5';
/** A password with lone `$` signs, which must reach the server as written. */
const DOLLAR_PASSWORD = 'pa$$w0rd$x';

let tlsServer: MariaDB;
let plain: MariaDB;
let files: TlsFiles;
let dir: string;
let n = 0;

/** mysql_up of one scrape of sonde started with a my.cnf of `lines` (and its output). */
async function up(
  server: MariaDB,
  lines: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ up: string; output: string; cnf: string }> {
  const cnf = join(dir, `c${++n}.cnf`);
  writeFileSync(cnf, ['[client]', 'host=127.0.0.1', `port=${server.port}`, ...lines, ''].join('\n'));
  const address = `127.0.0.1:${await freePort()}`;
  const cli = await startSondeCli(
    ['--config.my-cnf', cnf, `--web.listen-address=${address}`, '--log.level=warn'],
    address,
    { env },
  );
  try {
    const r = await cli.get('/metrics?collect[]=global_status');
    return {
      up: /^mysql_up (\d)$/m.exec(r.body)?.[1] ?? 'missing',
      output: cli.stderr() + cli.stdout(),
      cnf,
    };
  } finally {
    await cli.stop();
  }
}

const USER = ['user=tlsu', `password=${PASSWORD}`];

describe(
  'my.cnf as mysqld_exporter reads it, against a MariaDB that requires TLS',
  { timeout: 180_000 },
  () => {
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'sonde-mycnf-'));
      files = makeTlsFiles(['DNS:other.example']);
      tlsServer = await startMariaDB({
        args: [
          `--ssl-ca=${files.ca}`,
          `--ssl-cert=${files.cert}`,
          `--ssl-key=${files.key}`,
          '--require-secure-transport=ON',
        ],
      });
      await tlsServer.createUser('tlsu', PASSWORD, ['PROCESS ON *.*']);
      await tlsServer.createUser('dollar', DOLLAR_PASSWORD, ['PROCESS ON *.*']);
      plain = await startMariaDB();
      await plain.createUser('tlsu', PASSWORD, ['PROCESS ON *.*']);
    });
    after(async () => {
      await tlsServer?.stop();
      await plain?.stop();
      if (files) rmSync(files.dir, { recursive: true, force: true });
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('a plain connection is refused by the server (the test can fail)', async () => {
      assert.equal((await up(tlsServer, USER)).up, '0');
    });

    it('ssl-mode=REQUIRED means TLS without certificate files', async () => {
      assert.equal((await up(tlsServer, [...USER, 'ssl-mode=REQUIRED'])).up, '1');
    });

    it('ssl-mode=VERIFY_CA verifies the chain only; VERIFY_IDENTITY also the name', async () => {
      assert.equal((await up(tlsServer, [...USER, 'ssl-mode=VERIFY_CA', `ssl-ca=${files.ca}`])).up, '1');
      assert.equal(
        (await up(tlsServer, [...USER, 'ssl-mode=VERIFY_IDENTITY', `ssl-ca=${files.ca}`])).up,
        '0',
      );
      // VERIFY_CA still verifies: the system CAs do not know the test CA
      assert.equal((await up(tlsServer, [...USER, 'ssl-mode=VERIFY_CA'])).up, '0');
    });

    it('tls=skip-verify and ssl-skip-verfication connect without verifying; tls=true verifies', async () => {
      assert.equal((await up(tlsServer, [...USER, 'tls=skip-verify'])).up, '1');
      assert.equal((await up(tlsServer, [...USER, 'ssl-skip-verfication'])).up, '1');
      assert.equal((await up(tlsServer, [...USER, 'ssl-skip-verfication=false'])).up, '0');
      assert.equal((await up(tlsServer, [...USER, 'tls=true'])).up, '0');
    });

    it('tls-server-name is the name the certificate must carry', async () => {
      const ca = `ssl-ca=${files.ca}`;
      assert.equal((await up(tlsServer, [...USER, ca])).up, '0', '127.0.0.1 is not in the certificate');
      assert.equal((await up(tlsServer, [...USER, ca, 'tls-server-name=other.example'])).up, '1');
      assert.equal((await up(tlsServer, [...USER, ca, 'tls-server-name=wrong.example'])).up, '0');
    });

    it('tls-min-version and tls-max-version bound the TLS version', async () => {
      assert.equal((await up(tlsServer, [...USER, 'tls=skip-verify', 'tls-min-version=TLSv1.2'])).up, '1');
      assert.equal((await up(tlsServer, [...USER, 'tls=skip-verify', 'tls-max-version=TLSv1.1'])).up, '0');
    });

    it('tls=preferred: TLS when the server has it, a plain connection when it has not', async () => {
      assert.equal((await up(tlsServer, [...USER, 'tls=preferred'])).up, '1');
      assert.equal((await up(plain, [...USER, 'tls=preferred'])).up, '1');
    });

    it('${VAR} in a value is expanded; a password with lone $ signs is kept as written', async () => {
      const env = { SONDE_TEST_PW: PASSWORD };
      assert.equal(
        (await up(tlsServer, ['user=tlsu', 'password=${SONDE_TEST_PW}', 'ssl-mode=REQUIRED'], env)).up,
        '1',
      );
      assert.equal(
        (await up(tlsServer, ['user=dollar', `password=${DOLLAR_PASSWORD}`, 'ssl-mode=REQUIRED'])).up,
        '1',
      );
    });

    it('an unknown key is a warning naming the file and the key; the rest is read', async () => {
      const r = await up(tlsServer, [...USER, 'ssl-mode=REQUIRED', 'default-character-set=utf8mb4']);
      assert.equal(r.up, '1');
      assert.match(
        r.output,
        new RegExp(`mycnf ${r.cnf}: unknown key default-character-set in \\[client\\], ignored`),
      );
      assert.doesNotMatch(r.output, new RegExp(PASSWORD.replace(/\W/g, '.')));
    });

    it('a bad TLS value fails the start naming the file and the key', async () => {
      const cnf = join(dir, 'bad.cnf');
      writeFileSync(cnf, ['[client]', ...USER, 'tls=sometimes', ''].join('\n'));
      const address = `127.0.0.1:${await freePort()}`;
      await assert.rejects(
        startSondeCli(['--config.my-cnf', cnf, `--web.listen-address=${address}`], address),
        new RegExp(`--config.my-cnf: ${cnf}: tls=sometimes is not allowed`),
      );
    });
  },
);
