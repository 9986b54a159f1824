/**
 * The Dockerfile, read statically (no Docker engine here): two stages on a Node LTS image,
 * the runtime one slim, with the production dependencies only, a user that is not root, and
 * a healthcheck whose command is run here against a real sonde.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, binNodeFlags, startAgent } from '../helpers/agent.js';
import { args, stages, type Stage } from '../helpers/dockerfile.js';

const run = promisify(execFile);

/** Node lines with long-term support that sonde runs on. */
const NODE_LTS = ['22', '24'];

describe('Dockerfile', () => {
  let text: string;
  let build: Stage;
  let runtime: Stage;

  before(async () => {
    text = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    const all = stages(text);
    assert.equal(all.length, 2, 'a build stage and a runtime stage');
    [build, runtime] = all as [Stage, Stage];
  });

  it('builds on the full Node LTS image and runs on its slim variant, both the same major', () => {
    const major = (image: string): string | undefined => /^node:(\d+)-[a-z]+(-slim)?$/.exec(image)?.[1];
    assert.ok(NODE_LTS.includes(major(build.image) ?? ''), `build image ${build.image}`);
    assert.equal(major(runtime.image), major(build.image));
    assert.match(runtime.image, /-slim$/);
    assert.doesNotMatch(build.image, /slim|alpine/);
  });

  it('compiles and packs in the build stage; the runtime gets the pack and production dependencies', () => {
    const buildRuns = args(build, 'RUN').join(' ');
    assert.match(buildRuns, /npm ci\b(?![^&]*--omit=dev)/);
    assert.match(buildRuns, /npm pack\b/);
    assert.ok(
      args(runtime, 'COPY').some((c) => c.startsWith(`--from=${build.name} `)),
      'runtime copies from the build stage',
    );
    assert.match(args(runtime, 'RUN').join(' '), /npm ci --omit=dev\b/);
  });

  it('runs as a user that is not root, the packed command with its Node flags, on /etc/sonde/sonde.yaml', async () => {
    const users = args(runtime, 'USER');
    assert.ok(users.length > 0, 'USER set');
    assert.doesNotMatch(users.at(-1) ?? '', /^(root|0)(:|$)/);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: { sonde: string } };
    const entry = JSON.parse(args(runtime, 'ENTRYPOINT')[0] ?? '[]') as string[];
    // The same Node flags as the bin's own `#!/usr/bin/env -S node …` line.
    assert.deepEqual(entry, ['node', ...binNodeFlags(), join('/app', pkg.bin.sonde)]);
    assert.ok(binNodeFlags().length > 0, 'the bin names its Node flags');
    assert.deepEqual(JSON.parse(args(runtime, 'CMD')[0] ?? '[]'), ['--config', '/etc/sonde/sonde.yaml']);
  });

  it('checks health with node on /healthz, never with curl or wget', () => {
    const [check] = args(runtime, 'HEALTHCHECK');
    assert.ok(check, 'HEALTHCHECK in the runtime stage');
    assert.match(check, /CMD \["node", "-e", /);
    const instructions = stages(text).flatMap((st) => st.steps.map((i) => i.args));
    assert.doesNotMatch(instructions.join('\n'), /\b(curl|wget)\b/);
    assert.match(args(runtime, 'ENV').join(' '), /SONDE_HEALTHZ=http:\/\/127\.0\.0\.1:7522\/healthz\b/);
  });

  it("the healthcheck command passes on a running sonde's API and fails without one", async () => {
    const check = args(runtime, 'HEALTHCHECK')[0] ?? '';
    const cmd = JSON.parse(check.slice(check.indexOf('CMD ') + 4)) as string[];
    const [node, ...rest] = cmd;
    assert.equal(node, 'node');
    const agent = await startAgent(
      'api:\n  bind: {{API}}\nmonitor-loader:\n  local:\n    disable-auto: true\n',
    );
    try {
      const env = { ...process.env, SONDE_HEALTHZ: `${agent.base}/healthz` };
      await run(process.execPath, rest, { env });
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
    await assert.rejects(run(process.execPath, rest, { env }), { code: 1 });
  });
});

describe('.dockerignore', () => {
  it('keeps the checkout’s node_modules, dist and .git out of the build', async () => {
    const lines = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim());
    for (const p of ['node_modules', 'dist', '.git']) assert.ok(lines.includes(p), p);
  });
});
