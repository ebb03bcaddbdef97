/**
 * "Did you mean" for a mistyped flag, command, choice or profile name. Pure.
 */

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions: `sewep` -> `sweep` is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidates closest to `typed`, best first: those within a distance of about a third of
 * the word (at least 1), plus those `typed` is a prefix of (`--dry` -> `--dry-run`).
 */
export function suggest(typed: string, candidates: readonly string[], max = 3): string[] {
  const t = typed.toLowerCase();
  const bare = (s: string): string => s.replace(/^-+/, '');
  const limit = Math.max(1, Math.floor(bare(t).length / 3));
  const scored = [...new Set(candidates)]
    .map((c) => {
      const lc = c.toLowerCase();
      const distance = editDistance(t, lc);
      const prefix = bare(t).length >= 2 && lc.startsWith(t);
      return { c, score: prefix ? Math.min(distance, 0.5) : distance };
    })
    .filter((s) => s.score <= limit)
    .sort((x, y) => x.score - y.score || x.c.localeCompare(y.c));
  return scored.slice(0, max).map((s) => s.c);
}

/** `did you mean --before?` / `did you mean json or csv?`, or undefined when nothing is close. */
export function didYouMean(typed: string, candidates: readonly string[]): string | undefined {
  const close = suggest(typed, candidates);
  if (close.length === 0) return undefined;
  const last = close.pop()!;
  return `did you mean ${close.length ? `${close.join(', ')} or ${last}` : last}?`;
}
