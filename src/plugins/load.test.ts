/**
 * loadPlugins against real module files written to a temp directory and imported by Node:
 * a good plugin's collectors, sinks and translators land in the registries; every bad shape,
 * taken name and unresolvable entry fails with one line naming the entry.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { builtinCollectors } from '../collectors/builtin.js';
import { builtinSinks } from '../sinks/builtin.js';
import type { SinkTranslator } from '../core/sink.js';
import { SondeError } from '../core/errors.js';
import { parsePlan, validatePlans } from '../plan/parse.js';
import { loadPlugins, PluginError } from './load.js';

/** Repo root (this file runs from dist/src/plugins). */
const ROOT = resolve(import.meta.dirname, '../../..');
const EXAMPLE = join(ROOT, 'examples/plugins/custom-table');

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sonde-plugins-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
/** Write `text` as a module under a fresh sub-directory of the temp dir; returns that directory. */
function writeModule(name: string, text: string): string {
  const base = join(dir, `case${++seq}`);
  mkdirSync(dirname(join(base, name)), { recursive: true });
  writeFileSync(join(base, name), text);
  return base;
}

/** The source of a valid collector help object for `domain`. */
const help = (domain: string): string =>
  `{ domain: '${domain}', description: 'test domain', sources: [], options: [{ name: 'table', description: 't', default: 'x' }], errors: [], groups: [], meta: [], metrics: [] }`;
const collector = (domain: string): string => `api.collector({ help: ${help(domain)}, create: () => ({}) });`;
const sink = (name: string): string =>
  `api.sink({ name: '${name}', description: 'test sink', create: () => ({}) });`;
const plugin = (body: string): string => `export default { name: 'test', register(api) { ${body} } };\n`;

function registries(translators = new Map<string, SinkTranslator>()) {
  return { collectors: builtinCollectors(), sinks: builtinSinks(), translators };
}

/** Load `text` as ./p.js and return the error message (fails when it loads). */
async function problem(text: string, name = 'p.js'): Promise<string> {
  const baseDir = writeModule(name, text);
  const err = await loadPlugins([`./${name}`], { baseDir, ...registries() }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof PluginError, `expected a PluginError, got ${String(err)}`);
  assert.ok(err instanceof SondeError && err.code === 'CONFIG_INVALID');
  assert.doesNotMatch(err.message, /\n/);
  return err.message;
}

describe('loadPlugins: a good plugin', () => {
  it('registers the sample collector and sink where built-ins are, and plans validate against them', async () => {
    const regs = registries();
    const loaded = await loadPlugins([join(EXAMPLE, 'index.js')], { baseDir: dir, ...regs });
    assert.deepEqual(
      loaded.map((p) => [p.name, p.collectors, p.sinks, p.translators]),
      [['custom-table', ['custom.queue'], ['jsonl'], []]],
    );
    assert.ok(regs.collectors.domains().includes('custom.queue'));
    assert.ok(regs.sinks.names().includes('jsonl'));
    assert.deepEqual(
      regs.collectors.help('custom.queue').options.map((o) => o.name),
      ['table', 'name-column', 'value-column'],
    );
    const getHelp = (d: string) => (regs.collectors.has(d) ? regs.collectors.help(d) : undefined);
    const plan = (opts: string) =>
      parsePlan(
        'q',
        'q.yaml',
        `fast:\n  freq: 1s\n  collect:\n    custom.queue:\n      options: {${opts}}\n`,
      );
    validatePlans([plan('table: app.queues')], getHelp);
    assert.throws(() => validatePlans([plan('tabel: app.queues')], getHelp), /unknown option: tabel/);
  });

  it('builds the sample sink through the registry; it refuses a missing file option', async () => {
    const regs = registries();
    await loadPlugins([join(EXAMPLE, 'index.js')], { baseDir: dir, ...regs });
    const ctx = { sinkName: 'jsonl', monitorId: 'm', tags: {} } as const;
    const status = { set: () => undefined, delete: () => undefined } as never;
    const events = {} as never;
    await assert.rejects(
      regs.sinks.create('jsonl', { ...ctx, options: {}, status, events }),
      /jsonl sink: option file is required/,
    );
    const s = await regs.sinks.create('jsonl', {
      ...ctx,
      options: { file: join(dir, 'x.jsonl') },
      status,
      events,
    });
    assert.equal(s.name, 'jsonl');
  });

  it('adds translators to the map it is given', async () => {
    const translators = new Map<string, SinkTranslator>();
    const baseDir = writeModule(
      't.js',
      plugin(`api.translator('upper', (d, m) => (d + '.' + m).toUpperCase());`),
    );
    await loadPlugins(['./t.js'], { baseDir, ...registries(translators) });
    assert.equal(translators.get('upper')?.('status.global', 'queries'), 'STATUS.GLOBAL.QUERIES');
  });

  it('awaits an async register, and resolves relative paths against baseDir (./, ../, absolute)', async () => {
    const asyncPlugin = `export default { async register(api) { await Promise.resolve(); ${collector('custom.a')} } };\n`;
    const baseDir = writeModule('plugins/a.js', asyncPlugin);
    writeFileSync(join(baseDir, 'b.js'), plugin(collector('custom.b')));
    writeFileSync(join(baseDir, 'c.js'), plugin(collector('custom.c')));
    const conf = join(baseDir, 'conf');
    mkdirSync(conf);
    const regs = registries();
    await loadPlugins(['../plugins/a.js', './../b.js', join(baseDir, 'c.js')], { baseDir: conf, ...regs });
    for (const d of ['custom.a', 'custom.b', 'custom.c']) assert.ok(regs.collectors.has(d), d);
  });
});

