/**
 * What the built agent loads to start: with one monitor on the default plan, logging in with a
 * password, and no TLS anywhere, Node's `tls`, `https`, `zlib`, `crypto` and `perf_hooks` stay
 * unloaded through the first collection (each costs memory and start time; the first three
 * load on the first TLS connection, HTTPS listener or gzip answer, `crypto` on the first
 * hash sonde needs beyond mysql2's SHA-1 login, and sonde reads its clock without the last), and
 * so do mysql2's rare data (its double-byte character-set tables and its AWS TLS profile),
 * which the build keeps out of the chunks as files beside them; no WebAssembly module is
 * compiled. Read from `process.moduleLoadList`, the `require` cache and the global
 * `WebAssembly` of the running bundle, written by a preloaded module when the agent exits.
 */
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { ROOT, startAgent } from '../helpers/agent.js';

const PASSWORD = 'start-path-Pw-3';

/** A line of the first certificate in mysql2's 'Amazon RDS' TLS profile. */
const RDS_PROFILE_CERT = 'MIIEEjCCAvqgAwIBAgIJAM2ZN/+nPi27MA0GCSqGSIb3DQEBCwUAMIGVMQswCQYD';

/**
 * A module for `--import` that writes, at exit, Node's loaded built-in modules to `file`, the
 * files in the `require` cache (every CommonJS module and JSON file required) to
 * `file`.required, and how many WebAssembly modules were compiled to `file`.wasm (counted
 * through the global `WebAssembly`'s constructors and compile functions, which it wraps).
 */
function recorder(file: string): string {
  const js =
    `import{writeFileSync}from'node:fs';import{createRequire}from'node:module';` +
    `let w=0;const W=globalThis.WebAssembly;` +
    `for(const k of['Module','compile','instantiate','compileStreaming','instantiateStreaming'])` +
    `W[k]=new Proxy(W[k],{apply:(t,s,a)=>(w++,Reflect.apply(t,s,a)),construct:(t,a,n)=>(w++,Reflect.construct(t,a,n))});` +
    `const r=createRequire('/');process.on('exit',()=>{` +
    `writeFileSync(${JSON.stringify(file)},process.moduleLoadList.join('\\n'));` +
    `writeFileSync(${JSON.stringify(`${file}.wasm`)},String(w));` +
    `writeFileSync(${JSON.stringify(`${file}.required`)},Object.keys(r.cache).join('\\n'));});`;
  return `--import=data:text/javascript,${encodeURIComponent(js)}`;
}

/** The config of one monitor on the default plan, as `user`. */
function oneMonitor(socket: string, user: string): string {
  return (
    `api:\n  bind: {{API}}\nsinks:\n  noop: {}\nmonitors:\n  - id: db1\n    socket: ${socket}\n` +
    `    username: ${user}\n    password: ${PASSWORD}\n`
  );
}

/** The rare-data files (mysql2-data/…) the agent required, by file name. */
function rareRequired(file: string): string[] {
  return readFileSync(`${file}.required`, 'utf8')
    .split('\n')
    .filter((f) => f.includes('/dist/bundle/bin/mysql2-data/'))
    .map((f) => f.slice(f.lastIndexOf('/') + 1));
}

