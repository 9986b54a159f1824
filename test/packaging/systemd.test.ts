/**
 * deploy/sonde.service: the hardening the docs promise, and systemd's own checks
 * (`systemd-analyze verify` and the offline `security` score) find nothing to object to.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BIN, ROOT } from '../helpers/agent.js';

const run = promisify(execFile);
const UNIT = join(ROOT, 'deploy/sonde.service');

/** `[Service]` settings, each key with every value it is given. */
function serviceSettings(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1] ?? '';
      continue;
    }
    const eq = line.indexOf('=');
    if (section !== 'Service' || eq < 0) continue;
    const key = line.slice(0, eq);
    out.set(key, [...(out.get(key) ?? []), line.slice(eq + 1)]);
  }
  return out;
}

/** What `systemd-analyze verify` says about a unit file: its lines that name the unit. */
async function verify(path: string, name: string): Promise<string[]> {
  const r = await run('systemd-analyze', ['verify', path]).catch(
    (err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
  );
  return `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes(name));
}

describe('deploy/sonde.service', () => {
  let text: string;
  let dir: string;

  before(async () => {
    text = await readFile(UNIT, 'utf8');
    dir = await mkdtemp(join(tmpdir(), 'sonde-unit-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The unit with ExecStart's program replaced by this checkout's (verify wants it to exist). */
  async function localCopy(name: string, edit: (s: string) => string = (s) => s): Promise<string> {
    const path = join(dir, name);
    const local = text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath} ${BIN}`);
    assert.notEqual(local, text, 'ExecStart rewritten');
    await writeFile(path, edit(local));
    return path;
  }

  it('runs sonde with /etc/sonde/sonde.yaml, reloads with SIGHUP, restarts on failure', () => {
    const s = serviceSettings(text);
    assert.match(s.get('ExecStart')?.[0] ?? '', /\/sonde --config \/etc\/sonde\/sonde\.yaml$/);
    assert.deepEqual(s.get('ExecReload'), ['/bin/kill -HUP $MAINPID']);
    assert.deepEqual(s.get('Restart'), ['on-failure']);
  });

  it('is hardened: throwaway user, no capabilities, read-only system, no home, private /tmp', () => {
    const s = serviceSettings(text);
    const want: Record<string, string> = {
      DynamicUser: 'yes',
      NoNewPrivileges: 'yes',
      CapabilityBoundingSet: '',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
    };
    for (const [key, value] of Object.entries(want)) assert.deepEqual(s.get(key), [value], key);
    assert.equal(s.get('ReadWritePaths'), undefined, 'sonde writes no file');
    assert.equal(s.get('User'), undefined, 'no fixed user next to DynamicUser');
  });

  it('passes systemd-analyze verify without a warning', async () => {
    assert.deepEqual(await verify(await localCopy('sonde.service'), 'sonde.service'), []);
  });

  it('(the verify check sees a bad setting)', async () => {
    const bad = await localCopy('bad.service', (s) =>
      s.replace('ProtectSystem=strict', 'ProtectSystem=strictest'),
    );
    const lines = await verify(bad, 'bad.service');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /ProtectSystem|protect system/i);
  });

  it('scores as exposed as at most 2.0 in systemd-analyze security', async () => {
    const path = await localCopy('sonde.service');
    const r = await run('systemd-analyze', ['security', '--offline=true', '--threshold=20', path]);
    const level = /Overall exposure level for \S+: (\d+\.\d)/.exec(r.stdout)?.[1];
    assert.ok(level !== undefined, r.stdout);
    assert.ok(Number(level) <= 2, `exposure ${level}`);
  });
});
