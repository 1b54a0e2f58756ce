/**
 * The limiter controllers use unless told otherwise: per-key exponential backoff (5 ms doubling to
 * 1000 s), bounded overall by a token bucket (10 qps, burst 100) so that a mass failure cannot
 * turn into a retry storm against the apiserver.
 */
import type { Clock } from '../util/clock.js';
import { bucketRateLimiter } from './bucket-rate-limiter.js';
import { exponentialRateLimiter } from './exponential-rate-limiter.js';
import { maxOfRateLimiter } from './max-of-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * `max(per-key exponential, overall bucket)`.
 *
 * @example
 * const queue = createRateLimitingQueue({ rateLimiter: defaultControllerRateLimiter({ clock }) });
 */
export function defaultControllerRateLimiter<K>(options: { clock?: Clock } = {}): RateLimiter<K> {
  const bucket = bucketRateLimiter<K>({ ...(options.clock === undefined ? {} : { clock: options.clock }) });
  return maxOfRateLimiter<K>(exponentialRateLimiter<K>(), bucket);
}
