/**
 * A delaying queue that also retries with backoff: `addRateLimited(key)` adds the key after the
 * delay its rate limiter chooses, `forget(key)` resets that key's backoff (call it on success), and
 * `numRequeues(key)` says how many retries are recorded. Everything else is the delaying queue's.
 */
import { systemClock, type Clock } from '../util/clock.js';
import { defaultControllerRateLimiter } from './default-controller-rate-limiter.js';
import { createDelayingQueue, type DelayingQueue } from './delaying-queue.js';
import { noopQueueMetrics, type QueueMetrics } from './queue-metrics.js';
import type { RateLimiter } from './rate-limiter.js';
import type { QueueItem } from './work-queue.js';

export interface RateLimitingQueue<K> extends DelayingQueue<K> {
  /** Add `key` after the rate limiter's delay for it (and count a retry). */
  addRateLimited(key: K): void;
  /** Reset the backoff of `key`; it does not remove the key from the queue. */
  forget(key: K): void;
  numRequeues(key: K): number;
}

export interface RateLimitingQueueOptions<K> {
  /** Default `defaultControllerRateLimiter` on the same clock. */
  rateLimiter?: RateLimiter<K>;
  clock?: Clock;
  metrics?: QueueMetrics;
  /** The queue to layer on; default a new delaying queue with the same clock and metrics. */
  queue?: DelayingQueue<K>;
}

/**
 * Create a rate-limiting queue, the queue a controller normally uses.
 *
 * @example
 * const queue = createRateLimitingQueue<ObjectKey>({ clock });
 * queue.addRateLimited(key); // after a failed reconcile
 * queue.forget(key); // after a successful one
 */
export function createRateLimitingQueue<K>(options: RateLimitingQueueOptions<K> = {}): RateLimitingQueue<K> {
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics ?? noopQueueMetrics;
  return new RetryingQueue(
    options.queue ?? createDelayingQueue<K>({ clock, metrics }),
    options.rateLimiter ?? defaultControllerRateLimiter<K>({ clock }),
    metrics,
  );
}

class RetryingQueue<K> implements RateLimitingQueue<K> {
  readonly #inner: DelayingQueue<K>;
  readonly #limiter: RateLimiter<K>;
  readonly #metrics: QueueMetrics;

  constructor(inner: DelayingQueue<K>, limiter: RateLimiter<K>, metrics: QueueMetrics) {
    this.#inner = inner;
    this.#limiter = limiter;
    this.#metrics = metrics;
  }

  get len(): number {
    return this.#inner.len;
  }

  get delayedLen(): number {
    return this.#inner.delayedLen;
  }

  get shuttingDown(): boolean {
    return this.#inner.shuttingDown;
  }

  add(key: K): void {
    this.#inner.add(key);
  }

  addAfter(key: K, ms: number): void {
    this.#inner.addAfter(key, ms);
  }

  addRateLimited(key: K): void {
    if (this.#inner.shuttingDown) return;
    this.#metrics.retried();
    this.#inner.addAfter(key, this.#limiter.when(key));
  }

  forget(key: K): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.#limiter.numRequeues(key);
  }

  get(signal?: AbortSignal): Promise<QueueItem<K>> {
    return this.#inner.get(signal);
  }

  done(key: K): void {
    this.#inner.done(key);
  }

  shutDown(): void {
    this.#inner.shutDown();
  }

  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    return this.#inner.shutDownWithDrain(signal);
  }
}
