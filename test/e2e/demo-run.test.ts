/**
 * The demo as the README runs it (scripts/demo.mjs, on free ports): once the agent answers,
 * its last lines say where the web page is and which curl commands to try, and nothing
 * follows them while it collects (the demo's sink is quiet; the page and /metrics show the
 * values). Ctrl-C stops it with exit 0.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../helpers/agent.js';
import { freePort } from '../helpers/mariadb.js';

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe('npm run demo', { timeout: 120_000 }, () => {
  it('points to the web page and the curl commands after the start, then stays quiet', async () => {
    const api = `127.0.0.1:${await freePort()}`;
    const exporter = `127.0.0.1:${await freePort()}`;
    const proc = spawn(process.execPath, ['scripts/demo.mjs'], {
      cwd: ROOT,
      env: { ...process.env, SONDE_DEMO_API: api, SONDE_DEMO_EXPORTER: exporter },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      await until('the banner', async () => (out.includes('curl -s') ? true : undefined), 60_000);
      await sleep(300); // the rest of the banner
      assert.match(out, new RegExp(`The web page: http://${api.replaceAll('.', '\\.')}/\n`));
      for (const cmd of [
        `curl -s ${api}/status/monitors`,
        `curl -s ${api}/monitors`,
        `curl -s ${exporter}/metrics`,
      ])
        assert.ok(out.includes(cmd), cmd);
      const banner = out.length;
      // Several collections later, nothing was printed after the banner.
      const status = async (): Promise<Record<string, string>> =>
        (
          (await (await fetch(`http://${api}/status/monitors`)).json()) as Record<
            string,
            Record<string, string>
          >
        ).demo ?? {};
      const first = await until('a collection', async () => (await status())['level-collect'], 30_000);
      await until(
        'two more collections',
        async () => {
          const now = (await status())['level-collect'];
          return now !== undefined && now !== first ? now : undefined;
        },
        30_000,
      );
      const metrics = await (await fetch(`http://${exporter}/metrics`)).text();
      assert.match(metrics, /^mysql_up 1$/m);
      assert.equal(out.slice(banner), '', 'printed after the banner');
    } finally {
      proc.kill('SIGINT');
    }
    assert.equal(await exited, 0, out);
  });
});
