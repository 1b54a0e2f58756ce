import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fnv1a64, fnv1a64Hex } from '../../../src/watch/shard/fnv1a64.js';
import {
  checkShard,
  HASH_SPACE_END,
  inShard,
  shardRanges,
  shardSelector,
  shardTest,
  splitHashSpace,
  type ShardRange,
} from '../../../src/watch/shard/shard.js';
import { Prng } from '../../chaos/prng.js';

test('fnv1a64 gives the published 64-bit FNV-1a values, over UTF-8 bytes', () => {
  // Vectors from the FNV reference (Fowler, Noll, Vo); the e2e test checks the apiserver agrees.
  assert.equal(fnv1a64Hex(''), 'cbf29ce484222325');
  assert.equal(fnv1a64Hex('a'), 'af63dc4c8601ec8c');
  assert.equal(fnv1a64Hex('foobar'), '85944171f73967e8');
  // Non-ASCII goes through its UTF-8 bytes: 'é' is 0xc3 0xa9.
  const manual = [0xc3, 0xa9].reduce(
    (h, b) => ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn,
    0xcbf29ce484222325n,
  );
  assert.equal(fnv1a64('é'), manual);
});

test('the hash space splits into equal ranges that cover it once', () => {
  const ranges = splitHashSpace(3);
  assert.equal(ranges[0]?.start, 0n);
  assert.equal(ranges.at(-1)?.end, HASH_SPACE_END);
  for (let i = 1; i < ranges.length; i++) assert.equal(ranges[i]?.start, ranges[i - 1]?.end);
  assert.throws(() => splitHashSpace(0), /shards: expected an integer of at least 1, got 0/);
});

test('the shard selector is written as the apiserver parses it, 2^64 included', () => {
  assert.equal(
    shardSelector({ field: 'uid', range: { start: 0n, end: 1n << 63n } }),
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
  );
  assert.equal(
    shardSelector({ field: 'namespace', range: { start: 1n << 63n, end: HASH_SPACE_END } }),
    "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
  );
});

test('an object belongs to the shard its field hashes into, start inclusive, end exclusive', () => {
  const hash = fnv1a64('uid-1');
  assert.equal(inShard({ field: 'uid', range: { start: hash, end: hash + 1n } }, { uid: 'uid-1' }), true);
  assert.equal(inShard({ field: 'uid', range: { start: 0n, end: hash } }, { uid: 'uid-1' }), false);
  assert.equal(inShard({ field: 'namespace', range: { start: 0n, end: HASH_SPACE_END } }, {}), true);
});

test('a bad shard is refused naming the field and what would be valid', () => {
  assert.throws(
    () => checkShard({ field: 'name' as never, range: { start: 0n, end: 1n } }),
    /shard\.field: expected 'uid' or 'namespace', got "name"/,
  );
  assert.throws(
    () => checkShard({ field: 'uid', range: { start: 5n, end: 5n } }),
    /shard\.range\.end: expected a bigint above start \(5\) and at most 2n \*\* 64n, got 5/,
  );
  assert.throws(
    () => checkShard({ field: 'uid', range: { start: -1n, end: 5n } }),
    /shard\.range\.start: expected a bigint from 0n/,
  );
});

test('several ranges: sorted, merged where they touch, joined by || in the selector', () => {
  const shard = {
    field: 'uid' as const,
    range: [
      { start: 3n << 62n, end: HASH_SPACE_END },
      { start: 0n, end: 1n << 62n },
      { start: 1n << 62n, end: 2n << 62n },
    ],
  };
  assert.deepEqual(shardRanges(shard), [
    { start: 0n, end: 2n << 62n },
    { start: 3n << 62n, end: HASH_SPACE_END },
  ]);
  assert.equal(
    shardSelector(shard),
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || " +
      "shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
  );
  // Overlaps merge too; the caller's array is left as it was.
  const given = [
    { start: 10n, end: 30n },
    { start: 20n, end: 25n },
    { start: 25n, end: 40n },
  ];
  assert.deepEqual(shardRanges({ field: 'uid', range: given }), [{ start: 10n, end: 40n }]);
  assert.deepEqual(given[0], { start: 10n, end: 30n });
});

test('with several ranges an object belongs to the shard when its hash is in any of them', () => {
  const hash = fnv1a64('uid-2');
  const around = [
    { start: 0n, end: hash },
    { start: hash + 1n, end: HASH_SPACE_END },
  ];
  assert.equal(inShard({ field: 'uid', range: around }, { uid: 'uid-2' }), false);
  assert.equal(
    inShard({ field: 'uid', range: [...around, { start: hash, end: hash + 1n }] }, { uid: 'uid-2' }),
    true,
  );
});

test('a bad range among several is refused naming its index', () => {
  assert.throws(
    () =>
      checkShard({
        field: 'uid',
        range: [
          { start: 0n, end: 5n },
          { start: 9n, end: 7n },
        ],
      }),
    /shard\.range\[1\]\.end: expected a bigint above start \(9\) and at most 2n \*\* 64n, got 7/,
  );
  assert.throws(
    () => checkShard({ field: 'uid', range: [] }),
    /shard\.range: expected at least one range, got \[\]/,
  );
});

test('shardTest answers as inShard does, on seeded random uids and ranges, edges included', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const random = new Prng(seed);
    const uids = Array.from(
      { length: 200 },
      (_, i) => `${random.int(0, 0xffffff).toString(16)}-${seed}-${i}`,
    );
    const hashes = uids.map(fnv1a64);
    const at = (): bigint => {
      // A bound at a hash, next to it, at a 2^32 boundary next to it, at random, or at an end.
      const hash = random.pick(hashes);
      const high = (hash >> 32n) << 32n;
      const choices = [hash, hash + 1n, hash - 1n, high, high + (1n << 32n), 0n, HASH_SPACE_END];
      const random64 = (BigInt(random.int(0, 0xffffffff)) << 32n) | BigInt(random.int(0, 0xffffffff));
      const bound = random.chance(0.2) ? random64 : random.pick(choices);
      return bound < 0n ? 0n : bound > HASH_SPACE_END ? HASH_SPACE_END : bound;
    };
    for (let round = 0; round < 50; round++) {
      const ranges: ShardRange[] = Array.from({ length: random.int(1, 3) }, () => {
        const [a, b] = [at(), at()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        return { start: a ?? 0n, end: b === a ? (b ?? 0n) + 1n : (b ?? 0n) };
      }).filter((r) => r.end <= HASH_SPACE_END && r.start < r.end);
      if (ranges.length === 0) continue;
      const shard = {
        field: 'uid' as const,
        range: ranges.length === 1 ? (ranges[0] as ShardRange) : ranges,
      };
      const test = shardTest(shard);
      for (const uid of uids) assert.equal(test({ uid }), inShard(shard, { uid }), `seed ${seed}, ${uid}`);
      assert.equal(test({}), inShard(shard, {}), `seed ${seed}, no uid`);
    }
  }
});