describe('loadPlugins: packages', () => {
  it('finds a package in node_modules of baseDir or a parent (the sample, installed)', async () => {
    const base = join(dir, 'pkg1');
    cpSync(EXAMPLE, join(base, 'node_modules/sonde-plugin-custom-table'), { recursive: true });
    const conf = join(base, 'etc/sonde');
    mkdirSync(conf, { recursive: true });
    const regs = registries();
    const [p] = await loadPlugins(['sonde-plugin-custom-table'], { baseDir: conf, ...regs });
    assert.equal(p?.url, `file://${join(base, 'node_modules/sonde-plugin-custom-table/index.js')}`);
    assert.ok(regs.collectors.has('custom.queue'));
  });

  it('picks the import entry of a scoped package, a main entry, and an exported subpath', async () => {
    const base = join(dir, 'pkg2');
    const put = (rel: string, text: string) => {
      mkdirSync(dirname(join(base, rel)), { recursive: true });
      writeFileSync(join(base, rel), text);
    };
    put(
      'node_modules/@acme/sonde-x/package.json',
      JSON.stringify({ type: 'module', exports: { '.': { require: './cjs.cjs', import: './esm.js' } } }),
    );
    put('node_modules/@acme/sonde-x/cjs.cjs', 'module.exports = {};');
    put('node_modules/@acme/sonde-x/esm.js', plugin(collector('acme.x')));
    put('node_modules/sonde-y/package.json', JSON.stringify({ type: 'module', main: 'lib/main.js' }));
    put('node_modules/sonde-y/lib/main.js', plugin(sink('y')));
    put(
      'node_modules/sonde-z/package.json',
      JSON.stringify({ type: 'module', exports: { '.': './a.js', './extra': './b.js' } }),
    );
    put('node_modules/sonde-z/b.js', plugin(collector('z.extra')));
    const regs = registries();
    await loadPlugins(['@acme/sonde-x', 'sonde-y', 'sonde-z/extra'], { baseDir: base, ...regs });
    assert.ok(regs.collectors.has('acme.x'));
    assert.ok(regs.sinks.has('y'));
    assert.ok(regs.collectors.has('z.extra'));
    await assert.rejects(loadPlugins(['sonde-z/hidden'], { baseDir: base, ...registries() }), {
      message: 'plugins: sonde-z/hidden: package sonde-z does not export ./hidden',
    });
  });

  it('refuses a package.json that is not a regular file (a FIFO) without waiting for a writer', async () => {
    const base = join(dir, 'pkg-fifo');
    mkdirSync(join(base, 'node_modules/sonde-fifo'), { recursive: true });
    const pkg = join(base, 'node_modules/sonde-fifo/package.json');
    execFileSync('mkfifo', [pkg]);
    await assert.rejects(loadPlugins(['sonde-fifo'], { baseDir: base, ...registries() }), {
      message: `plugins: sonde-fifo: cannot read ${pkg}: not a regular file (a FIFO)`,
    });
  });

  it('names a package it cannot find, with a hint for a file written without ./', async () => {
    const baseDir = writeModule('mine.js', plugin(collector('custom.mine')));
    await assert.rejects(loadPlugins(['sonde-plugin-nope'], { baseDir, ...registries() }), {
      message: `plugins: sonde-plugin-nope: cannot find package sonde-plugin-nope from ${baseDir}`,
    });
    await assert.rejects(loadPlugins(['mine.js'], { baseDir, ...registries() }), {
      message: `plugins: mine.js: cannot find package mine.js from ${baseDir} (a file? write ./mine.js)`,
    });
  });
});

