/**
 * The test suite runs next to a running sonde (the demo, a service): with another process
 * holding sonde's default ports, 127.0.0.1:7522 (API) and 127.0.0.1:9104 (exporter), the
 * CLI's tests still pass. Run in a network namespace of its own (unshare), so the test holds
 * those ports without taking them from anyone on the machine; skipped where unshare is
 * refused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers/agent.js';

/** sonde's default listeners. */
const DEFAULT_PORTS = [7522, 9104];

/** The test files whose sonde runs rely on built-in defaults the most. */
const FILES = ['dist/test/e2e/cli.test.js'];

/** Node code run inside the namespace: hold the ports, run the tests, exit with their code. */
const HOLD_AND_RUN = `
const net = require('node:net');
const { spawnSync } = require('node:child_process');
const ports = ${JSON.stringify(DEFAULT_PORTS)};
let held = 0;
for (const p of ports)
  net.createServer().listen(p, '127.0.0.1', () => {
    if (++held < ports.length) return;
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=dot', ...process.argv.slice(1)], {
      stdio: 'inherit',
    });
    process.exit(r.status ?? 1);
  });
`;

function namespaceWorks(): boolean {
  const r = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
  return r.status === 0;
}

describe('tests next to a running sonde', () => {
  it('pass while another process holds 127.0.0.1:7522 and 127.0.0.1:9104', (t) => {
    if (!namespaceWorks()) return t.skip('unshare -rn is not allowed here');
    // A test runner of its own: NODE_TEST_CONTEXT would make it report to this one.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const r = spawnSync(
      'unshare',
      [
        '-rn',
        'sh',
        '-c',
        'ip link set lo up && exec "$0" "$@"',
        process.execPath,
        '-e',
        HOLD_AND_RUN,
        ...FILES.map((f) => join(ROOT, f)),
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 240_000, env },
    );
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  });
});
