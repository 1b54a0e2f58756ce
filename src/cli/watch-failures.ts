/**
 * What `raven watch` does when its watcher reports a failure. The watcher never ends by itself
 * (it yields an `error` event per failure and keeps recovering); the CLI decides, from the
 * error's classification (`watchFailure` in errors/classify.ts):
 *
 * - transient (no connection, 5xx, 429, 410, a broken stream): keep going, quietly here: the
 *   outage is reported by the watch's outage tracker (`watch/outage-tracker.ts`: a line when it
 *   starts, one every 30 s, one when it heals), not once per retry;
 * - invalid request (400, 422, ...) or credentials refused after a refresh (401): end, exit 1;
 * - 403: end, unless the user passed `--wait-for-rbac`; then it is reported once (again only after
 *   the watch has made progress in between) and the watcher keeps retrying until access is granted;
 * - 404: ask discovery again; end when the resource is no longer served, keep going when it is
 *   (a CRD not yet established answers 404 for a moment).
 */
import { watchFailure } from '../errors/classify.js';
import type { WatcherStatus } from '../watch/watcher-events.js';

/** Keep watching (printing `notice` on stderr, when there is one), or end with `message`. */
export type FailureVerdict = { end: false; notice: string | undefined } | { end: true; message: string };

export interface WatchFailuresOptions {
  /** Keep retrying on 403 (`--wait-for-rbac`). */
  waitForRbac: boolean;
  /** The resource as the user should read it: `pods`, `widgets.example.com/v1`. */
  resource: string;
  /** Refresh discovery and say whether the watched resource is still served. */
  stillServed: () => Promise<boolean>;
}

/**
 * Judges each failure of one `raven watch`.
 *
 * @example
 * const failures = new WatchFailures({ waitForRbac: false, resource: 'pods', stillServed: async () => true });
 * for await (const event of watcher) {
 *   if (event.type !== 'error') continue;
 *   const verdict = await failures.judge(event.error, event.status);
 *   if (verdict.end) {
 *     process.stderr.write(`raven watch: ${verdict.message}\n`);
 *     process.exitCode = 1;
 *     break;
 *   }
 *   if (verdict.notice !== undefined) process.stderr.write(`raven watch: ${verdict.notice}\n`);
 * }
 */
export class WatchFailures {
  readonly #o: WatchFailuresOptions;
  #forbiddenReported = false;

  constructor(options: WatchFailuresOptions) {
    this.#o = options;
  }

  /** The watch made progress (an object, a sync or a bookmark arrived): report a new refusal again. */
  progressed(): void {
    this.#forbiddenReported = false;
  }

  async judge(error: Error, status: WatcherStatus): Promise<FailureVerdict> {
    const kind = watchFailure(error);
    switch (kind) {
      case 'transient':
        return keepGoing(undefined);
      case 'invalid':
        return { end: true, message: error.message };
      case 'unauthorized':
        return { end: true, message: `${error.message}; the credentials were refused after refreshing them` };
      case 'forbidden':
        if (!this.#o.waitForRbac)
          return {
            end: true,
            message: `${error.message}; pass --wait-for-rbac to keep waiting until access is granted`,
          };
        if (this.#forbiddenReported) return keepGoing(undefined);
        this.#forbiddenReported = true;
        return keepGoing(`${error.message}; waiting for access to be granted (--wait-for-rbac)`);
      case 'not-found':
        return this.#rediscover(error, status);
      default: {
        const unreachable: never = kind;
        return unreachable;
      }
    }
  }

  async #rediscover(error: Error, status: WatcherStatus): Promise<FailureVerdict> {
    let served: boolean;
    try {
      served = await this.#o.stillServed();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return keepGoing(`${error.message}; asking discovery again failed (${why}); retrying${inARow(status)}`);
    }
    if (!served)
      return { end: true, message: `the server no longer serves ${this.#o.resource}: ${error.message}` };
    return keepGoing(
      `${error.message}; discovery still lists ${this.#o.resource}; retrying${inARow(status)}`,
    );
  }
}

function keepGoing(notice: string | undefined): FailureVerdict {
  return { end: false, notice };
}

function inARow(status: WatcherStatus): string {
  return status.failures > 1 ? ` (${status.failures} failures in a row)` : '';
}
