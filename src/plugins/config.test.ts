/**
 * The `plugins` key of the config file: a list of strings at top level only, `${ENV}`
 * interpolated, printed by --print-config and GET /config.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../config/load.js';
import { renderConfigYaml } from '../config/render.js';

describe('config key plugins', () => {
  it('is a list of strings, ${ENV} interpolated, and printed with the config', () => {
    const c = parseConfig('plugins: [./a.js, "${PDIR}/b.js", sonde-plugin-x]\n', { env: { PDIR: '/opt/p' } });
    assert.deepEqual(c.plugins, ['./a.js', '/opt/p/b.js', 'sonde-plugin-x']);
    assert.match(
      renderConfigYaml(c),
      /^plugins:\n {2}- \.\/a\.js\n {2}- \/opt\/p\/b\.js\n {2}- sonde-plugin-x\n/m,
    );
  });

  it('refuses a scalar, a non-string entry, and the key inside a monitor', () => {
    assert.throws(() => parseConfig('plugins: ./a.js\n'), {
      message:
        'cannot decode YAML in <config>: line 1: wrong type for key plugins: expected list, got string',
    });
    assert.throws(() => parseConfig('plugins: [{a: 1}]\n'), {
      message:
        'cannot decode YAML in <config>: line 1: wrong type for key plugins[0]: expected string, got mapping',
    });
    assert.throws(() => parseConfig('monitors:\n  - id: x\n    plugins: [a]\n'), {
      message: 'cannot decode YAML in <config>: line 3: unknown key monitors[0].plugins',
    });
  });

  it('an unset variable in an entry names the entry', () => {
    assert.throws(() => parseConfig('plugins: ["${NOPE_DIR}/x.js"]\n', { env: {} }), /plugins\[0\]/);
  });
});
