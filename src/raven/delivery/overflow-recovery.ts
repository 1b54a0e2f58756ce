/**
 * Overflow recovery: a sink whose delivery queue passed `delivery.maxBacklog` is brought up to date
 * from its checkpoint as soon as it can be, driven by its delivery's signals, not by a timer.
 *
 * A delivery that overflows drops what it queued and says so (`onOverflow`: the time is kept, for
 * the gap it reports). Once the deliveries it still had in flight have finished
 * (`onOverflowDrained`), the sink's checkpoint says exactly what it confirmed, and the recovery
 * gives it, in one synchronous step, what each watcher routed to it computes from that checkpoint
 * (`WatcherSinks.resync`: one change per object the sink has not confirmed, and a gap notice if it
 * opted in), in the router's order of watchers. Waiting for the in-flight deliveries keeps the
 * catch-up from repeating a change that was being delivered when the sink overflowed.
 *
 * The resync runs in a microtask after the signal, never inside the call that gave it: the signal
 * can come from inside a watcher's `enqueue`, before that watcher marked the change as dropped.
 */
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { RoutedRecord, SinkDelivery } from './sink-delivery.js';

/** What recovery asks of a watcher's side of delivery (`watcher-sinks.ts`). */
export interface Resyncable {
  /** What `sink` needs after it overflowed at `since`: records to hand to its delivery's `resync`. */
  resync(sink: string, since: number | undefined): RoutedRecord[];
}

export interface OverflowRecoveryOptions {
  clock: Clock;
  logger: Logger;
  /** The watchers routed to a sink, in order (`Router.watchersOf`). */
  watchersOf: (sink: string) => readonly string[];
}

export class OverflowRecovery {
  readonly #deliveries: ReadonlyMap<string, SinkDelivery>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #watchersOf: (sink: string) => readonly string[];
  readonly #watchers = new Map<string, Resyncable>();
  readonly #overflowedAt = new Map<string, number>();
  #closed = false;

  constructor(deliveries: ReadonlyMap<string, SinkDelivery>, options: OverflowRecoveryOptions) {
    this.#deliveries = deliveries;
    this.#clock = options.clock;
    this.#log = options.logger;
    this.#watchersOf = options.watchersOf;
  }

  /** `watcher`'s side of delivery, asked for what its sinks need after they overflow. */
  add(watcher: string, sinks: Resyncable): void {
    this.#watchers.set(watcher, sinks);
  }

  /** `sink`'s delivery overflowed (its `onOverflow`). */
  overflowed(sink: string): void {
    this.#overflowedAt.set(sink, this.#clock.now());
    this.#log.warn({ sink }, 'sink fell behind its backlog limit; it will be resynced from its checkpoint');
  }

  /** Nothing `sink`'s delivery held is in flight any more (its `onOverflowDrained`): resync it. */
  drained(sink: string): void {
    queueMicrotask(() => this.#resync(sink));
  }

  /** No resync from now on (the deliveries are draining for shutdown). */
  close(): void {
    this.#closed = true;
  }

  #resync(sink: string): void {
    const delivery = this.#deliveries.get(sink);
    if (this.#closed || delivery?.state !== 'overflowed') return;
    const since = this.#overflowedAt.get(sink);
    const items = this.#watchersOf(sink).flatMap(
      (watcher) => this.#watchers.get(watcher)?.resync(sink, since) ?? [],
    );
    this.#log.info({ sink, events: items.length }, 'resyncing sink from its checkpoint');
    delivery.resync(items);
  }
}