describe('loadPlugins: boot errors naming the module', () => {
  it('a missing file, an empty entry, an entry listed twice', async () => {
    const baseDir = writeModule('p.js', plugin(collector('custom.p')));
    await assert.rejects(loadPlugins(['./nope.js'], { baseDir, ...registries() }), {
      message: `plugins: ./nope.js: no such file: ${join(baseDir, 'nope.js')}`,
    });
    await assert.rejects(loadPlugins([''], { baseDir, ...registries() }), {
      message: 'plugins: "": empty entry (a file path or a package name)',
    });
    await assert.rejects(loadPlugins(['./p.js', join(baseDir, 'p.js')], { baseDir, ...registries() }), {
      message: `plugins: ${join(baseDir, 'p.js')}: listed twice (also as ./p.js)`,
    });
  });

  it('a module that does not import', async () => {
    assert.match(
      await problem('export default {\n  register(api) {'),
      /^plugins: \.\/p\.js: cannot import: /,
    );
    assert.match(
      await problem(`import 'sonde-plugin-missing-dep';\n${plugin(collector('custom.p'))}`),
      /^plugins: \.\/p\.js: cannot import: Cannot find package 'sonde-plugin-missing-dep'/,
    );
  });

  it('a default export that is not a plugin', async () => {
    assert.equal(
      await problem('export const register = () => {};'),
      'plugins: ./p.js: no default export (export default { name, register(api) { … } })',
    );
    assert.equal(
      await problem('export default function register() {}'),
      'plugins: ./p.js: default export is a function, not a plugin object (export default { name, register(api) { … } })',
    );
    assert.equal(
      await problem('export default { name: "x" };'),
      'plugins: ./p.js: default export has no register(api) method (export default { name, register(api) { … } })',
    );
    assert.equal(
      await problem('export default { name: 3, register() {} };'),
      'plugins: ./p.js: default export: name is not a string',
    );
  });

  it('register throwing, or registering nothing', async () => {
    assert.equal(
      await problem(plugin('throw new Error("no licence key");')),
      'plugins: ./p.js: register failed: no licence key',
    );
    assert.equal(
      await problem(plugin('')),
      'plugins: ./p.js: registers nothing (no collector, sink or translator)',
    );
  });

  it('register() that never returns fails the boot after the timeout', async () => {
    const baseDir = writeModule(
      'slow.js',
      'export default { register() { return new Promise(() => {}); } };',
    );
    const err = await loadPlugins(['./slow.js'], { baseDir, ...registries(), registerTimeoutMs: 50 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof PluginError);
    assert.equal(err.message, 'plugins: ./slow.js: register failed: did not return within 0.05s');
  });

  it('collector registrations of a bad shape', async () => {
    const bad = async (reg: string) => problem(plugin(`api.collector(${reg});`));
    const h = help('custom.q');
    assert.equal(
      await bad('null'),
      'plugins: ./p.js: collector registration is not an object ({ help, create })',
    );
    assert.equal(await bad('{ create() {} }'), 'plugins: ./p.js: collector: help is missing');
    assert.equal(
      await bad(`{ help: ${h.replace("domain: 'custom.q', ", '')}, create() {} }`),
      'plugins: ./p.js: collector: help.domain is missing',
    );
    assert.equal(
      await bad(`{ help: ${h.replace('sources: [], ', '')}, create() {} }`),
      'plugins: ./p.js: collector custom.q: help.sources is missing',
    );
    assert.equal(
      await bad(`{ help: ${h.replace("default: 'x'", 'default: 5')}, create() {} }`),
      'plugins: ./p.js: collector custom.q: help.options[0].default: expected string, received number',
    );
    assert.equal(
      await bad(
        `{ help: ${h.replace('metrics: []', "metrics: [{ name: 'n', type: 9, description: '' }]")}, create() {} }`,
      ),
      'plugins: ./p.js: collector custom.q: help.metrics[0].type: not a metric type (0, 1, 2, 3, 4, 5)',
    );
    assert.equal(
      await bad(`{ help: ${h}, create: 'no' }`),
      'plugins: ./p.js: collector custom.q: create is not a function',
    );
    assert.equal(
      await bad(`{ help: ${help('Custom Queue')}, create() {} }`),
      'plugins: ./p.js: collector Custom Queue: help.domain: not a domain name (lowercase words joined by dots, e.g. custom.queue)',
    );
    assert.equal(
      await bad(`{ help: ${help('exporter.mine')}, create() {} }`),
      "plugins: ./p.js: collector exporter.mine: help.domain: exporter.* domains are reserved for the exporter's",
    );
  });

  it('sink and translator registrations of a bad shape', async () => {
    assert.equal(
      await problem(plugin(`api.sink({ description: 'd', create() {} });`)),
      'plugins: ./p.js: sink: name is missing',
    );
    assert.equal(
      await problem(plugin(`api.sink({ name: 'My Sink', description: 'd', create() {} });`)),
      'plugins: ./p.js: sink My Sink: name: not a sink name (one lowercase word, e.g. jsonl)',
    );
    assert.equal(
      await problem(plugin(`api.sink({ name: 'x', create() {} });`)),
      'plugins: ./p.js: sink x: description is missing',
    );
    assert.equal(
      await problem(plugin(`api.sink({ name: 'x', description: 'd' });`)),
      'plugins: ./p.js: sink x: create is not a function',
    );
    assert.equal(
      await problem(plugin(`api.translator('t', 'not a function');`)),
      'plugins: ./p.js: translator t: not a function',
    );
    assert.equal(
      await problem(plugin(`api.translator('', () => '');`)),
      'plugins: ./p.js: translator: name must be a non-empty string without blanks',
    );
  });

  it('a bad registration fails the plugin even when it catches the throw', async () => {
    assert.equal(
      await problem(plugin(`try { api.sink({ name: 'x' }); } catch {} ${collector('custom.ok')}`)),
      'plugins: ./p.js: sink x: description is missing',
    );
  });

  it('names already taken by a built-in, by another plugin, or twice in one plugin', async () => {
    assert.equal(
      await problem(plugin(collector('status.global'))),
      'plugins: ./p.js: collector for domain status.global already registered (by built-in)',
    );
    assert.equal(
      await problem(plugin(sink('log'))),
      'plugins: ./p.js: sink log already registered (by built-in)',
    );
    assert.equal(
      await problem(plugin(`${collector('custom.q')} ${collector('custom.q')}`)),
      'plugins: ./p.js: collector for domain custom.q registered twice',
    );
    const baseDir = writeModule(
      'a.js',
      plugin(`${collector('custom.queue')} api.translator('t', (d) => d);`),
    );
    writeFileSync(join(baseDir, 'b.js'), plugin(`${sink('other')} ${collector('custom.queue')}`));
    writeFileSync(join(baseDir, 'c.js'), plugin(`api.translator('t', (d) => d);`));
    const regs = registries();
    await assert.rejects(loadPlugins(['./a.js', './b.js'], { baseDir, ...regs }), {
      message: 'plugins: ./b.js: collector for domain custom.queue already registered (by ./a.js)',
    });
    // nothing of the failing plugin was added
    assert.equal(regs.sinks.has('other'), false);
    await assert.rejects(loadPlugins(['./a.js', './c.js'], { baseDir, ...registries() }), {
      message: 'plugins: ./c.js: sink translator t already registered (by ./a.js)',
    });
    const taken = new Map<string, SinkTranslator>([['t', (d) => d]]);
    await assert.rejects(loadPlugins(['./c.js'], { baseDir, ...registries(taken) }), {
      message: 'plugins: ./c.js: sink translator t already registered (by built-in)',
    });
  });

  it('replace: true replaces a built-in collector or sink; replacing a name nobody registered fails', async () => {
    const baseDir = writeModule(
      'r.js',
      plugin(
        `api.sink({ name: 'log', description: 'mine', replace: true, create: () => ({}) });` +
          `api.collector({ help: ${help('status.global')}, replace: true, create: () => ({}) });`,
      ),
    );
    const regs = registries();
    await loadPlugins(['./r.js'], { baseDir, ...regs });
    assert.equal(regs.sinks.get('log')?.description, 'mine');
    assert.equal(regs.collectors.help('status.global').description, 'test domain');
    assert.equal(
      await problem(
        plugin(`api.sink({ name: 'nosuch', description: 'd', replace: true, create: () => ({}) });`),
      ),
      'plugins: ./p.js: sink nosuch: replace is set but nothing is registered under it',
    );
  });

  it('refuses registrations made after register() returned', async () => {
    const baseDir = writeModule(
      'late.js',
      `export let saved;\n${plugin(`saved = api; ${collector('custom.l')}`)}`,
    );
    const regs = registries();
    await loadPlugins(['./late.js'], { baseDir, ...regs });
    const mod = (await import(`file://${join(baseDir, 'late.js')}`)) as {
      saved: { collector(reg: unknown): void };
    };
    assert.throws(() => mod.saved.collector({}), /registrations are taken only while register\(\) runs/);
  });
});
