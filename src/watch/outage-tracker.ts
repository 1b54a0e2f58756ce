/**
 * One watcher's outages, as a few lines a person can read: one when an outage starts, one every
 * `everyMs` (30 s) while it lasts, with the attempts made and the last error, and one when it
 * heals, saying how the watch came back and whether anything may have been missed. A 20 s
 * outage is two lines, whatever the number of retries or of namespaces watched.
 *
 * It consumes what a watcher already yields and exposes, with the injected clock: the `error`
 * events (each failed request is one attempt), the events that follow, and the status of each
 * underlying watch. A watcher that is several watches (one per namespace, see
 * `watch-resource.ts`) is one subject: the outage starts with the first watch that fails and
 * heals when every watch that failed is back.
 *
 * A watch is back when:
 * - it delivers a change or a bookmark that is not part of a relist: it resumed;
 * - a relist completes (`synced`): the resourceVersion had expired, or it had never listed;
 * - its status shows a stream opened since its last failure (`reconnects` grew, phase
 *   `watching`) at two status checks `checkMs` apart with no failure between: it resumed, and the
 *   server accepted the resourceVersion (a server that no longer has it answers 410 at once, in
 *   the stream, and the watch relists instead).
 *
 * What may have been missed comes from that: a resumed watch gets every change since its
 * resourceVersion replayed by the server, so nothing is missed; a relist sees the current state
 * only, so intermediate changes may be missing (its changes are counted and reported).
 */
import { errorKind } from '../errors/classify.js';
import { shortErrorMessage } from '../errors/short-message.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { WatcherEvent, WatcherStatus } from './watcher-events.js';
import { plural } from '../util/plural.js';

/**
 * The period of the "still failing" line. One interval for the CLI's stderr and the daemon's log:
 * a person watching a terminal, or an alert reading the log, learns within half a minute that the
 * outage goes on and what the last error is now, and a 20 s outage stays at two lines.
 */
export const OUTAGE_REPORT_EVERY_MS = 30_000;

/** How often the status of the watches that failed is checked while an outage lasts. */
export const OUTAGE_CHECK_MS = 1_000;

/** How a watch came back. */
export type Recovery = 'resumed' | 'relisted' | 'listed';

/** What the tracker says; `message` is the line, the rest is for structured logs. */
export type OutageReport =
  | { kind: 'started'; message: string; attempts: number; lastError: string; errorKind: string }
  | {
      kind: 'ongoing';
      message: string;
      attempts: number;
      lastError: string;
      errorKind: string;
      downSeconds: number;
      /** Watches still down, of `watches`. */
      down: number;
      watches: number;
    }
  | {
      kind: 'healed';
      message: string;
      attempts: number;
      downSeconds: number;
      resumed: number;
      relisted: number;
      listed: number;
      /** Changes found by relists (0 when nothing was relisted). */
      relistChanges: number;
      /** Whether a change may have been missed (something was relisted). */
      mayHaveMissed: boolean;
    };

export interface OutageTrackerOptions {
  /** What is watched, as the lines name it: `pods`, `pods in 3 namespaces`. */
  what: string;
  /** The server's `host:port` (or URL: the host and port are taken from it). */
  server?: string;
  clock: Clock;
  /** The current status of one watch, by its scope. */
  status(scope: string): WatcherStatus | undefined;
  report(report: OutageReport): void;
  /** Which errors are the outage's; default every error. Others are someone else's to report. */
  counts?: (error: Error) => boolean;
  /** Default {@link OUTAGE_REPORT_EVERY_MS}. */
  everyMs?: number;
  /** Default {@link OUTAGE_CHECK_MS}. */
  checkMs?: number;
}

interface DownWatch {
  /** The resourceVersion when it failed: where a resume starts. */
  resourceVersion: string | undefined;
  /** Streams opened when it last failed; more than that means it reconnected. */
  reconnects: number;
  /** A check saw it reconnected with this many streams, at `seenAt`; one more check confirms. */
  seen: number | undefined;
  seenAt: number;
  relisting: boolean;
  relistChanges: number;
  recovered: Recovery | undefined;
  recoveredAt: number;
}

interface Outage {
  since: number;
  attempts: number;
  lastError: Error;
  watches: Map<string, DownWatch>;
  every: TimerHandle;
  check: TimerHandle;
}

/**
 * @example
 * const tracker = new OutageTracker({
 *   what: 'pods', server: client.server, clock: systemClock,
 *   status: () => watcher.status(),
 *   report: (r) => process.stderr.write(`${r.message}\n`),
 * });
 * for await (const event of watcher) tracker.observe('*', event);
 * tracker.close();
 */
