/**
 * The single executable (`npm run build:binary`, scripts/build-binary.mjs), built here into
 * a temp dir and booted on a config with one monitor against a throwaway MariaDB: the API's
 * /status/monitors, the monitor's mysqld_exporter /metrics, and the web page's files, which
 * the executable carries inside (no package on disk: it runs from the temp dir with the
 * checkout out of reach of its working directory).
 *
 * Built with the Node that runs the tests: Node 24's single executables take the flags the
 * build sets and the module hooks its main script registers. On an older Node the build is not what ships, so the suite is
 * skipped there, saying so; the Node 24 run of the suite covers it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/agent.js';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';

const run = promisify(execFile);
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const SKIP =
  NODE_MAJOR < 24
    ? `the single executable is built with Node 24 (this is Node ${process.versions.node}): covered by the Node 24 run`
    : false;

/** The chroot test needs root (chroot, a mount namespace) and the tools. */
const ROOT_SKIP =
  process.getuid?.() !== 0
    ? 'needs root for chroot and a private mount namespace'
    : ['/usr/sbin/chroot', '/usr/bin/unshare', '/usr/bin/ldd'].every((t) => existsSync(t))
      ? false
      : 'needs chroot, unshare and ldd';

/** A Galera cluster name in Japanese: db2's account reads it in Shift JIS. */
const CLUSTER = 'クラスタ東';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** GET a URL: status and body text, or status 0 when nothing answers yet. */
async function get(url: string): Promise<{ status: number; body: string; type: string }> {
  try {
    const res = await fetch(url);
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') ?? '' };
  } catch {
    return { status: 0, body: '', type: '' };
  }
}

