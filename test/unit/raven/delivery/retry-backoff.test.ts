import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryBackoffMs } from '../../../../src/raven/delivery/retry-backoff.js';

const options = { initialMs: 500, maxMs: 60_000 };

test('the wait doubles per failure and stops at the maximum', () => {
  const top = (n: number): number => retryBackoffMs(n, { ...options, random: () => 1 });
  assert.deepEqual([1, 2, 3, 4, 8, 9, 30].map(top), [500, 1_000, 2_000, 4_000, 60_000, 60_000, 60_000]);
});

test('jitter keeps the wait within the upper half of each step', () => {
  for (let n = 1; n <= 10; n++) {
    const step = Math.min(60_000, 500 * 2 ** (n - 1));
    assert.equal(retryBackoffMs(n, { ...options, random: () => 0 }), step / 2);
    const r = retryBackoffMs(n, { ...options, random: Math.random });
    assert.ok(r >= step / 2 && r <= step, `failure ${n}: ${r}`);
  }
});
