/**
 * What an installed sonde reads: the example config (loaded and its monitors finalized by
 * the real code) and the default search path when no file is named.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { DEFAULT_CONFIG_FILES, loadConfig } from '../../src/config/load.js';
import { finalizeMonitors, validateMonitor } from '../../src/config/monitor.js';
import { ROOT } from '../helpers/agent.js';

const EXAMPLE = join(ROOT, 'examples/sonde.yaml');

describe('examples/sonde.yaml', () => {
  it('loads, and its monitor gets the documented defaults', async () => {
    const { config, path } = await loadConfig(EXAMPLE, { env: {} });
    assert.equal(path, EXAMPLE);
    assert.equal(config.api?.bind, '127.0.0.1:7522');
    assert.equal(config['monitor-loader']?.local?.['disable-auto'], true);
    const monitors = finalizeMonitors(config.monitors ?? [], config, {});
    assert.deepEqual(
      monitors.map((m) => m.id),
      ['local'],
    );
    const m = monitors[0];
    assert.ok(m);
    validateMonitor(m);
    assert.equal(m.socket, '/run/mysqld/mysqld.sock');
    assert.equal(m.username, 'sonde');
    assert.equal(m['password-file'], '/etc/sonde/password');
    assert.equal(m.exporter?.mode, 'dual');
    assert.equal(m.exporter?.flags?.['web.listen-address'], '127.0.0.1:9104');
  });

  it('listens on every interface with the variable the container image sets', async () => {
    const env = { SONDE_EXPORTER_HOST: '0.0.0.0' };
    const { config } = await loadConfig(EXAMPLE, { env });
    const [m] = finalizeMonitors(config.monitors ?? [], config, env);
    assert.equal(m?.exporter?.flags?.['web.listen-address'], '0.0.0.0:9104');
  });
});

describe('default config search path', () => {
  let root: string;
  /** The default list with the system-wide file moved under a temp root. */
  let search: string[];
  const yaml = (host: string): string => `mysql:\n  hostname: ${host}\n`;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sonde-search-'));
    search = DEFAULT_CONFIG_FILES.map((f) => (isAbsolute(f) ? join(root, f) : f));
    await mkdir(join(root, 'etc/sonde'), { recursive: true });
    await writeFile(join(root, 'etc/sonde/sonde.yaml'), yaml('from-etc'));
  });

  it('is ./sonde.yaml, ./blip.yaml, then /etc/sonde/sonde.yaml', () => {
    assert.deepEqual(DEFAULT_CONFIG_FILES, ['sonde.yaml', 'blip.yaml', '/etc/sonde/sonde.yaml']);
  });

  it('reads /etc/sonde/sonde.yaml when the working directory has no config', async () => {
    const cwd = await mkdtemp(join(root, 'empty-'));
    const r = await loadConfig(undefined, { cwd, env: {}, search });
    assert.equal(r.path, join(root, 'etc/sonde/sonde.yaml'));
    assert.equal(r.config.mysql?.hostname, 'from-etc');
  });

  it('prefers ./sonde.yaml, then ./blip.yaml, over /etc/sonde/sonde.yaml', async () => {
    const cwd = await mkdtemp(join(root, 'both-'));
    await writeFile(join(cwd, 'blip.yaml'), yaml('from-blip'));
    assert.equal((await loadConfig(undefined, { cwd, env: {}, search })).config.mysql?.hostname, 'from-blip');
    await writeFile(join(cwd, 'sonde.yaml'), yaml('from-cwd'));
    const r = await loadConfig(undefined, { cwd, env: {}, search });
    assert.equal(r.path, join(cwd, 'sonde.yaml'));
    assert.equal(r.config.mysql?.hostname, 'from-cwd');
  });

  it('never searches for a file named explicitly (as Blip): a missing one fails', async () => {
    const cwd = await mkdtemp(join(root, 'named-'));
    await assert.rejects(loadConfig('sonde.yaml', { cwd, env: {}, search }), {
      message: 'config file sonde.yaml does not exist',
    });
  });

  it('runs on the defaults when no file on the path exists', async () => {
    const cwd = await mkdtemp(join(root, 'none-'));
    const r = await loadConfig(undefined, { cwd, env: {}, search: ['sonde.yaml', join(root, 'nope.yaml')] });
    assert.equal(r.path, undefined);
    assert.equal(r.config.mysql?.hostname, undefined);
  });
});