/** Poll until `check` gives a value, or fail after `ms` with the process's stderr. */
async function until<T>(what: string, ms: number, stderr: () => string, check: () => Promise<T | undefined>) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr: ${stderr()}`);
    await sleep(100);
  }
}

/** The value of an unlabelled sample in an exposition. */
function sample(body: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(body);
  return m ? Number(m[1]) : undefined;
}

describe('the single executable', { skip: SKIP }, () => {
  let dir: string;
  /** The index of the bundle's pack the build wrote: file → [offset, length]. */
  const packIndex = (): Record<string, [number, number]> =>
    JSON.parse(readFileSync(join(dir, 'out/sea/bundle.index.json'), 'utf8')) as Record<
      string,
      [number, number]
    >;
  let exe: string;
  let db: MariaDB;
  let proc: ChildProcess | undefined;
  let stderr = '';
  let api: string;
  let exporterPort: number;
  let sjisPort: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sonde-binary-'));
    const [built] = await Promise.all([
      run(process.execPath, [join(ROOT, 'scripts/build-binary.mjs'), '--out', join(dir, 'out')], {
        cwd: ROOT,
        maxBuffer: 1 << 24,
      }),
      startMariaDB().then((d) => (db = d)),
    ]);
    exe = built.stdout.trim();
    await db.createUser('sonde', 'bin-Secret-1', ['PROCESS, REPLICATION CLIENT ON *.*']);
    // db2's account gets its results in Shift JIS: mysql2 then decodes them with iconv-lite's
    // table, which the build keeps out of the chunks (served from the executable's assets).
    await db.createUser('sjis_sonde', 'bin-Secret-1', ['PROCESS, REPLICATION CLIENT ON *.*']);
    await db.query(
      `SET GLOBAL init_connect = "SET character_set_results = IF(LEFT(USER(), 5) = 'sjis_', 'sjis', @@character_set_results)"`,
    );
    await db.query(`SET GLOBAL wsrep_cluster_name = '${CLUSTER}'`);
    const apiPort = await freePort();
    exporterPort = await freePort();
    sjisPort = await freePort();
    api = `http://127.0.0.1:${apiPort}`;
    writeFileSync(
      join(dir, 'sonde.yaml'),
      `api:
  bind: 127.0.0.1:${apiPort}
sinks:
  noop: {}
monitors:
  - id: db1
    socket: ${db.socket}
    username: sonde
    password: bin-Secret-1
    exporter:
      mode: dual
      flags:
        web.listen-address: 127.0.0.1:${exporterPort}
  - id: db2
    socket: ${db.socket}
    username: sjis_sonde
    password: bin-Secret-1
    exporter:
      mode: dual
      flags:
        web.listen-address: 127.0.0.1:${sjisPort}
`,
    );
    proc = spawn(exe, ['--config', join(dir, 'sonde.yaml')], {
      cwd: dir,
      env: { PATH: '/usr/bin:/bin', HOME: dir, TZ: 'UTC' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  });

  /** Scrape the exporter on `port` until `ready` finds what it waits for in an answer. */
  function scrape<T>(port: number, ready: (body: string) => T | undefined): Promise<T> {
    return until(
      `/metrics on port ${port}`,
      30_000,
      () => stderr,
      async () => {
        const r = await get(`http://127.0.0.1:${port}/metrics`);
        return r.status === 200 ? ready(r.body) : undefined;
      },
    );
  }

  after(async () => {
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc?.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    await db?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is named sonde-linux-<arch> and prints the package version', async () => {
    assert.equal(exe.split('/').pop(), `sonde-linux-${arch()}`);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout, stderr: err } = await run(exe, ['--version'], {
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
    });
    assert.equal(stdout, `v${pkg.version}\n`);
    assert.equal(err, '', 'no warning about the experimental feature');
  });

  it("carries the bin's Node flags, the bundle's chunks and every collector's help", async () => {
    const config = JSON.parse(readFileSync(join(dir, 'out/sea/sea-config.json'), 'utf8')) as {
      execArgv: string[];
      assets: Record<string, string>;
    };
    const shebang = readFileSync(join(ROOT, 'src/bin/sonde.ts'), 'utf8').split('\n', 1)[0] ?? '';
    assert.ok(shebang.endsWith(' --max-semi-space-size=4 --no-maglev'));
    assert.deepEqual(config.execArgv, ['--max-semi-space-size=4', '--no-maglev']);
    const index = packIndex();
    assert.deepEqual(index['sonde.js']?.[0], 0, 'the entry chunk heads the pack');
    assert.ok(Object.keys(index).filter((f) => f.endsWith('.js')).length > 10);
    assert.ok(
      Object.keys(config.assets).every((k) => !k.startsWith('bundle/')),
      'one asset, not one per chunk',
    );
    const { stdout } = await run(exe, ['--print-domains'], { cwd: dir, env: { PATH: '/usr/bin:/bin' } });
    assert.match(stdout, /^status\.global$/m);
  });

  it("packs the bundle's files whole, the start's chunks first", () => {
    const sea = join(dir, 'out/sea');
    const index = packIndex();
    const pack = readFileSync(join(sea, 'bundle.pack'));
    let end = 0;
    for (const [file, [offset, length]] of Object.entries(index)) {
      assert.ok(pack.subarray(offset, offset + length).equals(readFileSync(join(sea, 'bundle', file))), file);
      end = Math.max(end, offset + length);
    }
    assert.equal(end, pack.length, 'nothing but the files');
    // The chunks imported statically by the entry, the command line and the default plan's
    // collectors, read from their text: all of them lie before any other file.
    const files = Object.keys(index);
    const start = new Set<string>();
    const queue = files.filter((f) => /^(sonde|cli-.*|default-plan-domains-.*)\.js$/.test(f));
    assert.equal(queue.length, 3);
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
      if (start.has(f)) continue;
      start.add(f);
      const text = readFileSync(join(sea, 'bundle', f), 'utf8');
      // `import{a,b}from"./chunk.js"` and `import"./chunk.js"`, not `import("./chunk.js")`.
      for (const m of text.matchAll(/\bimport\s*(?:\{[^}]*\}\s*from\s*)?"\.\/([^"]+)"/g))
        queue.push(m[1] ?? '');
    }
    assert.ok(start.size > 10, `${start.size} start chunks`);
    const lastStart = Math.max(...[...start].map((f) => index[f]?.[0] ?? Infinity));
    const firstOther = Math.min(...files.filter((f) => !start.has(f)).map((f) => index[f]?.[0] ?? -1));
    assert.ok(lastStart < firstOther, `start chunks end at ${lastStart}, others begin at ${firstOther}`);
  });

  it('collects the monitor: /status/monitors reports the first collection sent', async () => {
    const status = await until(
      'the first collection',
      30_000,
      () => stderr,
      async () => {
        const r = await get(`${api}/status/monitors`);
        if (r.status !== 200) return undefined;
        const st = JSON.parse(r.body) as Record<string, Record<string, string>>;
        return (st.db1?.['level-collect'] ?? '').startsWith('last collected and sent') ? st : undefined;
      },
    );
    assert.match(status.db1?.monitor ?? '', /^running since /);
    assert.equal(status.db1?.exporter, `listening on 127.0.0.1:${exporterPort}`);
  });

  it("reads a server that answers in Shift JIS: mysql2's table comes from the pack", async () => {
    assert.ok('mysql2-data/iconv-shiftjis.json' in packIndex());
    // The cluster name reaches db2 as Shift JIS bytes; decoded with the table, it is the same text.
    const line = await scrape(sjisPort, (body) => /^mysql_galera_variables_info\{.*$/m.exec(body)?.[0]);
    assert.equal(line, `mysql_galera_variables_info{wsrep_cluster_name="${CLUSTER}"} 1`);
  });

  it("serves the monitor's /metrics with the server's own values", async () => {
    const body = await scrape(exporterPort, (b) => (sample(b, 'mysql_up') === 1 ? b : undefined));
    const [row] = await db.query('SELECT @@max_connections AS m');
    assert.equal(sample(body, 'mysql_global_variables_max_connections'), Number(row?.m));
    assert.match(body, /^mysql_global_status_uptime \d+/m);
  });

  it('serves the web page and its files from inside the executable', async () => {
    const page = await get(`${api}/`);
    assert.equal(page.status, 200);
    assert.match(page.type, /^text\/html/);
    assert.equal(page.body, readFileSync(join(ROOT, 'web/index.html'), 'utf8'));
    const app = await get(`${api}/ui/app.js`);
    assert.equal(app.body, readFileSync(join(ROOT, 'web/app.js'), 'utf8'));
    const uplot = await get(`${api}/ui/uplot.min.js`);
    assert.equal(uplot.status, 200);
    assert.match(uplot.body, /uPlot/);
    // No crash, no stack: a panic line or a JavaScript error would show here.
    assert.doesNotMatch(stderr, /server-panic|\b[A-Z][a-z]+Error\b|\n\s+at /);
  });

  it(
    'runs on a root file system holding only what Dockerfile.binary copies: read-only, as uid 65532',
    { skip: ROOT_SKIP },
    async () => {
      // The build stage's commands after the build, run on the executable built above, with
      // a temp dir for /rootfs; the image is that directory, nothing else.
      const steps = /npm run build:binary \\\n\s*&& ([\s\S]*?)\n\n/.exec(
        readFileSync(join(ROOT, 'Dockerfile.binary'), 'utf8'),
      );
      assert.ok(steps?.[1], 'the steps after the build in Dockerfile.binary');
      const rootfs = join(dir, 'rootfs');
      const src = join(dir, 'src');
      mkdirSync(join(src, 'dist/binary'), { recursive: true });
      copyFileSync(exe, join(src, 'dist/binary', exe.split('/').pop() ?? ''));
      await run('sh', ['-c', steps[1].replace(/\\\n/g, ' ').replaceAll('/rootfs', rootfs)], { cwd: src });
      const port = await freePort();
      writeFileSync(
        join(rootfs, 'etc/sonde/sonde.yaml'),
        `api:\n  bind: 127.0.0.1:${port}\nmonitor-loader:\n  local:\n    disable-auto: true\n`,
      );
      // A private mount namespace: the root file system bound read-only, then chroot into it.
      const script = [
        `mount --bind ${rootfs} ${rootfs}`,
        `mount -o remount,bind,ro ${rootfs}`,
        // The mount is read-only, or the agent does not start at all.
        `! touch ${rootfs}/.writable 2>/dev/null`,
        `exec /usr/sbin/chroot --userspec=65532:65532 ${rootfs} /sonde --config /etc/sonde/sonde.yaml`,
      ].join(' && ');
      const agent = spawn('unshare', ['-m', 'sh', '-c', script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      agent.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise((r) => agent.once('exit', r));
      try {
        const page = await until(
          'the API in the chroot',
          30_000,
          () => err,
          async () => {
            const r = await get(`http://127.0.0.1:${port}/`);
            return r.status === 200 ? r : undefined;
          },
        );
        assert.equal(page.body, readFileSync(join(ROOT, 'web/index.html'), 'utf8'));
        const health = await run(
          '/usr/sbin/chroot',
          ['--userspec=65532:65532', rootfs, '/sonde', 'healthcheck'],
          {
            env: { SONDE_HEALTHZ: `http://127.0.0.1:${port}/healthz` },
          },
        );
        assert.equal(health.stderr, '');
      } finally {
        agent.kill('SIGTERM');
        await exited;
      }
      assert.doesNotMatch(err, /server-panic|\b[A-Z][a-z]+Error\b|\n\s+at /);
    },
  );
});
