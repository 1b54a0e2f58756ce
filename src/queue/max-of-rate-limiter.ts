/**
 * Combine limiters: every limiter records the attempt, and the longest delay wins. Forgetting a key
 * forgets it everywhere.
 */
import type { RateLimiter } from './rate-limiter.js';

/**
 * The slowest answer of several limiters.
 *
 * @example
 * const limiter = maxOfRateLimiter(exponentialRateLimiter(), bucketRateLimiter({ clock }));
 */
export function maxOfRateLimiter<K>(...limiters: readonly RateLimiter<K>[]): RateLimiter<K> {
  return {
    when: (key) => limiters.reduce((delay, limiter) => Math.max(delay, limiter.when(key)), 0),
    forget(key) {
      for (const limiter of limiters) limiter.forget(key);
    },
    numRequeues: (key) => limiters.reduce((n, limiter) => Math.max(n, limiter.numRequeues(key)), 0),
  };
}
