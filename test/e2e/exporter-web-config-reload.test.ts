/**
 * The web configuration file is read again when it changes, as mysqld_exporter reads it
 * again for every request: the real sonde binary with mysqld_exporter's command line and
 * `--web.config.file`, its file then edited while it runs. New basic-auth users apply to the
 * next request, a rotated certificate (the same file names, new content) to the next TLS
 * handshake; a broken file keeps the running configuration, with an error event.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { BIN } from '../helpers/agent.js';
import { freePort } from '../helpers/mariadb.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';

let dir: string;
let first: TlsFiles;
let second: TlsFiles;
let proc: ChildProcess;
let output = '';
let address: string;

/** One GET over a new TLS connection trusting `ca`, with basic auth `user:pw`: the status, or the TLS error. */
function get(ca: string, user: string, pw: string): Promise<number | string> {
  return new Promise((resolve) => {
    const [host, port] = address.split(':');
    const req = request(
      {
        host,
        port: Number(port),
        path: '/',
        ca: readFileSync(ca),
        agent: false,
        headers: { Authorization: `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}` },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

function webConfig(users: Record<string, string>): string {
  return [
    'tls_server_config:',
    `  cert_file: ${join(dir, 'server.pem')}`,
    `  key_file: ${join(dir, 'server-key.pem')}`,
    'basic_auth_users:',
    ...Object.entries(users).map(([u, pw]) => `  ${u}: ${bcrypt.hashSync(pw, 4)}`),
    '',
  ].join('\n');
}

/** Past the once-a-second look at the files. */
const settle = () => new Promise((r) => setTimeout(r, 1200));

describe('--web.config.file read again when it changes', { timeout: 60_000 }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sonde-webcfg-'));
    first = makeTlsFiles();
    second = makeTlsFiles();
    copyFileSync(first.cert, join(dir, 'server.pem'));
    copyFileSync(first.key, join(dir, 'server-key.pem'));
    writeFileSync(join(dir, 'web.yml'), webConfig({ alice: 'alice-pw' }));
    writeFileSync(join(dir, 'my.cnf'), '[client]\nuser=nobody\nhost=127.0.0.1\nport=1\n');
    address = `127.0.0.1:${await freePort()}`;
    proc = spawn(
      process.execPath,
      [
        BIN,
        `--config.my-cnf=${join(dir, 'my.cnf')}`,
        `--web.listen-address=${address}`,
        `--web.config.file=${join(dir, 'web.yml')}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 20_000;
    while ((await get(first.ca, 'alice', 'alice-pw')) !== 200) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`sonde did not listen: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    for (const t of [first, second]) if (t) rmSync(t.dir, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('new basic-auth users apply to the next request', async () => {
    assert.equal(await get(first.ca, 'bob', 'bob-pw'), 401);
    writeFileSync(join(dir, 'web.yml'), webConfig({ bob: 'bob-pw' }));
    await settle();
    assert.equal(await get(first.ca, 'bob', 'bob-pw'), 200);
    assert.equal(await get(first.ca, 'alice', 'alice-pw'), 401);
  });

  it('a rotated certificate is served from the next handshake, without a restart', async () => {
    copyFileSync(second.cert, join(dir, 'server.pem'));
    copyFileSync(second.key, join(dir, 'server-key.pem'));
    await settle();
    assert.equal(await get(second.ca, 'bob', 'bob-pw'), 200);
    assert.notEqual(await get(first.ca, 'bob', 'bob-pw'), 200, 'the old certificate is gone');
  });

  it('a broken file keeps the running configuration, with an error event', async () => {
    writeFileSync(join(dir, 'web.yml'), 'basic_auth_users: [\n');
    await settle();
    assert.equal(await get(second.ca, 'bob', 'bob-pw'), 200);
    assert.equal(await get(second.ca, 'bob', 'wrong'), 401);
    assert.match(output, /web-config-reload-error.*web configuration not reloaded, the running one is kept/);
    assert.equal(proc.exitCode, null);
  });
});
