/**
 * Delivers one sink's events: at least once, in order per object, retrying with backoff, with a
 * bounded backlog. Every sink gets its own `SinkDelivery`, so a slow or failing sink never holds
 * up another; `enqueue` never waits for the sink.
 *
 * What the owner decided about an event travels with it (`Routing`): `silent` events pass through
 * the queue in order without reaching the sink (a filtered change whose checkpoint must advance);
 * `alreadyDelivered` is asked when the event reaches the head of its object's queue, after every
 * earlier event of the object settled, and skips one the sink already has (a change replayed
 * after a restart); `settled` is told how the event left the queue. Gap notices travel in a lane
 * of their own per watcher.
 *
 * Guarantees:
 * - Order per object: the events of one object (same resource, namespace and name) are handed to
 *   the sink one after another, each only after the previous one was delivered or given up on.
 *   Different objects are delivered concurrently, at most `concurrency` at a time.
 * - At least once: a failed attempt is retried while the error is retryable, waiting
 *   exponentially longer (with jitter; the receiver's Retry-After wins when it gives one), up to
 *   `maxAttempts` attempts. Then, or at once for a non-retryable error, the event is written to
 *   the dead-letter file, `onDeadLetter` is called, and the object's later events go on.
 *   A retry waiting for its time does not hold a concurrency slot.
 * - Failures are logged at warn at most once per 30 s per sink, with a count (`failure-log.ts`).
 * - Bounded memory: at most `maxBacklog` events are held, beyond those a resync queued (until the
 *   backlog is under `maxBacklog` again: a catch-up is never dropped by its own size). One more and the delivery becomes
 *   `overflowed`: it drops every queued event (deliveries already in flight finish), remembers
 *   which objects were affected, drops (and remembers) every later event, and calls `onOverflow`.
 *   Once the deliveries it still had in flight have finished (delivered, dropped or
 *   dead-lettered), it calls `onOverflowDrained`: what this sink last confirmed (`onDelivered`)
 *   is then final, and the owner calls {@link SinkDelivery.resync} with one event per object
 *   computed from its cache against it: intermediate states are coalesced into one change from
 *   the last delivered state to the current one, and nothing is lost. Compute and call `resync`
 *   in one synchronous step: an event enqueued in between would be dropped (and remembered for
 *   the next overflow's resync only).
 *
 * Shutdown: `close(deadlineMs)` stops taking events and drains what is held (retries included)
 * until the deadline, then aborts; `destroy()` stops at once. Both close the sink.
 */
import { errorKind, isRetryable } from '../../errors/classify.js';
import { systemClock, type Clock, type TimerHandle } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
import { eventObjectKey, type ResourceId } from '../model/change-event.js';
import type { SinkRecord } from '../model/gap-notice.js';
import type { RoutedRecord, Routing, Settlement, Verdict } from '../model/delivery-verdict.js';
import { sinkRetryAfterMs } from '../sinks/sink-http-error.js';
import type { Sink } from '../sinks/sink.js';
import { deliveryEnqueueChannel, deliverySettleChannel } from '../model/diagnostics.js';
import { DeadLetterFile, deadLetterError, type DeadLetterWriter } from './dead-letter.js';
import { noopDeliveryMetrics, type DeliveryMetrics } from '../metrics/delivery-metrics.js';
import { FailureLog } from './failure-log.js';
import { retryBackoffMs } from './retry-backoff.js';

export type { RoutedRecord, Routing, Settlement, Verdict };