export class OutageTracker {
  readonly #o: OutageTrackerOptions;
  readonly #where: string | undefined;
  /** Every scope seen, to say "2 of 5 watches". */
  readonly #scopes = new Set<string>();
  #outage: Outage | undefined;

  constructor(options: OutageTrackerOptions) {
    this.#o = options;
    this.#where = options.server === undefined ? undefined : hostPort(options.server);
  }

  /** Whether an outage is going on. */
  get down(): boolean {
    return this.#outage !== undefined;
  }

  /** Feed every event of the watch `scope`, in order. */
  observe(scope: string, event: WatcherEvent): void {
    this.#scopes.add(scope);
    if (event.type === 'error') {
      if (this.#o.counts === undefined || this.#o.counts(event.error)) this.#failed(scope, event);
      return;
    }
    const watch = this.#outage?.watches.get(scope);
    if (watch === undefined || watch.recovered !== undefined) return;
    switch (event.type) {
      case 'listing':
        watch.relisting ||= event.relist;
        return;
      case 'initial':
        return;
      case 'synced':
        this.#recovered(watch, watch.relisting ? 'relisted' : 'listed');
        return;
      case 'added':
      case 'modified':
      case 'deleted':
        if (watch.relisting) watch.relistChanges++;
        else this.#recovered(watch, 'resumed');
        return;
      case 'bookmark':
        if (!watch.relisting) this.#recovered(watch, 'resumed');
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }

  /** Stop the timers (the watcher ended); an outage still going on is not reported as healed. */
  close(): void {
    if (this.#outage !== undefined) this.#stopTimers(this.#outage);
    this.#outage = undefined;
  }

  #failed(scope: string, event: Extract<WatcherEvent, { type: 'error' }>): void {
    const { clock } = this.#o;
    let outage = this.#outage;
    const start = outage === undefined;
    if (outage === undefined) {
      outage = {
        since: clock.now(),
        attempts: 0,
        lastError: event.error,
        watches: new Map(),
        every: clock.setTimeout(() => this.#ongoing(), this.#everyMs(), { background: true }),
        check: clock.setTimeout(() => this.#check(), this.#checkMs(), { background: true }),
      };
      this.#outage = outage;
    }
    outage.attempts++;
    outage.lastError = event.error;
    const known = outage.watches.get(scope);
    if (known === undefined || known.recovered !== undefined) {
      outage.watches.set(scope, {
        resourceVersion: event.status.resourceVersion,
        reconnects: event.status.reconnects,
        seen: undefined,
        seenAt: 0,
        relisting: false,
        relistChanges: 0,
        recovered: undefined,
        recoveredAt: 0,
      });
    } else {
      known.reconnects = event.status.reconnects;
      known.seen = undefined;
    }
    if (start) {
      const what = shortErrorMessage(event.error);
      const where = this.#where ?? 'the server';
      // An answer says the server is reachable; anything else is a failure to reach it.
      const failure = isAnswer(event.error) ? `${where} answered ${what}` : `cannot reach ${where} (${what})`;
      this.#o.report({
        kind: 'started',
        message: `${this.#o.what}: ${failure}; retrying`,
        attempts: outage.attempts,
        lastError: what,
        errorKind: errorKind(event.error),
      });
    }
  }

  #ongoing(): void {
    const outage = this.#outage;
    if (outage === undefined) return;
    outage.every = this.#o.clock.setTimeout(() => this.#ongoing(), this.#everyMs(), { background: true });
    const down = [...outage.watches.values()].filter((w) => w.recovered === undefined).length;
    const watches = this.#scopes.size;
    const downSeconds = this.#seconds(outage);
    const lastError = shortErrorMessage(outage.lastError);
    const which = watches > 1 ? ` (${down} of ${watches} watches)` : '';
    this.#o.report({
      kind: 'ongoing',
      message: `${this.#o.what}: still failing after ${downSeconds} s${which}, ${plural(outage.attempts, 'attempt')}; last error: ${lastError}`,
      attempts: outage.attempts,
      lastError,
      errorKind: errorKind(outage.lastError),
      downSeconds,
      down,
      watches,
    });
  }

  /** Look at the status of each watch still down: a stream opened since it failed, twice in a row. */
  #check(): void {
    const outage = this.#outage;
    if (outage === undefined) return;
    outage.check = this.#o.clock.setTimeout(() => this.#check(), this.#checkMs(), { background: true });
    for (const [scope, watch] of outage.watches) {
      if (watch.recovered !== undefined || watch.relisting) continue;
      const status = this.#o.status(scope);
      const open =
        status !== undefined && status.phase === 'watching' && status.reconnects > watch.reconnects;
      if (!open) {
        watch.seen = undefined;
        continue;
      }
      if (watch.seen === status.reconnects) this.#recovered(watch, 'resumed', watch.seenAt);
      else {
        watch.seen = status.reconnects;
        watch.seenAt = this.#o.clock.now();
      }
      if (this.#outage === undefined) return;
    }
  }

  /** `at`: when it came back (a check confirms a reconnection seen one check earlier). */
  #recovered(watch: DownWatch, how: Recovery, at = this.#o.clock.now()): void {
    watch.recovered = how;
    watch.recoveredAt = at;
    const outage = this.#outage;
    if (outage === undefined) return;
    const all = [...outage.watches.values()];
    if (all.some((w) => w.recovered === undefined)) return;
    this.#stopTimers(outage);
    this.#outage = undefined;
    const count = (r: Recovery): number => all.filter((w) => w.recovered === r).length;
    const relistChanges = all.reduce((n, w) => n + w.relistChanges, 0);
    const resumed = count('resumed');
    const relisted = count('relisted');
    const listed = count('listed');
    const back = Math.max(...all.map((w) => w.recoveredAt));
    const downSeconds = Math.round((back - outage.since) / 1000);
    this.#o.report({
      kind: 'healed',
      message: `${this.#o.what}: reconnected after ${downSeconds} s; ${healed(all, relistChanges)}`,
      attempts: outage.attempts,
      downSeconds,
      resumed,
      relisted,
      listed,
      relistChanges,
      mayHaveMissed: relisted > 0,
    });
  }

  #stopTimers(outage: Outage): void {
    this.#o.clock.clearTimeout(outage.every);
    this.#o.clock.clearTimeout(outage.check);
  }

  #seconds(outage: Outage): number {
    return Math.round((this.#o.clock.now() - outage.since) / 1000);
  }

  #everyMs(): number {
    return this.#o.everyMs ?? OUTAGE_REPORT_EVERY_MS;
  }

  #checkMs(): number {
    return this.#o.checkMs ?? OUTAGE_CHECK_MS;
  }
}