describe('the start path of the bundle', { timeout: 120_000 }, () => {
  let db: MariaDB;
  let dir: string;
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    dir = mkdtempSync(join(tmpdir(), 'sonde-start-path-'));
  });
  after(async () => {
    await db?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('loads neither tls, https, zlib, crypto nor perf_hooks and compiles no WebAssembly for a plain monitor, through its first collection', async () => {
    // the usual login on MariaDB, whose SHA-1 hashes the bundle computes without Node's crypto
    const [account] = await db.query("SELECT plugin FROM mysql.user WHERE user = 'sonde'");
    assert.equal(account?.plugin, 'mysql_native_password');
    const file = join(dir, 'modules.txt');
    const agent = await startAgent(oneMonitor(db.socket, 'sonde'), { env: { NODE_OPTIONS: recorder(file) } });
    try {
      await agent.until('the first collection', async () =>
        ((await agent.monitorsStatus()).db1?.['level-collect'] ?? '').startsWith('last collected and sent'),
      );
    } finally {
      assert.equal(await agent.stop(), 0);
    }
    const loaded = new Set(
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('NativeModule '))
        .map((l) => l.slice('NativeModule '.length)),
    );
    // The list is the real one: the modules every start needs are in it.
    for (const needed of ['net', 'http']) assert.ok(loaded.has(needed), `${needed} loaded`);
    for (const lazy of ['tls', 'https', 'zlib', 'crypto', 'perf_hooks'])
      assert.ok(!loaded.has(lazy), `${lazy} not loaded at start`);
    // (the Shift JIS test below shows the same recorder seeing the data when it is required)
    assert.deepEqual(rareRequired(file), [], 'no rare data required');
    // mysql2's 64-bit integer library compiles a WebAssembly module when it loads, unless the
    // build takes it out (V8's WebAssembly compilers at every start, for nothing sonde uses)
    assert.equal(readFileSync(`${file}.wasm`, 'utf8'), '0', 'no WebAssembly module compiled');
  });

  it('counts the WebAssembly modules a process compiles, with the recorder the start is read by', () => {
    const file = join(dir, 'modules-wasm.txt');
    // the smallest module: the magic number and the version, no section
    const r = spawnSync(
      process.execPath,
      [recorder(file), '-e', 'new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))'],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(`${file}.wasm`, 'utf8'), '1');
  });

  it("keeps mysql2's rare data out of the chunks, as files beside them", () => {
    const bin = join(ROOT, 'dist/bundle/bin');
    const data = readdirSync(join(bin, 'mysql2-data'));
    assert.ok(data.includes('ssl-profiles.json') && data.includes('iconv-shiftjis.json'), data.join(' '));
    for (const chunk of readdirSync(bin).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(bin, chunk), 'utf8');
      assert.ok(!text.includes(RDS_PROFILE_CERT), `${chunk} holds no certificate of the profile`);
      // iconv-lite's Shift JIS table starts with this row; its text stays in the file
      assert.ok(!text.includes('["8140","\\u3000'), `${chunk} holds no character-set table`);
    }
    assert.ok(readFileSync(join(bin, 'mysql2-data/iconv-shiftjis.json'), 'utf8').includes('["8140","\u3000'));
    assert.ok(readFileSync(join(bin, 'mysql2-data/ssl-profiles.json'), 'utf8').includes(RDS_PROFILE_CERT));
  });

  it('reads a server that answers in Shift JIS: the table is required from beside the chunks', async () => {
    // Results in Shift JIS for this account alone: mysql2 decodes every text column with
    // iconv-lite's table, which a missing or unreadable file would turn into failed domains.
    await db.createUser('sjis_sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    await db.query(
      `SET GLOBAL init_connect = "SET character_set_results = IF(LEFT(USER(), 5) = 'sjis_', 'sjis', @@character_set_results)"`,
    );
    const file = join(dir, 'modules-sjis.txt');
    const agent = await startAgent(oneMonitor(db.socket, 'sjis_sonde'), {
      env: { NODE_OPTIONS: recorder(file) },
    });
    let status: Record<string, string> = {};
    try {
      await agent.until('the first collection', async () => {
        status = (await agent.monitorsStatus()).db1 ?? {};
        return (status['level-collect'] ?? '').startsWith('last collected and sent');
      });
    } finally {
      assert.equal(await agent.stop(), 0);
    }
    assert.match(status['domain:status.global'] ?? '', /^ok at .*: \d+ metrics$/);
    assert.deepEqual(rareRequired(file), ['iconv-shiftjis.json']);
  });
});
