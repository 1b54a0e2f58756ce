/**
 * Exponential backoff with jitter for reconnects and relists.
 *
 * Delays grow from `initialMs` by `factor` per consecutive failure up to `maxMs`, each multiplied
 * by a random factor in [1 - jitter, 1 + jitter] so that many watchers restarting together (after an
 * apiserver restart) do not reconnect in lock-step. {@link Backoff.succeeded} resets the sequence;
 * the watcher calls it once a stream has been stable for a while, not on the first byte, so a
 * server that accepts and drops every stream still sees the delays grow.
 */

export interface BackoffOptions {
  /** First delay. Default 800 ms. */
  initialMs?: number;
  /** Ceiling. Default 30 s. */
  maxMs?: number;
  /** Growth per failure. Default 2. */
  factor?: number;
  /** Relative jitter, 0..1. Default 0.2. */
  jitter?: number;
  /** Random numbers in [0, 1); injected for tests. */
  random?: () => number;
}

export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 800;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#factor = options.factor ?? 2;
    this.#jitter = options.jitter ?? 0.2;
    this.#random = options.random ?? Math.random;
  }

  /** Consecutive failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Record a failure and return how long to wait before the next attempt. */
  fail(): number {
    const exponent = this.#failures;
    this.#failures++;
    const base = Math.min(this.#maxMs, this.#initialMs * this.#factor ** exponent);
    const spread = 1 + this.#jitter * (2 * this.#random() - 1);
    return Math.round(Math.min(this.#maxMs, base * spread));
  }

  /** Forget past failures. */
  succeeded(): void {
    this.#failures = 0;
  }
}
