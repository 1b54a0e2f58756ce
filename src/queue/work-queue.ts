/**
 * The work queue controllers pull keys from. Guarantees:
 * - FIFO: keys are handed out in the order they were first added;
 * - dedupe: a key added while it is already waiting is not queued twice;
 * - exclusivity: a key is never handed to two workers at once. A key added while a worker holds it
 *   is marked dirty and queued again when that worker calls `done(key)`, so the latest change is
 *   always processed after the one in progress;
 * - shutdown: after `shutDown()` adds are ignored, waiting keys are still handed out, and `get`
 *   returns `{ shutdown: true }` once the queue is empty. `shutDownWithDrain()` also waits until no
 *   key is being processed.
 *
 * Delays and retries are layered on top: see `delaying-queue.ts` and `rate-limiting-queue.ts`.
 */
import { systemClock, type Clock } from '../util/clock.js';
import { Fifo } from '../util/fifo.js';
import { noopQueueMetrics, type QueueMetrics, type UnfinishedWork } from './queue-metrics.js';

/** What `get` resolves with: a key to process, or the news that the queue is shut down and empty. */
export type QueueItem<K> = { readonly shutdown: false; readonly key: K } | { readonly shutdown: true };

export interface WorkQueue<K> {
  /** Queue `key` unless it is already waiting; ignored after shutdown. */
  add(key: K): void;
  /**
   * Wait for a key and mark it as being processed; the caller must call `done(key)` afterwards.
   * Rejects with the signal's reason when `signal` aborts first (the queue is not affected).
   */
  get(signal?: AbortSignal): Promise<QueueItem<K>>;
  /** Finish processing `key`; re-queues it if it was added in the meantime. */
  done(key: K): void;
  /** Stop accepting keys; waiters get `{ shutdown: true }` once the queue is empty. */
  shutDown(): void;
  /** `shutDown()`, then resolve once no key is being processed (reject if `signal` aborts). */
  shutDownWithDrain(signal?: AbortSignal): Promise<void>;
  /** Number of keys waiting to be handed out (not counting keys being processed). */
  readonly len: number;
  readonly shuttingDown: boolean;
}

export interface WorkQueueOptions {
  /** Used to measure queue latency and work duration; default the system clock. */
  clock?: Clock;
  metrics?: QueueMetrics;
}

interface Waiter<K> {
  resolve(item: QueueItem<K>): void;
}

/**
 * Create a FIFO work queue.
 *
 * @example
 * const reconcile = async (key: ObjectKey): Promise<void> => {
 *   console.log('reconciling', key); // bring the world in line with the object named by `key`
 * };
 * const queue = createWorkQueue<ObjectKey>();
 * queue.add(key);
 * const item = await queue.get(signal);
 * if (!item.shutdown) {
 *   try { await reconcile(item.key); } finally { queue.done(item.key); }
 * }
 */
export function createWorkQueue<K>(options: WorkQueueOptions = {}): WorkQueue<K> {
  return new FifoWorkQueue<K>(options.clock ?? systemClock, options.metrics ?? noopQueueMetrics);
}

class FifoWorkQueue<K> implements WorkQueue<K> {
  readonly #clock: Clock;
  readonly #metrics: QueueMetrics;
  readonly #queue = new Fifo<K>();
  /** Keys that need processing: every queued key, plus keys re-added while being processed. */
  readonly #dirty = new Set<K>();
  /** Keys held by a worker, with the time they were handed out (insertion order = oldest first). */
  readonly #processing = new Map<K, number>();
  /** When each queued key was added, for the latency metric. */
  readonly #addedAt = new Map<K, number>();
  readonly #waiters = new Set<Waiter<K>>();
  readonly #drainers = new Set<() => void>();
  #shuttingDown = false;

  constructor(clock: Clock, metrics: QueueMetrics) {
    this.#clock = clock;
    this.#metrics = metrics;
    metrics.unfinishedWork(() => this.#unfinishedWork());
  }

  get len(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: K): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#metrics.added();
    if (this.#processing.has(key)) return; // queued again by done()
    this.#enqueue(key);
  }

  get(signal?: AbortSignal): Promise<QueueItem<K>> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    if (this.#queue.length > 0) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve({ shutdown: true });
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(signal?.reason as Error);
      };
      const waiter: Waiter<K> = {
        resolve: (item) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(item);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  done(key: K): void {
    const started = this.#processing.get(key);
    if (started === undefined) return;
    this.#processing.delete(key);
    this.#metrics.workDuration((this.#clock.now() - started) / 1000);
    if (this.#dirty.has(key)) this.#enqueue(key);
    if (this.#processing.size === 0) this.#notifyDrained();
  }

  shutDown(): void {
    this.#shuttingDown = true;
    // Waiters exist only while the queue is empty, so each of them can be told now.
    for (const waiter of this.#waiters) waiter.resolve({ shutdown: true });
    this.#waiters.clear();
  }

  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#drainers.delete(drained);
        reject(signal?.reason as Error);
      };
      const drained = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#drainers.add(drained);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #enqueue(key: K): void {
    this.#queue.push(key);
    this.#addedAt.set(key, this.#clock.now());
    const [waiter] = this.#waiters;
    if (waiter !== undefined) {
      this.#waiters.delete(waiter);
      waiter.resolve(this.#take());
    } else {
      this.#metrics.depth(this.#queue.length);
    }
  }

  /** Hand out the head key: from now on it is being processed, and no longer dirty. */
  #take(): QueueItem<K> {
    const key = this.#queue.shift() as K;
    const now = this.#clock.now();
    this.#metrics.depth(this.#queue.length);
    this.#metrics.queueLatency((now - (this.#addedAt.get(key) ?? now)) / 1000);
    this.#addedAt.delete(key);
    this.#dirty.delete(key);
    this.#processing.set(key, now);
    return { shutdown: false, key };
  }

  #notifyDrained(): void {
    for (const drained of this.#drainers) drained();
    this.#drainers.clear();
  }

  #unfinishedWork(): UnfinishedWork {
    const now = this.#clock.now();
    let total = 0;
    let longest = 0;
    for (const started of this.#processing.values()) {
      total += now - started;
      longest = Math.max(longest, now - started);
    }
    return { seconds: total / 1000, longestRunningSeconds: longest / 1000 };
  }
}
