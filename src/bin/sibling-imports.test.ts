import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { siblingResolve } from './sibling-imports.js';

const DIR = 'file:///opt/sonde/dist/bundle/bin/';

/** What the hook answers, or `next` when it leaves the specifier to Node. */
function resolve(specifier: string, parentURL: string | undefined): string {
  const r = siblingResolve(DIR)(specifier, { parentURL }, (s) => ({ url: `next:${s}` }));
  return r.url.startsWith('next:') ? 'next' : `${r.url} ${String(r.format)}`;
}

describe('imports between the bundle’s files', () => {
  it('resolve beside the importer, as ES modules', () => {
    assert.equal(resolve('./chunk-AB12.js', `${DIR}sonde.js`), `${DIR}chunk-AB12.js module`);
    assert.equal(resolve('./cli-X.js', `${DIR}chunk-AB12.js`), `${DIR}cli-X.js module`);
  });

  it('leave every other import to Node', () => {
    assert.equal(resolve('node:fs', `${DIR}sonde.js`), 'next');
    assert.equal(resolve('mysql2/promise', `${DIR}sonde.js`), 'next');
    assert.equal(resolve('./x.json', `${DIR}sonde.js`), 'next', 'not a .js file');
    assert.equal(resolve('./sub/x.js', `${DIR}sonde.js`), 'next', 'another directory');
    assert.equal(resolve('../x.js', `${DIR}sonde.js`), 'next');
    assert.equal(resolve('./x.js', 'file:///etc/sonde/plugins/p.js'), 'next', 'a plugin’s own import');
    assert.equal(resolve('./x.js', `${DIR}sub/y.js`), 'next', 'from a file below the directory');
    assert.equal(resolve('./x.js', undefined), 'next', 'the entry itself');
  });
});
