/**
 * A shard of a collection: the objects whose 64-bit FNV-1a hash (`fnv1a64.ts`) of
 * `metadata.uid` or `metadata.namespace` falls in `[start, end)`, the hash space being
 * `[0, 2^64)`. The apiserver's `shardSelector` (Kubernetes 1.36+, alpha gate
 * `ShardedListAndWatch`) selects the same objects: {@link shardSelector} writes it.
 *
 * Sharding by uid spreads objects evenly; by namespace keeps a namespace's objects together
 * (and is as uneven as the namespaces are). An object never moves between shards: neither its
 * uid nor its namespace can change.
 */
import { RavenError } from '../../errors/raven-error.js';
import type { ObjectPeek } from '../decode/peek.js';
import { fnv1a64, fnv1a64Halves } from './fnv1a64.js';

/** The end of the hash space (exclusive): 2^64. */
export const HASH_SPACE_END = 1n << 64n;

export type ShardField = 'uid' | 'namespace';

/** `[start, end)` of the 64-bit hash space. */
export interface ShardRange {
  start: bigint;
  end: bigint;
}

export interface Shard {
  field: ShardField;
  /**
   * One range, or several: a replica given parts of the hash space by rendezvous assignment
   * (`assignHashSpace`) owns several ranges, which one watch serves (`a || b` on the server).
   */
  range: ShardRange | readonly ShardRange[];
}

/** The ranges of `shard`, sorted by start, with touching and overlapping ranges merged. */
export function shardRanges(shard: Shard): ShardRange[] {
  const given: readonly ShardRange[] = isRangeList(shard.range) ? shard.range : [shard.range];
  const sorted = [...given].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: ShardRange[] = [];
  for (const range of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && range.start <= last.end) {
      if (range.end > last.end) last.end = range.end;
    } else merged.push({ start: range.start, end: range.end });
  }
  return merged;
}

function isRangeList(range: Shard['range']): range is readonly ShardRange[] {
  return Array.isArray(range);
}

/**
 * Check a shard given by a caller; throws `ERR_CONFIG` naming the bad field.
 *
 * @example
 * checkShard({ field: 'uid', range: { start: 0n, end: 1n << 63n } });
 */
export function checkShard(shard: Shard, at = 'shard'): Shard {
  // Callers in JavaScript (or with a cast) can pass anything: the field is checked as a string.
  const field: string = shard.field;
  if (field !== 'uid' && field !== 'namespace')
    throw new RavenError(
      'ERR_INVALID_ARGUMENT',
      `${at}.field: expected 'uid' or 'namespace', got ${JSON.stringify(field)}`,
    );
  const list = isRangeList(shard.range);
  const ranges = isRangeList(shard.range) ? shard.range : [shard.range];
  if (ranges.length === 0)
    throw new RavenError('ERR_INVALID_ARGUMENT', `${at}.range: expected at least one range, got []`);
  ranges.forEach(({ start, end }, i) => {
    const where = list ? `${at}.range[${i}]` : `${at}.range`;
    if (typeof start !== 'bigint' || start < 0n || start >= HASH_SPACE_END)
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `${where}.start: expected a bigint from 0n to 2n ** 64n - 1n, got ${String(start)}`,
      );
    if (typeof end !== 'bigint' || end <= start || end > HASH_SPACE_END)
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `${where}.end: expected a bigint above start (${String(start)}) and at most 2n ** 64n, got ${String(end)}`,
      );
  });
  return shard;
}

/**
 * `n` equal ranges covering the hash space, in order (the last one absorbs the remainder).
 *
 * @example
 * splitHashSpace(2); // => [{ start: 0n, end: 2n ** 63n }, { start: 2n ** 63n, end: 2n ** 64n }]
 */
export function splitHashSpace(n: number): ShardRange[] {
  if (!Number.isInteger(n) || n < 1)
    throw new RavenError('ERR_INVALID_ARGUMENT', `shards: expected an integer of at least 1, got ${n}`);
  const size = HASH_SPACE_END / BigInt(n);
  return Array.from({ length: n }, (_, i) => ({
    start: size * BigInt(i),
    end: i === n - 1 ? HASH_SPACE_END : size * BigInt(i + 1),
  }));
}

const hex = (value: bigint): string =>
  `0x${value === HASH_SPACE_END ? value.toString(16) : value.toString(16).padStart(16, '0')}`;

/**
 * The apiserver's `shardSelector` for `shard`: one `shardRange` per range (merged where they
 * touch), joined by `||`.
 *
 * @example
 * shardSelector({ field: 'uid', range: { start: 0n, end: 2n ** 63n } });
 * // => "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
 */
export function shardSelector(shard: Shard): string {
  return shardRanges(shard)
    .map((range) => `shardRange(object.metadata.${shard.field}, '${hex(range.start)}', '${hex(range.end)}')`)
    .join(' || ');
}

/** Whether the object `peek` describes belongs to `shard` (a missing field hashes as ''). */
export function inShard(shard: Shard, peek: ObjectPeek): boolean {
  const hash = fnv1a64(peek[shard.field] ?? '');
  const ranges: readonly ShardRange[] = isRangeList(shard.range) ? shard.range : [shard.range];
  return ranges.some((range) => hash >= range.start && hash < range.end);
}

const halves = new Uint32Array(2);
const TWO_32 = 2 ** 32;

/**
 * {@link inShard} made once for `shard`, for a filter that runs on every event: the ranges' ends
 * as 32-bit halves, compared with the hash's halves, so no bigint is made per event. It answers as
 * `inShard` does for every peek (test/unit/watch/shard.test.ts checks both on random uids).
 */
export function shardTest(shard: Shard): (peek: ObjectPeek) => boolean {
  const { field } = shard;
  const bounds = (isRangeList(shard.range) ? shard.range : [shard.range]).map((range) => ({
    startHigh: Number(range.start >> 32n),
    startLow: Number(range.start & 0xffffffffn),
    // The end of the hash space, 2^64, is above every hash: its high half reads as 2^32.
    endHigh: range.end >= HASH_SPACE_END ? TWO_32 : Number(range.end >> 32n),
    endLow: range.end >= HASH_SPACE_END ? 0 : Number(range.end & 0xffffffffn),
  }));
  return (peek) => {
    fnv1a64Halves(peek[field] ?? '', halves);
    const high = halves[0] as number;
    const low = halves[1] as number;
    for (const b of bounds) {
      const atOrAfterStart = high > b.startHigh || (high === b.startHigh && low >= b.startLow);
      const beforeEnd = high < b.endHigh || (high === b.endHigh && low < b.endLow);
      if (atOrAfterStart && beforeEnd) return true;
    }
    return false;
  };
}
