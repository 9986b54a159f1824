/**
 * The config schema's checker on decoded values: what it keeps, what it reports and in which
 * order (decode.ts picks the earliest line, and on one line the first problem reported).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema, monitorSchema, YamlBool } from '../core/config-schema.js';
import { checkSchema, isPlainMap } from './schema-check.js';

/** A decoded mapping as decode.ts builds it: own keys defined, `__proto__` a plain key. */
function mapping(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true });
  return out;
}

describe('checkSchema: values', () => {
  it('keeps the schema order of keys and leaves out keys that are not set', () => {
    const r = checkSchema(configSchema, {
      tags: { env: 'prod' },
      api: { 'read-only': new YamlBool(true, 'yes'), bind: '127.0.0.1:7522', disable: null },
    });
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && r.value, {
      api: { bind: '127.0.0.1:7522', 'read-only': true },
      tags: { env: 'prod' },
    });
    assert.deepEqual(Object.keys((r.ok && (r.value as { api: object }).api) || {}), ['bind', 'read-only']);
  });

  it('reads a YAML boolean as its text for a string key, null in a map or list as ""', () => {
    const r = checkSchema(monitorSchema, {
      hostname: new YamlBool(true, 'on'),
      tags: { a: null, b: new YamlBool(false, 'no') },
      sinks: { log: null, noop: { x: null } },
    });
    assert.deepEqual(r.ok && r.value, {
      hostname: 'on',
      tags: { a: '', b: 'no' },
      sinks: { log: {}, noop: { x: '' } },
    });
  });

  it('follows plans.monitor and a monitor’s plans (the two sections refer to each other)', () => {
    const r = checkSchema(configSchema, { plans: { monitor: { plans: { files: ['a.yaml', null] } } } });
    assert.deepEqual(r.ok && r.value, { plans: { monitor: { plans: { files: ['a.yaml', ''] } } } });
  });

  it('drops a map key named __proto__ and keeps `constructor` as a key', () => {
    const r = checkSchema(configSchema, {
      tags: mapping([
        ['__proto__', 'x'],
        ['constructor', 'y'],
      ]),
    });
    assert.equal(r.ok, true);
    const tags = r.ok ? (r.value as { tags: Record<string, string> }).tags : {};
    assert.deepEqual(Object.keys(tags), ['constructor']);
    assert.equal(Object.getPrototypeOf(tags), Object.prototype);
  });
});

describe('checkSchema: problems', () => {
  it('reports every problem with its key path: known keys in schema order, then unknown keys', () => {
    const r = checkSchema(configSchema, {
      zzz: 1,
      tls: { disable: 'yes', bogus: '' },
      api: { bind: ['a'], bnd: 'x', 'read-only': 'true' },
      monitors: [null, { hostname: {} }],
    });
    assert.equal(r.ok, false);
    assert.deepEqual(!r.ok && r.issues, [
      { code: 'invalid_type', path: ['api', 'bind'], expected: 'string' },
      { code: 'invalid_type', path: ['api', 'read-only'], expected: 'boolean' },
      { code: 'unrecognized_keys', path: ['api'], keys: ['bnd'] },
      { code: 'invalid_type', path: ['tls', 'disable'], expected: 'boolean' },
      { code: 'unrecognized_keys', path: ['tls'], keys: ['bogus'] },
      { code: 'invalid_type', path: ['monitors', 0], expected: 'object' },
      { code: 'invalid_type', path: ['monitors', 1, 'hostname'], expected: 'string' },
      { code: 'unrecognized_keys', path: [], keys: ['zzz'] },
    ]);
  });

  it('takes any object as a section but only a plain one as a map', () => {
    const bool = new YamlBool(true, 'yes');
    const r = checkSchema(configSchema, { api: bool, tags: bool, monitors: 'db1' });
    assert.deepEqual(!r.ok && r.issues, [
      { code: 'unrecognized_keys', path: ['api'], keys: ['value', 'text'] },
      { code: 'invalid_type', path: ['tags'], expected: 'record' },
      { code: 'invalid_type', path: ['monitors'], expected: 'array' },
    ]);
  });

  it('reports a __proto__ key of a section as unknown', () => {
    const r = checkSchema(configSchema, { api: mapping([['__proto__', 'x']]) });
    assert.deepEqual(!r.ok && r.issues, [{ code: 'unrecognized_keys', path: ['api'], keys: ['__proto__'] }]);
  });
});

describe('isPlainMap', () => {
  it('is true for {} and Object.create(null), even with a `constructor` key of any value', () => {
    assert.equal(isPlainMap({}), true);
    assert.equal(isPlainMap(Object.create(null)), true);
    assert.equal(isPlainMap({ constructor: 'x' }), true);
    assert.equal(isPlainMap({ constructor: Object }), true);
  });

  it('is false for arrays, null, class instances and a constructor without a usual prototype', () => {
    assert.equal(isPlainMap([]), false);
    assert.equal(isPlainMap(null), false);
    assert.equal(isPlainMap(new YamlBool(true, 'yes')), false);
    assert.equal(isPlainMap({ constructor: function f() {} }), false);
  });
});
