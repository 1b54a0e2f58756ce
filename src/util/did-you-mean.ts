/**
 * "Did you mean" suggestions for near misses: a mistyped key, enum value or name is compared with
 * the valid ones by edit distance (with transpositions, so `wacthers` finds `watchers`), ignoring
 * case. Only close candidates are offered; a wild guess is worse than none.
 */
import { editDistance as distance } from './edit-distance.js';

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