export interface SinkDeliveryOptions {
  /** Objects delivered at the same time; default 4. */
  concurrency?: number;
  /** Attempts per event before it is dead-lettered; default 8. */
  maxAttempts?: number;
  /** First retry wait; default 500 ms, doubling per failure. */
  initialBackoffMs?: number;
  /** Longest computed wait; default 60 000 ms. */
  maxBackoffMs?: number;
  /** A receiver's Retry-After is honoured up to this; default 15 minutes. */
  maxRetryAfterMs?: number;
  /** Events held before the delivery overflows; default 10 000. */
  maxBacklog?: number;
  /** JSONL file for events given up on; without it (and `deadLetter`) they are only logged. */
  deadLetterPath?: string;
  /** A writer to use instead of a file at `deadLetterPath`. */
  deadLetter?: DeadLetterWriter;
  clock?: Clock;
  /** Jitter source in [0, 1); default Math.random. */
  random?: () => number;
  logger?: Logger;
  metrics?: DeliveryMetrics;
  /** After the sink accepted an event, or a silent one passed (record checkpoints here). */
  onDelivered?: (event: SinkRecord) => void;
  /** After an event was given up on and dead-lettered. */
  onDeadLetter?: (event: SinkRecord, error: unknown) => void;
  /** Once per overflow: queued events were dropped; call `resync` to catch up. */
  onOverflow?: () => void;
  /**
   * Once per overflow, after `onOverflow`, when nothing it held is in flight any more (at once if
   * nothing was): what the sink confirmed is final, the moment to compute and call `resync`.
   * Called from inside whatever call finished the last delivery, `enqueue` included: defer the
   * resync if the caller may be in the middle of something.
   */
  onOverflowDrained?: () => void;
}

/** `running`, `overflowed` (dropping until `resync`), `closing` (draining), `closed`. */
export type DeliveryState = 'running' | 'overflowed' | 'closing' | 'closed';

/** An object whose events were dropped by an overflow. */
export interface OverflowedObject {
  watcher: string;
  resource: ResourceId;
  namespace: string | undefined;
  name: string;
}

export interface CloseResult {
  /** Events still held at the deadline (abandoned). */
  left: number;
  /** Objects with dropped events awaiting a resync that never came. */
  overflowedObjects: number;
}

interface Pending {
  event: SinkRecord;
  routing: Routing;
  enqueuedAt: number;
  attempts: number;
}

/** One object's events. `busy`: its head is being delivered or dead-lettered. */
interface Lane {
  key: string;
  pending: Pending[];
  busy: boolean;
  timer: TimerHandle | undefined;
}

/**
 * Per-object ordering key: the resource too, so a Service and a Deployment named alike do not
 * wait on each other. Gap notices have a lane per watcher.
 */
function laneKey(event: SinkRecord): string {
  if (event.type === 'gap') return `gap:${event.watcher}`;
  return `${event.resource.group}/${event.resource.resource}:${eventObjectKey(event)}`;
}

/**
 * @example
 * import { WebhookSink } from 'kube-raven/sinks';
 * const delivered: SinkRecord[] = [];
 * const delivery = new SinkDelivery(new WebhookSink({ name: 'audit', url: 'https://audit.example/changes' }), {
 *   deadLetterPath: '/var/lib/raven/dead-letter.jsonl',
 *   onDelivered: (event) => delivered.push(event),
 *   // queued events were dropped; nothing is in flight now: queue the latest state of each object
 *   onOverflowDrained: () => delivery.resync(latestPerObject.map((record: SinkRecord) => ({ record }))),
 * });
 * delivery.enqueue(event);
 * await delivery.close(10_000);
 */
export class SinkDelivery {
  readonly sink: Sink;
  readonly #concurrency: number;
  readonly #maxAttempts: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #maxBacklog: number;
  readonly #deadLetter: DeadLetterWriter | undefined;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: Logger;
  readonly #metrics: DeliveryMetrics;
  readonly #failures: FailureLog;
  readonly #options: SinkDeliveryOptions;
  readonly #abort = new AbortController();
  readonly #lanes = new Map<string, Lane>();
  #ready: Lane[] = [];
  #active = 0;
  #backlog = 0;
  /**
   * The backlog at which one more event overflows: `maxBacklog`, raised by a resync's own events
   * until the backlog is under `maxBacklog` again, so that a catch-up larger than the bound is not
   * itself dropped by the next live event (and recomputed, and dropped again, for as long as the
   * sink is slower than the resync is large).
   */
  #limit: number;
  #state: DeliveryState = 'running';
  /** Overflowed, and `onOverflowDrained` not called yet. */
  #draining = false;
  readonly #overflowed = new Map<string, OverflowedObject>();
  #idleWaiters: (() => void)[] = [];

