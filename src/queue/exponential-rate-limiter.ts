/**
 * Per-key exponential backoff: the n-th consecutive failure of a key waits `base * 2^(n-1)`,
 * capped at `max`, until the key is forgotten (on success). Keys back off independently, so one
 * broken object does not slow the others down. The delay is the project's backoff
 * (`util/backoff.ts`) without jitter, as client-go's per-item limiter: keys fail at their own
 * times, and a bucket limiter beside it (`defaultControllerRateLimiter`) spreads the load.
 */
import { backoffDelay, NO_JITTER } from '../util/backoff.js';
import type { RateLimiter } from './rate-limiter.js';

export interface ExponentialRateLimiterOptions {
  /** First delay; default 5 ms, short enough that a transient conflict retries at once. */
  baseDelayMs?: number;
  /** Ceiling; default 1000 s, so a persistently failing key is still retried every ~17 minutes. */
  maxDelayMs?: number;
}

/**
 * Create a per-key exponential limiter: 5 ms, 10 ms, 20 ms, ... up to 1000 s by default.
 *
 * @example
 * const limiter = exponentialRateLimiter<ObjectKey>({ baseDelayMs: 100, maxDelayMs: 60_000 });
 * limiter.when(key); // 100, then 200, 400, ...
 */
export function exponentialRateLimiter<K>(options: ExponentialRateLimiterOptions = {}): RateLimiter<K> {
  const policy = {
    initialMs: options.baseDelayMs ?? 5,
    maxMs: options.maxDelayMs ?? 1_000_000,
    factor: 2,
    jitter: NO_JITTER,
  };
  const failures = new Map<K, number>();
  return {
    when(key) {
      const n = (failures.get(key) ?? 0) + 1;
      failures.set(key, n);
      return backoffDelay(policy, n, noRandom);
    },
    forget(key) {
      failures.delete(key);
    },
    numRequeues(key) {
      return failures.get(key) ?? 0;
    },
  };
}

/** Without jitter the random draw is not used. */
function noRandom(): number {
  return 0;
}
