import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeServer, parseServerVersion, versionAtLeast } from './flavor.js';

void describe('parseServerVersion', () => {
  const cases: [string, 'mysql' | 'mariadb', [number, number, number]][] = [
    ['10.11.19-MariaDB-0+deb12u1-log', 'mariadb', [10, 11, 19]],
    ['10.11.6-MariaDB', 'mariadb', [10, 11, 6]],
    ['5.5.5-10.11.6-MariaDB-log', 'mariadb', [10, 11, 6]],
    ['11.4.2-mariadb', 'mariadb', [11, 4, 2]],
    ['8.0.36', 'mysql', [8, 0, 36]],
    ['8.4.0', 'mysql', [8, 4, 0]],
    ['5.7.44-log', 'mysql', [5, 7, 44]],
    ['8.0.35-27', 'mysql', [8, 0, 35]],
    ['8.0.28+ubuntu', 'mysql', [8, 0, 28]],
    ['8.0', 'mysql', [0, 0, 0]],
    ['8.0.36.1', 'mysql', [0, 0, 0]],
    ['', 'mysql', [0, 0, 0]],
  ];
  for (const [text, flavor, version] of cases) {
    void it(`reads ${JSON.stringify(text)} as ${flavor} ${version.join('.')}`, () => {
      assert.deepEqual(parseServerVersion(text), { flavor, version, versionString: text });
    });
  }
});

void describe('versionAtLeast', () => {
  void it('compares the numeric triple', () => {
    const v = parseServerVersion('8.0.22');
    assert.equal(versionAtLeast(v, 8, 0, 22), true);
    assert.equal(versionAtLeast(v, 8, 0, 23), false);
    assert.equal(versionAtLeast(v, 8), true);
    assert.equal(versionAtLeast(v, 8, 1), false);
    assert.equal(versionAtLeast(v, 5, 7, 99), true);
    assert.equal(versionAtLeast(v, 9), false);
  });
});

void describe('describeServer', () => {
  void it('names flavor and version', () => {
    assert.equal(describeServer(parseServerVersion('10.11.19-MariaDB-log')), 'mariadb 10.11.19');
  });
});
