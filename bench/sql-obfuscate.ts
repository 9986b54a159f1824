/**
 * Throughput of the SQL obfuscator: statements per second for obfuscateSql, normalizeSql and
 * sqlFingerprint over the test corpus (src/sql/corpus.fixture.ts), and for a few large or
 * hostile statements. Prints numbers; asserts nothing.
 *
 *   node dist/bench/sql-obfuscate.js [--seconds 2]
 */
import { buildCorpus } from '../src/sql/corpus.fixture.js';
import { normalizeSql, obfuscateSql, sqlFingerprint } from '../src/sql/obfuscate.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const SECONDS = Number(arg('seconds', '2'));

/** Run `fn` over `texts` round after round for about `SECONDS`; statements per second and MB/s. */
function measure(
  texts: readonly string[],
  fn: (s: string) => string,
): { perSecond: number; mbPerSecond: number } {
  const bytes = texts.reduce((n, t) => n + t.length, 0);
  for (const t of texts) fn(t); // warm-up
  let rounds = 0;
  let sink = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < SECONDS) {
    for (const t of texts) sink += fn(t).length;
    rounds++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  if (sink < 0) console.log(sink);
  return { perSecond: (rounds * texts.length) / elapsed, mbPerSecond: (rounds * bytes) / elapsed / 1e6 };
}

function hostile(): Record<string, string[]> {
  const list = Array.from({ length: 10_000 }, (_, i) => String(1_000_000 + i)).join(', ');
  const rows = Array.from({ length: 2_000 }, (_, i) => `(${i}, 'name ${i}', 'it''s', NULL)`).join(',');
  let quotes = "SELECT a FROM t WHERE b = '";
  const bits = ["'", '\\', "\\'", "''", '"'];
  for (let i = 0; quotes.length < 100_000; i++) quotes += bits[(i * 7 + (i >> 3)) % bits.length];
  return {
    'IN list of 10,000 numbers (~90 kB)': [`SELECT a FROM t WHERE b IN (${list})`],
    'INSERT of 2,000 rows (~70 kB)': [`INSERT INTO t VALUES ${rows}`],
    '100 kB of quotes and backslashes (cut at the first unreadable point)': [quotes],
    'one 100 kB string of escapes': [`SELECT '${"\\'\\\\''".repeat(14_000)}' AS s`],
    '20,000 nested comment openers': [`SELECT 1 ${'/*'.repeat(20_000)} x ${'*/'.repeat(20_000)}`],
  };
}

function main(): void {
  const corpus = buildCorpus().map((e) => e.sql);
  const avg = corpus.reduce((n, s) => n + s.length, 0) / corpus.length;
  console.log(
    `corpus: ${corpus.length} statements, ${avg.toFixed(0)} characters on average; ${SECONDS} s per row`,
  );
  console.log('| What | Function | Statements/s | MB/s |');
  console.log('|---|---|---|---|');
  const fns: [string, (s: string) => string][] = [
    ['obfuscateSql', (s) => obfuscateSql(s)],
    ['normalizeSql', (s) => normalizeSql(s)],
    ['sqlFingerprint', (s) => sqlFingerprint(s)],
  ];
  for (const [name, fn] of fns) {
    const r = measure(corpus, fn);
    console.log(
      `| corpus | ${name} | ${Math.round(r.perSecond).toLocaleString('en')} | ${r.mbPerSecond.toFixed(1)} |`,
    );
  }
  for (const [what, texts] of Object.entries(hostile())) {
    const r = measure(texts, (s) => obfuscateSql(s));
    console.log(`| ${what} | obfuscateSql | ${r.perSecond.toFixed(0)} | ${r.mbPerSecond.toFixed(1)} |`);
  }
}

main();
