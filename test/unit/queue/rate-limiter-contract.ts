/**
 * The contract every {@link RateLimiter} keeps (see `src/queue/rate-limiter.ts`). Call
 * {@link rateLimiterContract} from a test file with a factory that builds the limiter on the clock.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RateLimiter } from '../../../src/queue/rate-limiter.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';

export function rateLimiterContract(name: string, create: (clock: FakeClock) => RateLimiter<string>): void {
  describe(`${name} rate limiter contract`, () => {
    test('every delay is a finite number of milliseconds, never negative', async () => {
      const clock = new FakeClock();
      const limiter = create(clock);
      for (let i = 0; i < 300; i++) {
        const delay = limiter.when(`key-${i % 7}`);
        assert.ok(Number.isFinite(delay) && delay >= 0, `delay ${delay} at call ${i}`);
        if (i % 50 === 0) await clock.tick(1_000);
      }
    });

    test('the requeue count is a whole number no larger than the attempts recorded for the key', () => {
      const limiter = create(new FakeClock());
      for (let i = 1; i <= 5; i++) {
        limiter.when('a');
        const n = limiter.numRequeues('a');
        assert.ok(Number.isInteger(n) && n >= 0 && n <= i, `numRequeues ${n} after ${i} attempts`);
      }
    });

    test('forgetting a key resets its requeue count to zero', () => {
      const limiter = create(new FakeClock());
      limiter.when('a');
      limiter.when('a');
      limiter.forget('a');
      assert.equal(limiter.numRequeues('a'), 0);
    });

    test('a key never seen has no requeues and can be forgotten harmlessly', () => {
      const limiter = create(new FakeClock());
      assert.equal(limiter.numRequeues('unknown'), 0);
      limiter.forget('unknown');
      assert.equal(limiter.numRequeues('unknown'), 0);
    });

    test('attempts on one key do not count as requeues of another', () => {
      const limiter = create(new FakeClock());
      for (let i = 0; i < 4; i++) limiter.when('a');
      assert.equal(limiter.numRequeues('b'), 0);
    });
  });
}
