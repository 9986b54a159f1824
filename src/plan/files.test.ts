import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { expandPlanPattern, glob, hasGlobMeta, readPlanFile, readPlanFiles } from './files.js';
import { PlanError } from './parse.js';
import { testHelp } from './help-fixture.js';

const KPI = 'kpi:\n  freq: 5s\n  collect:\n    status.global:\n      metrics: [queries]\n';

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sonde-plan-files-'));
  for (const name of ['b.yaml', 'a.yaml', 'c.yml', 'ab.yaml', 'x[1].yaml', 'star*.yaml'])
    writeFileSync(join(dir, name), KPI);
  mkdirSync(join(dir, 'm1'));
  mkdirSync(join(dir, 'm2'));
  mkdirSync(join(dir, 'dir.yaml'));
  writeFileSync(join(dir, 'm2', 'plan.yaml'), KPI);
  writeFileSync(join(dir, 'm1', 'plan.yaml'), KPI);
  writeFileSync(join(dir, 'empty.txt'), '');
  writeFileSync(join(dir, 'broken.txt'), 'kpi: [1,\n');
  writeFileSync(join(dir, 'invalid.txt'), 'kpi:\n  freq: 5s\n  collect:\n    no.such:\n');
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<PlanError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PlanError, `not a PlanError: ${String(err)}`);
    return err;
  }
  assert.fail('no error');
}

void describe('glob', () => {
  void it('knows which paths are patterns', () => {
    assert.equal(hasGlobMeta('plans/a.yaml'), false);
    for (const p of ['*.yaml', 'a?.yaml', 'x[12].yaml', 'a\\b']) assert.equal(hasGlobMeta(p), true, p);
  });

  void it('matches * within a segment, in lexical order', async () => {
    assert.deepEqual(await glob(`${dir}/*.yaml`), [
      `${dir}/a.yaml`,
      `${dir}/ab.yaml`,
      `${dir}/b.yaml`,
      `${dir}/dir.yaml`,
      `${dir}/star*.yaml`,
      `${dir}/x[1].yaml`,
    ]);
  });

  void it('matches ?, classes, negated classes, ranges and escapes', async () => {
    assert.deepEqual(await glob(`${dir}/?.yaml`), [`${dir}/a.yaml`, `${dir}/b.yaml`]);
    assert.deepEqual(await glob(`${dir}/[ab].y*ml`), [`${dir}/a.yaml`, `${dir}/b.yaml`]);
    assert.deepEqual(await glob(`${dir}/[^a].yaml`), [`${dir}/b.yaml`]);
    assert.deepEqual(await glob(`${dir}/[a-c].yml`), [`${dir}/c.yml`]);
    assert.deepEqual(await glob(`${dir}/x\\[1].yaml`), [`${dir}/x[1].yaml`]);
    assert.deepEqual(await glob(`${dir}/star\\*.yaml`), [`${dir}/star*.yaml`]);
  });

  void it('expands patterns in directory segments', async () => {
    assert.deepEqual(await glob(`${dir}/m*/plan.yaml`), [`${dir}/m1/plan.yaml`, `${dir}/m2/plan.yaml`]);
  });

  void it("joins matches like Go's filepath.Join", async () => {
    assert.deepEqual(await glob(`${dir}/./?.yaml`), [`${dir}/a.yaml`, `${dir}/b.yaml`]);
    const rel = relative(process.cwd(), dir);
    assert.deepEqual(await glob(`./${rel}/b*.yaml`), [`${rel}/b.yaml`]);
  });

  void it('returns nothing when nothing matches', async () => {
    assert.deepEqual(await glob(`${dir}/*.json`), []);
    assert.deepEqual(await glob(`${dir}/nope/*.yaml`), []);
  });

  void it('rejects a malformed pattern', async () => {
    for (const p of [`${dir}/[`, `${dir}/[]`, `${dir}/a\\`, `${dir}/[a-`]) {
      const err = await rejection(glob(p));
      assert.equal(err.message, `invalid plan file pattern ${p}: syntax error in pattern`);
    }
  });
});

void describe('expandPlanPattern', () => {
  void it('returns a literal path that exists as written', async () => {
    assert.deepEqual(await expandPlanPattern(`${dir}/a.yaml`), [`${dir}/a.yaml`]);
  });

  void it('fails on a literal path that does not exist, naming the absolute path', async () => {
    const rel = join(relative(process.cwd(), dir), 'missing.yaml');
    const err = await rejection(expandPlanPattern(rel));
    assert.equal(
      err.message,
      `plan file ${rel} (${resolve(rel)}) does not exist: correct or remove it in plans.files`,
    );
  });

  void it('yields nothing for a pattern without matches', async () => {
    assert.deepEqual(await expandPlanPattern(`${dir}/*.json`), []);
  });
});

void describe('readPlanFile', () => {
  void it('names the plan after the file path exactly', async () => {
    const p = await readPlanFile(`${dir}/./a.yaml`);
    assert.equal(p.name, `${dir}/./a.yaml`);
    assert.equal(p.source, `${dir}/./a.yaml`);
    assert.deepEqual(p.levels.kpi?.collect['status.global']?.metrics, ['queries']);
  });

  void it('reads an empty file as a plan with zero levels', async () => {
    assert.deepEqual((await readPlanFile(`${dir}/empty.txt`)).levels, {});
  });

  void it('fails on undecodable YAML', async () => {
    const err = await rejection(readPlanFile(`${dir}/broken.txt`));
    assert.match(err.message, new RegExp(`^cannot decode YAML in ${dir}/broken\\.txt: Flow sequence`));
  });

  void it('fails on a file that does not exist, and on a directory', async () => {
    assert.equal(
      (await rejection(readPlanFile(`${dir}/gone.yaml`))).message,
      `plan file ${dir}/gone.yaml does not exist: correct or remove it in plans.files`,
    );
    assert.match(
      (await rejection(readPlanFile(`${dir}/dir.yaml`))).message,
      /^cannot read plan file .*dir\.yaml: EISDIR/,
    );
  });
});

void describe('readPlanFiles', () => {
  void it('reads listed files in order, glob matches in lexical order', async () => {
    const plans = await readPlanFiles(
      [`${dir}/b.yaml`, `${dir}/m*/plan.yaml`, `${dir}/*.yml`, `${dir}/*.json`],
      testHelp,
    );
    assert.deepEqual(
      plans.map((p) => p.name),
      [`${dir}/b.yaml`, `${dir}/m1/plan.yaml`, `${dir}/m2/plan.yaml`, `${dir}/c.yml`],
    );
  });

  void it('validates the plans it read, all together', async () => {
    const err = await rejection(readPlanFiles([`${dir}/a.yaml`, `${dir}/invalid.txt`], testHelp));
    assert.equal(
      err.message,
      `1 plan validation errors:\ninvalid plan: ${dir}/invalid.txt: line 4: at kpi/no.such: invalid domain: no.such: no such domain (run 'sonde --print-domains' to list collectors and options)`,
    );
  });
});
