/**
 * A work queue that can also add a key later. `addAfter(key, ms)` keeps the key aside until its due
 * time on the injected clock, then adds it to the underlying queue (where the usual dedupe and
 * exclusivity rules apply). Guarantees:
 * - a key waiting aside is held once: adding it again with an earlier due time moves it earlier,
 *   with a later one changes nothing;
 * - keys become due in due-time order (ties in the order they were added aside);
 * - one clock timer at a time, set for the earliest due key; none once shut down.
 */
import { systemClock, type Clock, type TimerHandle } from '../util/clock.js';
import { MinHeap } from './min-heap.js';
import { noopQueueMetrics, type QueueMetrics } from './queue-metrics.js';
import { createWorkQueue, type QueueItem, type WorkQueue } from './work-queue.js';

export interface DelayingQueue<K> extends WorkQueue<K> {
  /** Add `key` once `ms` milliseconds have passed; `ms <= 0` adds it now. */
  addAfter(key: K, ms: number): void;
  /** Number of keys held aside, not yet due. */
  readonly delayedLen: number;
}

export interface DelayingQueueOptions<K> {
  clock?: Clock;
  metrics?: QueueMetrics;
  /** The queue due keys go to; default a new work queue with the same clock and metrics. */
  queue?: WorkQueue<K>;
}

interface Delayed<K> {
  key: K;
  due: number;
  seq: number;
}

/**
 * Create a delaying queue.
 *
 * @example
 * const queue = createDelayingQueue<ObjectKey>({ clock });
 * queue.addAfter(key, 30_000); // resync this object in 30 s
 */
export function createDelayingQueue<K>(options: DelayingQueueOptions<K> = {}): DelayingQueue<K> {
  const clock = options.clock ?? systemClock;
  const inner = options.queue ?? createWorkQueue<K>({ clock, metrics: options.metrics ?? noopQueueMetrics });
  return new TimedQueue(inner, clock);
}

class TimedQueue<K> implements DelayingQueue<K> {
  readonly #inner: WorkQueue<K>;
  readonly #clock: Clock;
  /** The current due time of each key held aside; heap entries that disagree are stale. */
  readonly #dueOf = new Map<K, number>();
  readonly #heap = new MinHeap<Delayed<K>>((a, b) => a.due < b.due || (a.due === b.due && a.seq < b.seq));
  #seq = 0;
  #timer: { handle: TimerHandle; due: number } | undefined;

  constructor(inner: WorkQueue<K>, clock: Clock) {
    this.#inner = inner;
    this.#clock = clock;
  }

  get len(): number {
    return this.#inner.len;
  }

  get delayedLen(): number {
    return this.#dueOf.size;
  }

  get shuttingDown(): boolean {
    return this.#inner.shuttingDown;
  }

  add(key: K): void {
    this.#inner.add(key);
  }

  get(signal?: AbortSignal): Promise<QueueItem<K>> {
    return this.#inner.get(signal);
  }

  done(key: K): void {
    this.#inner.done(key);
  }

  addAfter(key: K, ms: number): void {
    if (this.#inner.shuttingDown) return;
    if (!(ms > 0)) {
      this.#inner.add(key);
      return;
    }
    const due = this.#clock.now() + ms;
    const current = this.#dueOf.get(key);
    if (current !== undefined && current <= due) return;
    this.#dueOf.set(key, due);
    this.#heap.push({ key, due, seq: this.#seq++ });
    this.#schedule();
  }

  shutDown(): void {
    this.#stopTimers();
    this.#inner.shutDown();
  }

  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.#stopTimers();
    return this.#inner.shutDownWithDrain(signal);
  }

  /** Move every due key to the queue, then arm the timer for the next one. */
  #release(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    for (let next = this.#heap.peek(); next !== undefined && next.due <= now; next = this.#heap.peek()) {
      this.#heap.pop();
      if (this.#dueOf.get(next.key) !== next.due) continue; // stale: moved earlier and released already
      this.#dueOf.delete(next.key);
      this.#inner.add(next.key);
    }
    this.#schedule();
  }

  #schedule(): void {
    let head = this.#heap.peek();
    while (head !== undefined && this.#dueOf.get(head.key) !== head.due) {
      this.#heap.pop();
      head = this.#heap.peek();
    }
    if (head?.due === this.#timer?.due) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    if (head === undefined) return;
    const handle = this.#clock.setTimeout(() => {
      this.#release();
    }, head.due - this.#clock.now());
    this.#timer = { handle, due: head.due };
  }

  #stopTimers(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    this.#heap.clear();
    this.#dueOf.clear();
  }
}
