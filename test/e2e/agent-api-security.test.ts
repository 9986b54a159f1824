/**
 * The built agent's API protections as a user configures them: the bearer token file, TLS
 * with a client CA, the method, cross-site and Host rules, the probes, and the boot errors
 * for files that cannot be read. No database is needed: the one monitor points at a closed
 * port.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../helpers/mariadb.js';
import { runSonde, sondeArgv, startAgent, writeConfig, type Agent } from '../helpers/agent.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';
import { httpCall, type Answer } from '../helpers/http-call.js';

const TOKEN = 'e2e-Token-7f3a9c';

/** One request; with `tls`, HTTPS verified by the test CA, and a client certificate when asked. */
function send(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; tls?: TlsFiles; clientCert?: boolean } = {},
): Promise<Answer> {
  const tls = o.tls;
  return httpCall(port, path, {
    ...(o.method === undefined ? {} : { method: o.method }),
    ...(o.headers === undefined ? {} : { headers: o.headers }),
    ...(tls === undefined
      ? {}
      : {
          tls: {
            ca: readFileSync(tls.ca),
            ...(o.clientCert ? { cert: readFileSync(tls.cert), key: readFileSync(tls.key) } : {}),
          },
        }),
  });
}

async function monitorsYaml(): Promise<string> {
  return `monitors:\n  - id: m1\n    hostname: 127.0.0.1:${await freePort()}\n    username: sonde\n`;
}

describe('agent API protections', () => {
  let agent: Agent;
  const bearer = { authorization: `Bearer ${TOKEN}` };

  before(async () => {
    agent = await startAgent(`api:\n  bind: {{API}}\n  token-file: token\n${await monitorsYaml()}`, {
      files: { token: `${TOKEN}\n` },
      headers: bearer,
    });
  });

  after(async () => {
    await agent?.stop();
  });

  it('answers 401 without the token, 200 with it, and leaves the probes open', async () => {
    const bare = await send(agent.port, '/status');
    assert.equal(bare.status, 401);
    assert.equal(bare.headers['www-authenticate'], 'Bearer');
    assert.equal(bare.body, 'unauthorized: missing or wrong bearer token\n');
    assert.equal((await send(agent.port, '/status', { headers: bearer })).status, 200);
    assert.equal((await send(agent.port, '/healthz')).body, 'ok\n');
    const ready = await agent.until('ready', async () => {
      const r = await send(agent.port, '/readyz');
      return r.status === 200 ? r : undefined;
    });
    assert.equal(ready.body, 'ready\n');
  });

  it('refuses GET, cross-site POSTs and foreign Host headers on state changes, and changes nothing', async () => {
    const get = await send(agent.port, '/monitors/stop?id=m1', { headers: bearer });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    const evil = await send(agent.port, '/monitors/stop?id=m1', {
      method: 'POST',
      headers: { ...bearer, origin: 'http://evil.example', 'content-type': 'text/plain' },
    });
    assert.equal(evil.status, 403);
    assert.equal(evil.body, 'cross-origin request refused: Origin is not this server\n');
    const rebound = await send(agent.port, '/monitors/stop?id=m1', {
      method: 'POST',
      headers: { ...bearer, host: `rebound.example:${agent.port}` },
    });
    assert.equal(rebound.status, 421);
    const st = await agent.monitorsStatus();
    assert.doesNotMatch(st.m1?.monitor ?? '', /^stopped/);
    const ok = await send(agent.port, '/monitors/stop?id=m1', { method: 'POST', headers: bearer });
    assert.equal(ok.status, 200);
  });

  it('takes a rotated token from the file without a restart', async () => {
    writeFileSync(join(agent.dir, 'token'), 'rotated-Token-2\n');
    const next = { authorization: 'Bearer rotated-Token-2' };
    await agent.until(
      'new token accepted',
      async () => (await send(agent.port, '/status', { headers: next })).status === 200,
    );
    assert.equal((await send(agent.port, '/status', { headers: bearer })).status, 401);
    writeFileSync(join(agent.dir, 'token'), `${TOKEN}\n`);
    await agent.until(
      'first token back',
      async () => (await send(agent.port, '/status', { headers: bearer })).status === 200,
    );
  });
});

describe('agent API over TLS', () => {
  let tls: TlsFiles;
  before(() => {
    tls = makeTlsFiles();
  });
  after(() => {
    rmSync(tls.dir, { recursive: true, force: true });
  });

  it('serves HTTPS and requires a client certificate when api.tls.client-ca is set', async () => {
    const port = await freePort();
    const [dir, path] = writeConfig(
      `api:\n  bind: 127.0.0.1:${port}\n  tls:\n    cert: ${tls.cert}\n    key: ${tls.key}\n    client-ca: ${tls.ca}\n${await monitorsYaml()}`,
    );
    const proc = spawn(process.execPath, sondeArgv(['--config', path]), { cwd: dir, stdio: 'ignore' });
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      let answer: Answer | undefined;
      for (let i = 0; i < 200 && answer === undefined; i++) {
        answer = await send(port, '/version', { tls, clientCert: true }).catch(() => undefined);
        if (answer === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(answer?.status, 200);
      assert.match(answer?.body ?? '', /^v\d+\.\d+\.\d+/);
      await assert.rejects(send(port, '/version', { tls }));
      await assert.rejects(send(port, '/version'));
    } finally {
      proc.kill('SIGTERM');
      assert.equal(await exited, 0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('agent API boot errors', () => {
  it('refuses to boot when a token or certificate file cannot be read, naming the key and the file', async () => {
    const cases: [string, string, RegExp][] = [
      ['token-file: missing-token', '', /api\.token-file: cannot read token file missing-token: ENOENT/],
      ['token-file: empty-token', 'empty-token', /api\.token-file: token file empty-token is empty/],
      [
        'tls:\n    cert: no-cert.pem\n    key: no-key.pem',
        '',
        /api\.tls\.cert: cannot read no-cert\.pem: ENOENT/,
      ],
    ];
    for (const [apiKeys, emptyFile, message] of cases) {
      const port = await freePort();
      const [dir, path] = writeConfig(
        `api:\n  bind: 127.0.0.1:${port}\n  ${apiKeys}\n${await monitorsYaml()}`,
      );
      if (emptyFile !== '') writeFileSync(join(dir, emptyFile), '\n');
      try {
        const res = await runSonde(['--config', path], { cwd: dir });
        assert.equal(res.code, 1, res.stderr);
        assert.match(res.stderr, /server\.Boot failed: /);
        assert.match(res.stderr, message);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
