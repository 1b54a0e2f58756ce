/**
 * How long a watcher waits before its next request, by what went wrong.
 *
 * Guarantees:
 * - Connection-level failures (refused, reset, timed out, a dead connection: no HTTP answer) wait
 *   briefly, 100 ms growing to at most 1 s: nothing reached the apiserver's handlers, and the watch
 *   must resume within a second or two of the server answering again, whatever happened before.
 * - Answers that say "not now" (5xx, an in-stream error, a stream that ended at once with nothing)
 *   back off exponentially, 0.8 s to 30 s, so a struggling apiserver is not hammered.
 * - A `Retry-After` from the server is honoured as given (plus up to 20 % jitter, at most 10 min),
 *   whatever the backoff says.
 * - A 2xx answer forgets connection failures (the network path works); a delivered event or a
 *   complete list forgets every failure. A stream that delivered events is healthy however short.
 *
 * All delays are jittered so watchers that failed together do not return in lock-step.
 */
import { isConnectionFailure, retryAfterSeconds } from '../errors/classify.js';
import { Backoff, type BackoffOptions } from '../util/backoff.js';

export interface ReconnectPolicyOptions {
  /** Backoff for answered failures. Default 800 ms to 30 s, factor 2, jitter 0.2. */
  backoff?: BackoffOptions;
  /**
   * Backoff for connection-level failures. Default 100 ms to 1 s, factor 2, jitter 0.5: about one
   * attempt a second while the server is unreachable, and back within ~1 s once it answers.
   */
  connectBackoff?: BackoffOptions;
  random?: () => number;
}

/** The longest Retry-After honoured as given; a larger one is clamped (a misconfigured proxy). */
const MAX_RETRY_AFTER_MS = 600_000;

export class ReconnectPolicy {
  readonly #answered: Backoff;
  readonly #connect: Backoff;
  readonly #random: () => number;
  #told = 0;

  constructor(options: ReconnectPolicyOptions = {}) {
    this.#random = options.random ?? Math.random;
    this.#answered = new Backoff({ random: this.#random, ...options.backoff });
    this.#connect = new Backoff({
      initialMs: 100,
      maxMs: 1_000,
      jitter: 0.5,
      random: this.#random,
      ...options.connectBackoff,
    });
  }

  /** Consecutive failures since the last success, of any kind. */
  get failures(): number {
    return this.#answered.failures + this.#connect.failures + this.#told;
  }

  /** Record `error` (undefined: a stream ended at once with nothing) and return the wait before retrying. */
  delayAfter(error: unknown): number {
    const told = retryAfterSeconds(error);
    if (told !== undefined) {
      this.#told++;
      return Math.round(Math.min(MAX_RETRY_AFTER_MS, told * 1000) * (1 + 0.2 * this.#random()));
    }
    if (error !== undefined && isConnectionFailure(error)) return this.#connect.fail();
    return this.#answered.fail();
  }

  /** The server answered a request with 2xx: the connection works. */
  connected(): void {
    this.#connect.succeeded();
  }

  /** The server delivered an event or a complete list: every failure is forgotten. */
  succeeded(): void {
    this.#connect.succeeded();
    this.#answered.succeeded();
    this.#told = 0;
  }
}
