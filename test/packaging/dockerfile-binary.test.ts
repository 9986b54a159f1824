/**
 * Dockerfile.binary, read statically (no Docker engine here): the single executable in an
 * empty image with its runtime libraries and CA certificates, a user that is not root, and a
 * healthcheck that the executable answers itself (`sonde healthcheck`, run here against a
 * real sonde).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, sondeArgv, startAgent } from '../helpers/agent.js';
import { args, stages, type Stage } from '../helpers/dockerfile.js';

const run = promisify(execFile);

describe('Dockerfile.binary', () => {
  let text: string;
  let build: Stage;
  let runtime: Stage;

  before(async () => {
    text = await readFile(join(ROOT, 'Dockerfile.binary'), 'utf8');
    const all = stages(text);
    assert.equal(all.length, 2, 'a build stage and a runtime stage');
    [build, runtime] = all as [Stage, Stage];
  });

  it('builds the executable with npm run build:binary on the Node 24 image', async () => {
    assert.match(build.image, /^node:24-[a-z]+$/);
    const runs = args(build, 'RUN').join(' ');
    assert.match(runs, /npm ci\b(?![^&]*--omit=dev)/);
    assert.match(runs, /npm run build:binary\b/);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.match(pkg.scripts['build:binary'] ?? '', /scripts\/build-binary\.mjs/);
  });

  it('runs on an empty image holding only the build stage’s files: executable, libraries, CA certificates', () => {
    assert.equal(runtime.image, 'scratch');
    assert.deepEqual(args(runtime, 'COPY'), [`--from=${build.name} /rootfs/ /`]);
    assert.deepEqual(args(runtime, 'RUN'), [], 'nothing runs in the runtime stage (there is no shell)');
    const runs = args(build, 'RUN').join(' ');
    assert.match(runs, /cp dist\/binary\/sonde-linux-\* \/rootfs\/sonde\b/);
    assert.match(runs, /cp \/etc\/ssl\/certs\/ca-certificates\.crt \/rootfs\/etc\/ssl\/certs\//);
    assert.match(runs, /ldd \/rootfs\/sonde\b/);
    assert.match(
      args(runtime, 'ENV').join(' '),
      /NODE_EXTRA_CA_CERTS=\/etc\/ssl\/certs\/ca-certificates\.crt/,
    );
  });

  it('runs as a numeric user that is not root, the executable on /etc/sonde/sonde.yaml', () => {
    const user = args(runtime, 'USER').at(-1) ?? '';
    assert.match(user, /^\d+:\d+$/, 'numeric: the image has no /etc/passwd');
    assert.doesNotMatch(user, /^0(:|$)/);
    assert.deepEqual(JSON.parse(args(runtime, 'ENTRYPOINT')[0] ?? '[]'), ['/sonde']);
    assert.deepEqual(JSON.parse(args(runtime, 'CMD')[0] ?? '[]'), ['--config', '/etc/sonde/sonde.yaml']);
  });

  it('documents the read-only root file system', () => {
    assert.match(text, /--read-only/);
    assert.match(text, /readOnlyRootFilesystem: true/);
  });

  it('checks health with the executable itself: sonde healthcheck passes on a running API and fails without one', async () => {
    const [check] = args(runtime, 'HEALTHCHECK');
    assert.ok(check, 'HEALTHCHECK in the runtime stage');
    const cmd = JSON.parse(check.slice(check.indexOf('CMD ') + 4)) as string[];
    assert.deepEqual(cmd, ['/sonde', 'healthcheck']);
    assert.match(args(runtime, 'ENV').join(' '), /SONDE_HEALTHZ=http:\/\/127\.0\.0\.1:7522\/healthz\b/);
    const agent = await startAgent(
      'api:\n  bind: {{API}}\nmonitor-loader:\n  local:\n    disable-auto: true\n',
    );
    try {
      const env = { ...process.env, SONDE_HEALTHZ: `${agent.base}/healthz` };
      const ok = await run(process.execPath, sondeArgv(cmd.slice(1)), { env });
      assert.equal(ok.stderr, '');
    } finally {
      await agent.stop();
    }
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => resolve(port));
      });
    });
    const env = { ...process.env, SONDE_HEALTHZ: `http://127.0.0.1:${closed}/healthz` };
    await assert.rejects(run(process.execPath, sondeArgv(cmd.slice(1)), { env }), (err: unknown) => {
      const e = err as { code?: number; stderr?: string };
      assert.equal(e.code, 1);
      assert.match(
        e.stderr ?? '',
        new RegExp(`^sonde healthcheck: http://127\\.0\\.0\\.1:${closed}/healthz: `),
      );
      return true;
    });
  });
});