  constructor(sink: Sink, options: SinkDeliveryOptions = {}) {
    this.sink = sink;
    this.#options = options;
    this.#concurrency = Math.max(1, options.concurrency ?? 4);
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 8);
    this.#initialBackoffMs = options.initialBackoffMs ?? 500;
    this.#maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 15 * 60_000;
    this.#maxBacklog = Math.max(1, options.maxBacklog ?? 10_000);
    this.#limit = this.#maxBacklog;
    this.#deadLetter =
      options.deadLetter ??
      (options.deadLetterPath === undefined ? undefined : new DeadLetterFile(options.deadLetterPath));
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#logger = (options.logger ?? silentLogger).child({ sink: sink.name });
    this.#metrics = options.metrics ?? noopDeliveryMetrics;
    this.#failures = new FailureLog(this.#logger, this.#clock);
  }

  get state(): DeliveryState {
    return this.#state;
  }

  /** Events held: queued, waiting to retry, or in flight. */
  get backlog(): number {
    return this.#backlog;
  }

  /** Objects whose events an overflow dropped, since the last `resync`. */
  overflowedObjects(): OverflowedObject[] {
    return [...this.#overflowed.values()];
  }

  /**
   * Queue an event; never waits for the sink. False when it was not queued: dropped by an overflow
   * (and remembered for the resync), or the delivery is closing.
   */
  enqueue(event: SinkRecord, routing: Routing = {}): boolean {
    const queued = this.#enqueue(event, routing);
    if (deliveryEnqueueChannel.hasSubscribers)
      deliveryEnqueueChannel.publish({
        sink: this.sink.name,
        record: event,
        verdict: routing.verdict ?? 'deliver',
        queued,
      });
    return queued;
  }

  #enqueue(event: SinkRecord, routing: Routing): boolean {
    switch (this.#state) {
      case 'closing':
      case 'closed':
        this.#logger.warn({ event: event.id }, 'event not delivered: the sink delivery is shutting down');
        return false;
      case 'overflowed':
        this.#remember(event);
        return false;
      case 'running':
        if (this.#backlog >= this.#limit) {
          this.#overflow(event);
          return false;
        }
        this.#add(event, routing);
        this.#pump();
        return true;
    }
  }

  /**
   * Catch up after an overflow (or after any gap the owner detected): queue `events`, one per
   * object, computed against what this sink last confirmed, and take new events again. All of
   * them are queued even past `maxBacklog`: the owner already holds them in memory.
   */
  resync(events: readonly RoutedRecord[]): void {
    if (this.#state === 'closing' || this.#state === 'closed') return;
    this.#state = 'running';
    this.#draining = false;
    this.#overflowed.clear();
    this.#limit = Math.max(this.#limit, this.#backlog + events.length + this.#maxBacklog);
    for (const { record, ...routing } of events) this.#add(record, routing);
    this.#pump();
  }

  /**
   * Stop taking events and wait until every held event is delivered or dead-lettered, or until
   * `deadlineMs` has passed; then abort what is left, close the sink, and say how much was left.
   */
  async close(deadlineMs: number): Promise<CloseResult> {
    if (this.#state === 'closed') return { left: 0, overflowedObjects: this.#overflowed.size };
    this.#state = 'closing';
    if (!this.#idle()) {
      let timer: TimerHandle | undefined;
      await new Promise<void>((resolve) => {
        this.#idleWaiters.push(resolve);
        timer = this.#clock.setTimeout(resolve, deadlineMs);
      });
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      // destroy() was called while draining: it already stopped everything and closed the sink.
      if (this.#closed()) return { left: 0, overflowedObjects: this.#overflowed.size };
    }
    const left = this.#backlog;
    if (left > 0) this.#logger.warn({ left }, 'sink delivery closed with events undelivered');
    this.#stop(new Error('the sink delivery was closed'));
    await this.#closeSink();
    return { left, overflowedObjects: this.#overflowed.size };
  }

  /** Stop now: abort deliveries in flight, drop what is held, close the sink in the background. */
  destroy(reason: Error = new Error('the sink delivery was destroyed')): void {
    if (this.#state === 'closed') return;
    this.#stop(reason);
    void this.#closeSink();
  }

  #stop(reason: Error): void {
    this.#state = 'closed';
    this.#abort.abort(reason);
    for (const lane of this.#lanes.values())
      if (lane.timer !== undefined) this.#clock.clearTimeout(lane.timer);
    this.#lanes.clear();
    this.#ready = [];
    this.#setBacklog(0);
    this.#wakeIdle();
  }

  async #closeSink(): Promise<void> {
    try {
      await this.sink.close?.();
    } catch (err) {
      this.#logger.warn({ err: errorMessage(err) }, 'closing the sink failed');
    }
  }

  #add(event: SinkRecord, routing: Routing): void {
    const key = laneKey(event);
    let lane = this.#lanes.get(key);
    if (lane === undefined) {
      lane = { key, pending: [], busy: false, timer: undefined };
      this.#lanes.set(key, lane);
      this.#ready.push(lane);
    }
    lane.pending.push({ event, routing, enqueuedAt: this.#clock.now(), attempts: 0 });
    this.#setBacklog(this.#backlog + 1);
  }

  #pump(): void {
    while (this.#state !== 'closed') {
      const lane = this.#ready[0];
      if (lane === undefined) break;
      const head = lane.pending[0];
      if (head === undefined) {
        this.#ready.shift();
        continue;
      }
      // Settled without the sink: needs no slot, and the lane goes on with its next event. Without
      // a free slot only a silent head is looked at (the duplicate check may read the checkpoint).
      const free = this.#active < this.#concurrency;
      const passed = free || head.routing.verdict === 'silent' ? this.#passWithoutSink(head) : undefined;
      if (passed !== undefined) {
        this.#ready.shift();
        this.#settle(head, passed);
        this.#finishHead(lane);
        continue;
      }
      if (!free) break;
      this.#ready.shift();
      void this.#attempt(lane, head);
    }
  }

  /** `silent` or `duplicate` when the head settles without calling the sink. */
  #passWithoutSink(item: Pending): 'silent' | 'duplicate' | undefined {
    if (this.#isDuplicate(item)) return 'duplicate';
    return item.routing.verdict === 'silent' ? 'silent' : undefined;
  }

  /** A check that throws counts as "not delivered yet": at least once, never lost. */
  #isDuplicate(item: Pending): boolean {
    try {
      return item.routing.alreadyDelivered?.() === true;
    } catch (err) {
      this.#logger.error({ err: errorMessage(err) }, 'the alreadyDelivered check threw');
      return false;
    }
  }

  /** Tell the owner (and the metrics) how an event left the queue. */
  #settle(item: Pending, how: Settlement): void {
    switch (how) {
      case 'delivered':
        this.#metrics.delivered();
        this.#metrics.latency((this.#clock.now() - item.enqueuedAt) / 1000);
        this.#call(() => this.#options.onDelivered?.(item.event), 'onDelivered');
        break;
      case 'silent':
        this.#call(() => this.#options.onDelivered?.(item.event), 'onDelivered');
        break;
      case 'duplicate':
        this.#metrics.duplicate();
        break;
      case 'dead-lettered':
        break;
    }
    if (deliverySettleChannel.hasSubscribers)
      deliverySettleChannel.publish({
        sink: this.sink.name,
        record: item.event,
        how,
        attempts: item.attempts,
      });
    this.#call(() => item.routing.settled?.(how), 'settled');
  }

  async #attempt(lane: Lane, item: Pending): Promise<void> {
    this.#active++;
    lane.busy = true;
    item.attempts++;
    let failure: { err: unknown } | undefined;
    try {
      await this.sink.deliver(item.event, this.#abort.signal);
    } catch (err) {
      failure = { err };
    }
    this.#active--;
    if (this.#state === 'closed') return;
    if (failure === undefined) this.#delivered(lane, item);
    else await this.#failed(lane, item, failure.err);
    this.#pump();
    this.#whenIdle();
  }

  #delivered(lane: Lane, item: Pending): void {
    this.#failures.succeeded();
    this.#settle(item, 'delivered');
    this.#finishHead(lane);
  }

  async #failed(lane: Lane, item: Pending, err: unknown): Promise<void> {
    this.#metrics.failed(errorKind(err));
    const retryable = isRetryable(err);
    if (retryable && this.#state === 'overflowed') {
      // The resync will bring this object up to date; holding the event would break the bound.
      this.#remember(item.event);
      this.#finishHead(lane);
      return;
    }
    if (retryable && item.attempts < this.#maxAttempts) {
      const asked = sinkRetryAfterMs(err);
      const wait =
        asked === undefined
          ? retryBackoffMs(item.attempts, {
              initialMs: this.#initialBackoffMs,
              maxMs: this.#maxBackoffMs,
              random: this.#random,
            })
          : Math.min(asked, this.#maxRetryAfterMs);
      this.#metrics.retried();
      this.#failures.failed({
        event: item.event.id,
        attempt: item.attempts,
        retryInMs: wait,
        err: errorMessage(err),
      });
      lane.timer = this.#clock.setTimeout(() => {
        lane.timer = undefined;
        lane.busy = false;
        this.#ready.push(lane);
        this.#pump();
      }, wait);
      return;
    }
    await this.#deadLetterHead(item, err);
    if (this.#state === 'closed') return;
    this.#finishHead(lane);
  }

  async #deadLetterHead(item: Pending, err: unknown): Promise<void> {
    this.#logger.error(
      { event: item.event.id, attempts: item.attempts, err: errorMessage(err) },
      isRetryable(err)
        ? 'delivery failed after the last attempt; dead-lettered'
        : 'delivery refused; dead-lettered',
    );
    try {
      await this.#deadLetter?.write({
        time: new Date(this.#clock.now()).toISOString(),
        sink: this.sink.name,
        attempts: item.attempts,
        error: deadLetterError(err),
        event: item.event,
      });
    } catch (writeErr) {
      // Waiting for the disk would hold the object's later events forever: log and move on.
      this.#logger.error(
        { event: item.event.id, err: errorMessage(writeErr) },
        'writing the dead-letter record failed',
      );
    }
    this.#metrics.deadLettered();
    this.#call(() => this.#options.onDeadLetter?.(item.event, err), 'onDeadLetter');
    this.#settle(item, 'dead-lettered');
  }

  /** The head is done (delivered, dead-lettered or dropped): on to the object's next event. */
  #finishHead(lane: Lane): void {
    lane.pending.shift();
    lane.busy = false;
    this.#setBacklog(this.#backlog - 1);
    if (lane.pending.length > 0) this.#ready.push(lane);
    else if (this.#lanes.get(lane.key) === lane) this.#lanes.delete(lane.key);
  }

  #overflow(event: SinkRecord): void {
    this.#state = 'overflowed';
    this.#remember(event);
    let held = 0;
    for (const lane of this.#lanes.values()) {
      const keep = lane.busy && lane.timer === undefined ? 1 : 0;
      for (const item of lane.pending.slice(keep)) this.#remember(item.event);
      if (lane.timer !== undefined) this.#clock.clearTimeout(lane.timer);
      lane.timer = undefined;
      lane.pending.length = keep;
      held += keep;
      if (keep === 0) this.#lanes.delete(lane.key);
    }
    this.#ready = [];
    this.#setBacklog(held);
    this.#metrics.overflowed();
    this.#logger.warn(
      { maxBacklog: this.#maxBacklog, objects: this.#overflowed.size },
      'the sink fell too far behind: queued events dropped until a resync',
    );
    this.#draining = true;
    this.#call(() => this.#options.onOverflow?.(), 'onOverflow');
    this.#whenIdle();
  }

  #remember(event: SinkRecord): void {
    // A dropped gap notice is not an object to bring up to date: the resync reports its own gap.
    if (event.type === 'gap') return;
    const key = `${event.watcher}\u0000${laneKey(event)}`;
    if (!this.#overflowed.has(key))
      this.#overflowed.set(key, {
        watcher: event.watcher,
        resource: event.resource,
        namespace: event.namespace,
        name: event.name,
      });
  }

  #setBacklog(size: number): void {
    // Shrinking under the bound ends a resync's allowance.
    if (size < this.#backlog && size < this.#maxBacklog) this.#limit = this.#maxBacklog;
    this.#backlog = size;
    this.#metrics.backlog(size);
  }

  /** A method, not a field read: the state changes across awaits, which narrowing cannot see. */
  #closed(): boolean {
    return this.#state === 'closed';
  }

  #idle(): boolean {
    return this.#backlog === 0 && this.#active === 0;
  }

  /** Nothing held: wake `close`, and tell the owner an overflow has drained. */
  #whenIdle(): void {
    if (!this.#idle()) return;
    this.#wakeIdle();
    if (this.#state !== 'overflowed' || !this.#draining) return;
    this.#draining = false;
    this.#call(() => this.#options.onOverflowDrained?.(), 'onOverflowDrained');
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }

  #call(fn: () => void, what: string): void {
    try {
      fn();
    } catch (err) {
      this.#logger.error({ err: errorMessage(err) }, `the ${what} callback threw`);
    }
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
