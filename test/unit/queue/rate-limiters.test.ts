import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exponentialRateLimiter } from '../../../src/queue/exponential-rate-limiter.js';
import { bucketRateLimiter } from '../../../src/queue/bucket-rate-limiter.js';
import { maxOfRateLimiter } from '../../../src/queue/max-of-rate-limiter.js';
import { defaultControllerRateLimiter } from '../../../src/queue/default-controller-rate-limiter.js';
import type { RateLimiter } from '../../../src/queue/rate-limiter.js';
import { RavenError } from '../../../src/errors/raven-error.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { rateLimiterContract } from './rate-limiter-contract.js';

rateLimiterContract('per-item exponential', () => exponentialRateLimiter());
rateLimiterContract('token bucket', (clock) => bucketRateLimiter({ clock }));
rateLimiterContract('max-of', (clock) =>
  maxOfRateLimiter(exponentialRateLimiter(), bucketRateLimiter({ clock, qps: 1, burst: 2 })),
);
rateLimiterContract('default controller', (clock) => defaultControllerRateLimiter({ clock }));

test('per-item backoff doubles from 5 ms and is capped at 1000 s', () => {
  const limiter = exponentialRateLimiter<string>();
  const delays = Array.from({ length: 22 }, () => limiter.when('a'));
  assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
  assert.equal(delays[17], 5 * 2 ** 17); // 655.36 s, the last delay under the cap
  assert.deepEqual(delays.slice(18), [1_000_000, 1_000_000, 1_000_000, 1_000_000]);
  assert.equal(limiter.numRequeues('a'), 22);
});

test('per-item backoff stays at the cap after very many failures', () => {
  const limiter = exponentialRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 60_000 });
  let delay = 0;
  for (let i = 0; i < 2_000; i++) delay = limiter.when('a');
  assert.equal(delay, 60_000);
});

test('forgetting a key restarts its backoff at the base delay', () => {
  const limiter = exponentialRateLimiter<string>();
  limiter.when('a');
  limiter.when('a');
  limiter.forget('a');
  assert.equal(limiter.numRequeues('a'), 0);
  assert.equal(limiter.when('a'), 5);
});

test('each key backs off independently', () => {
  const limiter = exponentialRateLimiter<string>();
  limiter.when('a');
  limiter.when('a');
  assert.equal(limiter.when('b'), 5);
  assert.equal(limiter.when('a'), 20);
});

test('the bucket lets a burst through at once and then spaces retries at the steady rate', () => {
  const limiter = bucketRateLimiter<string>({ clock: new FakeClock() });
  const burst = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
  assert.ok(burst.every((delay) => delay === 0));
  assert.deepEqual([limiter.when('x'), limiter.when('y'), limiter.when('z')], [100, 200, 300]);
});

test('the bucket refills at qps but never beyond its burst', async () => {
  const clock = new FakeClock();
  const limiter = bucketRateLimiter<string>({ qps: 10, burst: 3, clock });
  assert.deepEqual(
    [limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')],
    [0, 0, 0, 100],
  );
  await clock.tick(100); // repays the reservation made for the fourth call
  assert.equal(limiter.when('a'), 100);
  await clock.tick(10_000);
  assert.deepEqual(
    [limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')],
    [0, 0, 0, 100],
  );
});

test('a bucket with steady demand at its rate never delays', async () => {
  const clock = new FakeClock();
  const limiter = bucketRateLimiter<string>({ qps: 10, burst: 1, clock });
  for (let i = 0; i < 20; i++) {
    assert.equal(limiter.when('a'), 0);
    await clock.tick(100);
  }
});

test('a bucket with a zero rate or an empty burst is refused', () => {
  assert.throws(() => bucketRateLimiter({ qps: 0 }), RavenError);
  assert.throws(() => bucketRateLimiter({ burst: 0 }), RavenError);
});

test('the max-of limiter asks every limiter and answers with the longest delay', () => {
  const calls: string[] = [];
  const fixed = (name: string, delay: number, requeues: number): RateLimiter<string> => ({
    when: (key) => {
      calls.push(`${name}:${key}`);
      return delay;
    },
    forget: (key) => calls.push(`${name}:forget:${key}`),
    numRequeues: () => requeues,
  });
  const limiter = maxOfRateLimiter(fixed('short', 5, 3), fixed('long', 50, 1));
  assert.equal(limiter.when('a'), 50);
  assert.equal(limiter.numRequeues('a'), 3);
  limiter.forget('a');
  assert.deepEqual(calls, ['short:a', 'long:a', 'short:forget:a', 'long:forget:a']);
});

test('the default controller limiter backs a key off exponentially within the overall bucket', () => {
  const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a')], [5, 10, 20]);
  for (let i = 0; i < 97; i++) limiter.when(`other-${i}`);
  // The bucket's burst of 100 is spent: a fresh key now waits for a token, longer than its 5 ms.
  assert.equal(limiter.when('fresh'), 100);
  assert.equal(limiter.numRequeues('a'), 3);
});