/**
 * How the watches came back, and what that means for changes: a resume misses nothing (the server
 * replays every change); a relist gives each object's latest state, so what it cannot show is the
 * states in between and objects both created and deleted meanwhile; a first list starts the view.
 */
function healed(watches: readonly DownWatch[], relistChanges: number): string {
  const one = watches.length === 1;
  const by = (r: Recovery): DownWatch[] => watches.filter((w) => w.recovered === r);
  const [resumed, relisted, listed] = [by('resumed'), by('relisted'), by('listed')];
  const parts: string[] = [];
  if (resumed.length > 0) {
    const rv = resumed[0]?.resourceVersion;
    parts.push(
      !one
        ? `${plural(resumed.length, 'watch', 'watches')} resumed from their resourceVersions`
        : rv === undefined
          ? 'resumed'
          : `resumed from resourceVersion ${rv}`,
    );
  }
  if (relisted.length > 0) {
    const rv = relisted[0]?.resourceVersion;
    const why = !one
      ? `${plural(relisted.length, 'watch', 'watches')} relisted (their resourceVersions had expired)`
      : `relisted (resourceVersion ${rv ?? '(none)'} had expired)`;
    parts.push(
      relistChanges === 0
        ? `${why}: no object changed`
        : `${why}: ${plural(relistChanges, 'change')} found, each object's latest state`,
    );
  }
  if (listed.length > 0) parts.push(one ? 'listed' : `${plural(listed.length, 'watch', 'watches')} listed`);
  const verdict =
    relisted.length === 0
      ? 'nothing missed'
      : relistChanges === 0
        ? 'only an object both created and deleted meanwhile could have gone unseen'
        : 'states in between, and objects both created and deleted meanwhile, were not seen';
  return `${parts.join(', ')}; ${verdict}`;
}

/** An answer from the server (it is reachable), not a network failure. */
function isAnswer(error: Error): boolean {
  return errorKind(error).startsWith('api:');
}

/** `host:port` of a URL (the port made explicit), or the text as given when it is not a URL. */
export function hostPort(server: string): string {
  try {
    const url = new URL(server);
    const port = url.port !== '' ? url.port : url.protocol === 'http:' ? '80' : '443';
    return `${url.hostname}:${port}`;
  } catch {
    return server;
  }
}
