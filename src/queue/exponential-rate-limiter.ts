/**
 * Per-key exponential backoff: the n-th consecutive failure of a key waits `base * 2^(n-1)`,
 * capped at `max`, until the key is forgotten (on success). Keys back off independently, so one
 * broken object does not slow the others down.
 */
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
  const base = options.baseDelayMs ?? 5;
  const max = options.maxDelayMs ?? 1_000_000;
  const failures = new Map<K, number>();
  return {
    when(key) {
      const n = failures.get(key) ?? 0;
      failures.set(key, n + 1);
      // 2 ** n is Infinity past n = 1023; Math.min then yields max, so no overflow guard is needed.
      return Math.min(base * 2 ** n, max);
    },
    forget(key) {
      failures.delete(key);
    },
    numRequeues(key) {
      return failures.get(key) ?? 0;
    },
  };
}
