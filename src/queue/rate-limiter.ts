/**
 * How long a key should wait before its next retry. Implementations are small and combine with
 * `maxOfRateLimiter`; the contract every one of them keeps:
 * - `when(key)` records one more attempt for `key` and returns a delay in ms, finite and >= 0;
 * - `numRequeues(key)` is how many attempts are recorded for `key` (0 for limiters that do not
 *   count per key);
 * - `forget(key)` drops what is recorded for `key`, so its next delay starts from scratch.
 */
export interface RateLimiter<K> {
  when(key: K): number;
  forget(key: K): void;
  numRequeues(key: K): number;
}
