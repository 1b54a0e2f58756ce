/**
 * The log lines of one sink's failing deliveries: a receiver that is down fails every attempt of
 * every object, so one warn line per attempt would drown the log. Instead:
 *
 * - the first failure is logged at warn at once, with the error and when the next attempt is;
 * - further failures are counted, and logged at most once per interval (30 s) with how many
 *   attempts failed since the previous line;
 * - the first success after failures is logged at info (`delivering again`), with the failures
 *   not reported yet, so every failure is accounted for.
 *
 * Error messages are the sinks' own, which name a URL as `scheme://host/…` only (`scrub-url.ts`):
 * tokens in paths, queries and user info never reach the log.
 */
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';

/** One warn line per sink per this long, at most: a day-long outage is ~3 000 lines, not millions. */
export const FAILURE_LOG_INTERVAL_MS = 30_000;

export interface FailedAttempt {
  /** The event's id. */
  event: string;
  attempt: number;
  /** When the next attempt is. */
  retryInMs: number;
  err: string;
}

export class FailureLog {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  /** Failures since the last line. */
  #unreported = 0;
  #lastLineAt: number | undefined;
  #failingSince: number | undefined;

  constructor(logger: Logger, clock: Clock, intervalMs = FAILURE_LOG_INTERVAL_MS) {
    this.#logger = logger;
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  failed(attempt: FailedAttempt): void {
    const now = this.#clock.now();
    this.#failingSince ??= now;
    this.#unreported++;
    if (this.#lastLineAt !== undefined && now - this.#lastLineAt < this.#intervalMs) return;
    this.#logger.warn(
      {
        failures: this.#unreported,
        failingForMs: now - this.#failingSince,
        event: attempt.event,
        attempt: attempt.attempt,
        retryInMs: attempt.retryInMs,
        err: attempt.err,
      },
      'delivery failed; retrying',
    );
    this.#unreported = 0;
    this.#lastLineAt = now;
  }

  succeeded(): void {
    if (this.#failingSince === undefined) return;
    this.#logger.info(
      { failuresSinceLastLine: this.#unreported, failedForMs: this.#clock.now() - this.#failingSince },
      'delivering again',
    );
    this.#unreported = 0;
    this.#lastLineAt = undefined;
    this.#failingSince = undefined;
  }
}
