/**
 * How long to wait before the next attempt at an event: exponential from `initialMs`, doubling
 * per failure up to `maxMs`, with "equal jitter" (a random point in the upper half of the step)
 * so that many objects failing at once against one receiver do not retry in lockstep, while the
 * wait never falls below half the step.
 */

export interface RetryBackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A number in [0, 1); injected so tests are deterministic. */
  random: () => number;
}

/**
 * @example
 * retryBackoffMs(1, { initialMs: 500, maxMs: 60_000, random: () => 1 }); // => ~500
 * retryBackoffMs(3, { initialMs: 500, maxMs: 60_000, random: () => 0 }); // => 1000
 */
export function retryBackoffMs(failures: number, options: RetryBackoffOptions): number {
  const step = Math.min(options.maxMs, options.initialMs * 2 ** Math.max(0, failures - 1));
  return Math.round(step / 2 + options.random() * (step / 2));
}
