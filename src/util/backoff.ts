/**
 * The one backoff policy: every wait between attempts in Raven (watch reconnects, sink delivery
 * retries, OpenStack call retries, load balancer polling, per-key queue retries, start-up retries
 * of the daemon and the translator) is computed here.
 *
 * The n-th consecutive failure waits `initialMs * factor^(n-1)`, capped at `maxMs`, times a random
 * factor drawn from the policy's `jitter` range, capped at `maxMs` again and rounded to whole
 * milliseconds. Jitter is what keeps many callers that failed together (every watcher after an
 * apiserver restart, every object routed to one receiver that went down) from retrying in
 * lock-step; a policy without jitter is for a single caller only (a per-key queue limiter, whose
 * keys already fail at different times).
 *
 * Each use names its constants where it is configured, with the reason for them.
 */

/**
 * The spread of one wait, as fractions of its step: `[low, high]`, or a number `j` meaning
 * `[1 - j, 1 + j]` (a step of 1 s with `0.2` waits 0.8 s to 1.2 s).
 */
export type Jitter = number | readonly [low: number, high: number];

/** No jitter: every wait is exactly its step. */
export const NO_JITTER: Jitter = 0;

/**
 * "Equal jitter": a random point in the upper half of the step, so the wait never falls below
 * half the step while callers still spread out.
 */
export const EQUAL_JITTER: Jitter = [0.5, 1];

export interface BackoffPolicy {
  /** The first wait (before jitter). */
  initialMs: number;
  /** The longest wait, jitter included. */
  maxMs: number;
  /** Growth per consecutive failure. */
  factor: number;
  jitter: Jitter;
}

/**
 * The wait after the `failures`-th consecutive failure (1 for the first); `random` returns a
 * number in [0, 1) and is injected so tests are deterministic.
 *
 * @example
 * backoffDelay({ initialMs: 500, maxMs: 60_000, factor: 2, jitter: EQUAL_JITTER }, 3, () => 0); // => 1000
 * backoffDelay({ initialMs: 800, maxMs: 30_000, factor: 2, jitter: 0.2 }, 1, () => 0.5); // => 800
 */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number): number {
  // factor ** n is Infinity for a large n; Math.min then yields maxMs, so no overflow guard is needed.
  const step = Math.min(policy.maxMs, policy.initialMs * policy.factor ** Math.max(0, failures - 1));
  const [low, high] =
    typeof policy.jitter === 'number' ? [1 - policy.jitter, 1 + policy.jitter] : policy.jitter;
  const spread = low + (high - low) * random();
  return Math.round(Math.min(policy.maxMs, step * spread));
}

export interface BackoffOptions {
  /** First delay. Default 800 ms. */
  initialMs?: number;
  /** Ceiling. Default 30 s. */
  maxMs?: number;
  /** Growth per failure. Default 2. */
  factor?: number;
  /** Relative jitter (0..1) or a `[low, high]` range; see {@link Jitter}. Default 0.2. */
  jitter?: Jitter;
  /** Random numbers in [0, 1); injected for tests. */
  random?: () => number;
}

/**
 * {@link backoffDelay} with its failure count: {@link Backoff.fail} records a failure and returns
 * the wait, {@link Backoff.succeeded} starts over. The defaults (0.8 s doubling to 30 s, ±20 %)
 * are the watcher's for failed answers: see `watch/reconnect-policy.ts`.
 *
 * @example
 * const backoff = new Backoff({ initialMs: 1_000, maxMs: 5_000, factor: 1.5, jitter: 0.1 });
 * await sleep(clock, backoff.fail(), signal);
 */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #random: () => number;
  #failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.#policy = {
      initialMs: options.initialMs ?? 800,
      maxMs: options.maxMs ?? 30_000,
      factor: options.factor ?? 2,
      jitter: options.jitter ?? 0.2,
    };
    this.#random = options.random ?? Math.random;
  }

  /** Consecutive failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Record a failure and return how long to wait before the next attempt. */
  fail(): number {
    this.#failures++;
    return backoffDelay(this.#policy, this.#failures, this.#random);
  }

  /** Forget past failures. */
  succeeded(): void {
    this.#failures = 0;
  }
}
