import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isExporterProgram, plainVersionAsked } from './early.js';

describe('plain --version, answered by the entry', () => {
  it('is --version or -v alone under sonde’s name', () => {
    assert.equal(plainVersionAsked(['--version'], '/usr/bin/sonde', {}), true);
    assert.equal(plainVersionAsked(['-v'], '/app/dist/bundle/bin/sonde.js', {}), true);
    assert.equal(plainVersionAsked(['--version'], undefined, { SONDE_CONFIG: '/etc/x.yaml' }), true);
  });

  it('leaves anything else to the full command line', () => {
    assert.equal(plainVersionAsked([], '/usr/bin/sonde', {}), false);
    assert.equal(plainVersionAsked(['--version', '--debug'], '/usr/bin/sonde', {}), false);
    assert.equal(plainVersionAsked(['check', '--version'], '/usr/bin/sonde', {}), false);
    assert.equal(plainVersionAsked(['--version=true'], '/usr/bin/sonde', {}), false);
    // mysqld_exporter's names print mysqld_exporter's version line.
    assert.equal(plainVersionAsked(['--version'], '/usr/bin/mysqld_exporter', {}), false);
    assert.equal(plainVersionAsked(['--version'], '/usr/bin/prometheus-mysqld-exporter', {}), false);
  });

  it('leaves it to the full command line when a variable it checks is set (a bad one fails the start)', () => {
    for (const name of [
      'SONDE_DEBUG',
      'BLIP_DEBUG',
      'SONDE_LOG',
      'BLIP_RUN',
      'SONDE_LOG_LEVEL',
      'SONDE_LOG_FORMAT',
    ])
      assert.equal(plainVersionAsked(['--version'], '/usr/bin/sonde', { [name]: 'x' }), false, name);
    assert.equal(
      plainVersionAsked(['--version'], '/usr/bin/sonde', { SONDE_DEBUG: '' }),
      true,
      'empty = unset',
    );
  });

  it('knows mysqld_exporter’s program names, with or without a .js suffix', () => {
    assert.equal(isExporterProgram('/usr/bin/mysqld_exporter'), true);
    assert.equal(isExporterProgram('/x/prometheus-mysqld-exporter.js'), true);
    assert.equal(isExporterProgram('/usr/bin/sonde'), false);
    assert.equal(isExporterProgram(''), false);
  });
});
