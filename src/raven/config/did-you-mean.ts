/**
 * "Did you mean" suggestions for near misses: a mistyped key, enum value or name is compared with
 * the valid ones by edit distance (with transpositions, so `wacthers` finds `watchers`), ignoring
 * case. Only close candidates are offered; a wild guess is worse than none.
 */

/** Edit distance with adjacent transpositions (optimal string alignment). */
function distance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i < rows; i++) {
    const row = d[i] ?? [];
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `input`, when it is close enough to be a likely typo: at most one edit
 * for short words, up to a third of the word's length for longer ones; or the one candidate that
 * `input` begins or extends.
 *
 * @example
 * suggest('wacthers', ['watchers', 'sinks']); // => 'watchers'
 * suggest('timeout', ['timeoutSeconds', 'url']); // => 'timeoutSeconds'
 * suggest('xyz', ['watchers', 'sinks']); // => undefined
 */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = distance(needle, candidate.toLowerCase());
    if (best === undefined || score < best.score) best = { candidate, score };
  }
  if (best === undefined) return undefined;
  // A unit left off (`timeout` for `timeoutSeconds`) or a longer word (`warning` for `warn`) is
  // far in edits but obvious to a reader.
  const extended = candidates.filter((c) => {
    const lower = c.toLowerCase();
    return (
      Math.min(needle.length, lower.length) >= 4 && (lower.startsWith(needle) || needle.startsWith(lower))
    );
  });
  if (extended.length === 1 && best.score > 1) return extended[0];
  const allowed = Math.max(1, Math.floor(Math.max(needle.length, best.candidate.length) / 3));
  return best.score <= allowed ? best.candidate : undefined;
}

/** ` (did you mean "x"?)`, or '' when nothing is close. */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const match = suggest(input, candidates);
  return match === undefined ? '' : ` (did you mean ${JSON.stringify(match)}?)`;
}
