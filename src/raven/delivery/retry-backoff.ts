/**
 * How long to wait before the next attempt at an event: the project's backoff
 * (`util/backoff.ts`), doubling per failure from `initialMs` up to `maxMs`, with equal jitter (a
 * random point in the upper half of the step) so that many objects failing at once against one
 * receiver do not retry in lockstep, while the wait never falls below half the step.
 */
import { backoffDelay, EQUAL_JITTER } from '../../util/backoff.js';

export interface RetryBackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A number in [0, 1); injected so tests are deterministic. */
  random: () => number;
}

/**
 * @example
 * retryBackoffMs(1, { initialMs: 500, maxMs: 60_000, random: () => 1 }); // => 500
 * retryBackoffMs(3, { initialMs: 500, maxMs: 60_000, random: () => 0 }); // => 1000
 */
export function retryBackoffMs(failures: number, options: RetryBackoffOptions): number {
  const { initialMs, maxMs, random } = options;
  return backoffDelay({ initialMs, maxMs, factor: 2, jitter: EQUAL_JITTER }, failures, random);
}
