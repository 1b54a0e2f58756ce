/**
 * Which parts of the 64-bit hash space each member of a group owns, by rendezvous (highest
 * random weight) hashing: the space is cut into `buckets` equal parts, and each part goes to the
 * member that scores highest on it. Every member computes the same answer from the same member
 * names, with nothing to coordinate but the list of names.
 *
 * When a member joins it takes, from each of the others, about 1/N of the parts they held; when
 * one leaves only its own parts move, spread over the rest. Dividing the space into N contiguous
 * ranges instead would move up to half the keys at every change.
 */
import { createHash } from 'node:crypto';
import { RavenError } from '../../errors/raven-error.js';
import { HASH_SPACE_END, shardRanges, splitHashSpace, type ShardRange } from './shard.js';

/**
 * How many parts the hash space is cut into unless told. 128 keeps the shares of up to ~16
 * members within a few parts of each other, while a member's ranges (merged where they touch)
 * stay few enough for one `shardSelector` (about 24 for one member of four).
 */
export const DEFAULT_HASH_SPACE_BUCKETS = 128;

export interface AssignHashSpaceOptions {
  /** How many equal parts the space is cut into; default {@link DEFAULT_HASH_SPACE_BUCKETS}. */
  buckets?: number;
}

/**
 * The ranges each member owns: every point of the hash space belongs to exactly one member.
 * Duplicate names count once; with no members the map is empty.
 *
 * @example
 * const owned = assignHashSpace(['raven-0', 'raven-1', 'raven-2']);
 * owned.get('raven-1'); // => the ranges raven-1 watches, e.g. as `shard: { field: 'uid', range }`
 */
export function assignHashSpace(
  members: readonly string[],
  options: AssignHashSpaceOptions = {},
): Map<string, ShardRange[]> {
  const buckets = options.buckets ?? DEFAULT_HASH_SPACE_BUCKETS;
  const parts = splitHashSpace(checkBuckets(buckets));
  const owned = new Map<string, ShardRange[]>();
  for (const [name, indexes] of assignBuckets(members, buckets)) {
    const ranges = indexes.map((i) => parts[i] as ShardRange);
    owned.set(name, ranges.length === 0 ? [] : shardRanges({ field: 'uid', range: ranges }));
  }
  return owned;
}

/**
 * The same assignment as {@link assignHashSpace}, as the indexes of the parts each member owns
 * (part `i` is `splitHashSpace(buckets)[i]`; {@link bucketOf} tells which part a hash is in).
 *
 * @example
 * assignBuckets(['raven-0', 'raven-1'], 4); // => Map { 'raven-0' => [0, 2], 'raven-1' => [1, 3] }
 */
export function assignBuckets(members: readonly string[], buckets: number): Map<string, number[]> {
  checkBuckets(buckets);
  // Sorted, so that ties (which a 64-bit score makes all but impossible) go the same way everywhere.
  const names = [...new Set(members)].sort();
  const owned = new Map<string, number[]>(names.map((name) => [name, []]));
  if (names.length === 0) return owned;
  for (let i = 0; i < buckets; i++) {
    let best = names[0] as string;
    let bestScore = -1n;
    for (const name of names) {
      const score = weight(name, i);
      if (score > bestScore) [best, bestScore] = [name, score];
    }
    owned.get(best)?.push(i);
  }
  return owned;
}

/**
 * Which of `buckets` equal parts of the hash space (`splitHashSpace`) `hash` falls in.
 *
 * @example
 * import { fnv1a64 } from 'kube-raven/shard';
 * bucketOf(fnv1a64('x'), 128); // => 87
 */
export function bucketOf(hash: bigint, buckets: number): number {
  const index = Number(hash / (HASH_SPACE_END / BigInt(buckets)));
  // The last part also holds the remainder of an uneven division.
  return Math.min(index, buckets - 1);
}

function checkBuckets(buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 65_536)
    throw new RavenError(
      'ERR_INVALID_ARGUMENT',
      `buckets: expected an integer from 1 to 65536, got ${String(buckets)}`,
    );
  return buckets;
}

function weight(member: string, bucket: number): bigint {
  return createHash('sha256').update(`${member}\u0000${bucket}`).digest().readBigUInt64BE(0);
}
