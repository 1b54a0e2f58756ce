/**
 * An overall token bucket shared by every key: `burst` retries may go at once, then they are
 * spread out at `qps` per second, whatever the keys. It protects the apiserver when many keys
 * fail together. Each `when` reserves a token, possibly in the future, and returns how long to
 * wait for it; the bucket refills continuously on the injected clock.
 */
import { systemClock, type Clock } from '../util/clock.js';
import { RavenError } from '../errors/raven-error.js';
import type { RateLimiter } from './rate-limiter.js';

export interface BucketRateLimiterOptions {
  /** Sustained retries per second; default 10. */
  qps?: number;
  /** Retries allowed at once from a full bucket; default 100. */
  burst?: number;
  clock?: Clock;
}

/**
 * Create a token-bucket limiter (10 qps, burst 100 by default).
 *
 * @example
 * const limiter = bucketRateLimiter({ qps: 5, burst: 20, clock });
 */
export function bucketRateLimiter<K>(options: BucketRateLimiterOptions = {}): RateLimiter<K> {
  const qps = options.qps ?? 10;
  const burst = options.burst ?? 100;
  const clock = options.clock ?? systemClock;
  if (!(qps > 0) || !(burst >= 1)) {
    throw new RavenError(
      'ERR_INVALID_ARGUMENT',
      `bucket rate limiter needs qps > 0 and burst >= 1, got qps=${qps} burst=${burst}`,
    );
  }
  let tokens = burst;
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) * qps) / 1000);
      last = now;
      tokens -= 1;
      return tokens >= 0 ? 0 : (-tokens * 1000) / qps;
    },
    forget: () => undefined,
    numRequeues: () => 0,
  };
}
