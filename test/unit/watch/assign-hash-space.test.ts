import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assignBuckets,
  assignHashSpace,
  bucketOf,
  DEFAULT_HASH_SPACE_BUCKETS,
} from '../../../src/watch/shard/assign-hash-space.js';
import {
  HASH_SPACE_END,
  shardRanges,
  splitHashSpace,
  type ShardRange,
} from '../../../src/watch/shard/shard.js';

const width = (ranges: readonly ShardRange[]): bigint =>
  ranges.reduce((sum, r) => sum + (r.end - r.start), 0n);
/** The share of the hash space, as a fraction. */
const share = (ranges: readonly ShardRange[]): number =>
  Number((width(ranges) * 1_000_000n) / HASH_SPACE_END) / 1e6;

/** Every point of the space belongs to exactly one member. */
function assertPartition(owned: Map<string, ShardRange[]>): void {
  const all = [...owned.values()].flat().sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  assert.equal(all[0]?.start, 0n);
  assert.equal(all.at(-1)?.end, HASH_SPACE_END);
  for (let i = 1; i < all.length; i++) assert.equal(all[i]?.start, all[i - 1]?.end, 'no gap, no overlap');
}

/** The fraction of the space whose owner differs between two assignments. */
function moved(before: Map<string, ShardRange[]>, after: Map<string, ShardRange[]>): number {
  let same = 0n;
  for (const [name, ranges] of after)
    for (const a of ranges)
      for (const b of before.get(name) ?? []) {
        const start = a.start > b.start ? a.start : b.start;
        const end = a.end < b.end ? a.end : b.end;
        if (end > start) same += end - start;
      }
  return 1 - Number((same * 1_000_000n) / HASH_SPACE_END) / 1e6;
}

test('the members share the whole hash space, each point owned once, whatever the order of names', () => {
  for (const n of [1, 2, 3, 4, 7]) {
    const names = Array.from({ length: n }, (_, i) => `raven-${i}`);
    const owned = assignHashSpace(names);
    assert.equal(owned.size, n);
    assertPartition(owned);
    assert.deepEqual(assignHashSpace([...names].reverse()), owned);
  }
  assert.deepEqual(assignHashSpace(['raven-0', 'raven-0']), assignHashSpace(['raven-0']));
  assert.deepEqual(assignHashSpace(['raven-0']).get('raven-0'), [{ start: 0n, end: HASH_SPACE_END }]);
  assert.equal(assignHashSpace([]).size, 0);
});

test('shares are near 1/N, and a member owns few enough ranges for one selector', () => {
  const names = ['raven-a', 'raven-b', 'raven-c', 'raven-d'];
  const owned = assignHashSpace(names);
  for (const ranges of owned.values()) {
    // 128 parts among 4: 32 each on average; rendezvous hashing gives a binomial spread.
    assert.ok(share(ranges) > 0.12 && share(ranges) < 0.38, `share ${share(ranges)}`);
    assert.ok(ranges.length <= DEFAULT_HASH_SPACE_BUCKETS / 2, `${ranges.length} ranges`);
  }
});

test('a member joining or leaving moves about 1/N of the space, and only to or from that member', () => {
  const three = assignHashSpace(['raven-0', 'raven-1', 'raven-2']);
  const four = assignHashSpace(['raven-0', 'raven-1', 'raven-2', 'raven-3']);
  // Joining: what moves is exactly what the new member takes.
  assert.ok(Math.abs(moved(three, four) - share(four.get('raven-3') ?? [])) < 1e-5);
  assert.ok(moved(three, four) > 0.1 && moved(three, four) < 0.4, `moved ${moved(three, four)}`);
  // Leaving: only the leaver's parts move; everyone else keeps all they had.
  const two = assignHashSpace(['raven-0', 'raven-2']);
  assert.ok(Math.abs(moved(three, two) - share(three.get('raven-1') ?? [])) < 1e-5);
  for (const name of ['raven-0', 'raven-2'])
    for (const kept of three.get(name) ?? [])
      assert.ok(
        (two.get(name) ?? []).some((r) => r.start <= kept.start && kept.end <= r.end),
        `${name} keeps ${kept.start}-${kept.end}`,
      );
});

test('the number of parts is checked', () => {
  assert.throws(
    () => assignHashSpace(['a'], { buckets: 0 }),
    /buckets: expected an integer from 1 to 65536, got 0/,
  );
  // One part: one member owns the whole space, the other nothing.
  const one = assignHashSpace(['a', 'b'], { buckets: 1 });
  assert.deepEqual([...one.values()].map((ranges) => ranges.length).sort(), [0, 1]);
  assertPartition(one);
});

test('assignBuckets gives the parts assignHashSpace gives, and bucketOf finds the part a hash is in', () => {
  const names = ['raven-0', 'raven-1', 'raven-2'];
  const parts = splitHashSpace(16);
  const byIndex = assignBuckets(names, 16);
  const byRange = assignHashSpace(names, { buckets: 16 });
  for (const name of names) {
    const indexes = byIndex.get(name) ?? [];
    assert.deepEqual(
      shardRanges({ field: 'uid', range: indexes.map((i) => parts[i] as ShardRange) }),
      byRange.get(name),
    );
  }
  assert.deepEqual(
    [...byIndex.values()].flat().sort((a, b) => a - b),
    [...Array(16).keys()],
  );
  // Each part's first and last hash are in it; an uneven division leaves the remainder to the last.
  parts.forEach((part, i) => {
    assert.equal(bucketOf(part.start, 16), i);
    assert.equal(bucketOf(part.end - 1n, 16), i);
  });
  assert.equal(bucketOf(HASH_SPACE_END - 1n, 3), 2);
  assert.equal(bucketOf(splitHashSpace(3)[2]?.start ?? 0n, 3), 2);
  assert.equal(bucketOf(splitHashSpace(3)[1]?.end ?? 0n, 3), 2);
});
