import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, backoffDelay, EQUAL_JITTER, NO_JITTER } from '../../../src/util/backoff.js';

const policy = { initialMs: 100, maxMs: 1_000, factor: 2 };

test('the step grows by the factor per failure and stops at the maximum', () => {
  const delays = [1, 2, 3, 4, 5, 6].map((n) => backoffDelay({ ...policy, jitter: NO_JITTER }, n, () => 0.9));
  assert.deepEqual(delays, [100, 200, 400, 800, 1_000, 1_000]);
});

test('a relative jitter spreads each wait around its step and never past the maximum', () => {
  const p = { ...policy, jitter: 0.5 };
  assert.equal(
    backoffDelay(p, 1, () => 0),
    50,
  );
  assert.equal(
    backoffDelay(p, 1, () => 0.5),
    100,
  );
  assert.equal(
    backoffDelay(p, 2, () => 0.999_999),
    300,
  );
  assert.equal(
    backoffDelay(p, 10, () => 0.999_999),
    1_000,
  );
});

test('equal jitter keeps each wait in the upper half of its step', () => {
  const p = { ...policy, jitter: EQUAL_JITTER };
  for (let n = 1; n <= 8; n++) {
    const step = Math.min(1_000, 100 * 2 ** (n - 1));
    assert.equal(
      backoffDelay(p, n, () => 0),
      step / 2,
    );
    assert.equal(
      backoffDelay(p, n, () => 1),
      step,
    );
  }
});

test('very many failures stay at the maximum without overflowing', () => {
  assert.equal(
    backoffDelay({ ...policy, jitter: NO_JITTER }, 5_000, () => 0),
    1_000,
  );
});

test('a Backoff counts failures and starts over after a success', () => {
  const backoff = new Backoff({ ...policy, jitter: 0, random: () => 0.3 });
  assert.deepEqual([backoff.fail(), backoff.fail(), backoff.fail()], [100, 200, 400]);
  assert.equal(backoff.failures, 3);
  backoff.succeeded();
  assert.equal(backoff.failures, 0);
  assert.equal(backoff.fail(), 100);
});

test('a Backoff defaults to 0.8 s doubling to 30 s with ±20 % jitter', () => {
  const low = new Backoff({ random: () => 0 });
  const high = new Backoff({ random: () => 0.999_999 });
  assert.equal(low.fail(), 640);
  assert.equal(high.fail(), 960);
  for (let i = 0; i < 10; i++) high.fail();
  assert.equal(high.fail(), 30_000);
});
