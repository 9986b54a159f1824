/**
 * Heap bytes per kept string, for tests of what long-lived text costs: measured in a fresh
 * process with the garbage collector callable, around 20,000 strings made by the expression
 * `make` (of `i`) and handed to each of `keeps` (function expressions of the string and `i`,
 * whose result is kept). `setup` is module code run first (its imports are in scope).
 */
export async function keptBytes<K extends string>(
  setup: string,
  make: string,
  keeps: Record<K, string>,
): Promise<Record<K, number>> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const keepList = Object.entries<string>(keeps)
    .map(([name, fn]) => `${name}: ${fn}`)
    .join(', ');
  const script = [
    "(await import('node:v8')).setFlagsFromString('--expose-gc');",
    "const gc = (await import('node:vm')).runInNewContext('gc');",
    setup,
    `const make = (i) => ${make};`,
    'const perString = (keep) => {',
    "  gc({ type: 'major', execution: 'sync' });",
    '  const before = process.memoryUsage().heapUsed;',
    '  const kept = Array.from({ length: 20000 }, (_, i) => keep(make(i), i));',
    "  gc({ type: 'major', execution: 'sync' });",
    '  const bytes = (process.memoryUsage().heapUsed - before) / kept.length;',
    '  kept.length = 0;',
    '  return bytes;',
    '};',
    `const keeps = { ${keepList} };`,
    'console.log(JSON.stringify(Object.fromEntries(Object.entries(keeps).map(([k, f]) => [k, perString(f)]))));',
  ].join('\n');
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  return JSON.parse(stdout) as Record<K, number>;
}

/** `import { names } from '<module>'` for a module next to `base` (an import.meta.url). */
export function importLine(names: readonly string[], module: string, base: string): string {
  return `const { ${names.join(', ')} } = await import(${JSON.stringify(new URL(module, base).href)});`;
}

/** A status line of `i` built as the engine builds one (a template of its parts), as an expression. */
export const BUILT_STATUS_LINE =
  '`ok at ${new Date(1.8e12 + i * 1000).toISOString()} in ${(i % 997 / 7).toFixed(1)}ms: ${i % 50} metrics`';
