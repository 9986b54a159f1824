/**
 * "Did you mean": the closest known name to a mistyped one, by edit distance (insertions,
 * deletions, substitutions and swaps of two neighbours each count 1; case is ignored). One
 * helper for every message about a domain, option, key or value that does not exist.
 */

/** Edit distance between `a` and `b` (optimal string alignment), case ignored. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i++) rows.push([i, ...new Array<number>(t.length).fill(0)]);
  const row0 = rows[0] ?? [];
  for (let j = 0; j <= t.length; j++) row0[j] = j;
  for (let i = 1; i <= s.length; i++) {
    const row = rows[i] ?? [];
    const prev = rows[i - 1] ?? [];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        d = Math.min(d, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      row[j] = d;
    }
  }
  return rows[s.length]?.[t.length] ?? 0;
}

/**
 * The known name closest to `word`, when it is close enough to be a typo: at most one edit
 * for words up to 5 characters, two up to 8, three beyond; the first of equals wins. Undefined
 * when none is (or `word` is itself known).
 */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const limit = word.length <= 5 ? 1 : word.length <= 8 ? 2 : 3;
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    if (k === word) return undefined;
    const d = editDistance(word, k);
    if (d <= limit && d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

/** ` (did you mean <name>?)` for the closest known name, else ''. */
export function didYouMean(word: string, known: Iterable<string>): string {
  const c = closest(word, known);
  return c === undefined ? '' : ` (did you mean ${c}?)`;
}
