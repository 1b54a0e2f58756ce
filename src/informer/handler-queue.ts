/**
 * One consumer's handlers behind their own FIFO, so a slow or failing consumer never delays the
 * informer or the other consumers. Events are delivered in order, one at a time; a handler that
 * throws or rejects is counted and reported, and the next event is delivered. The buffer is
 * unbounded (as the informer cannot drop a change); `pending` shows how far a consumer lags. An
 * event leaves the buffer as it is delivered: a queue that has caught up holds no event.
 */
import { Fifo } from '../util/fifo.js';
import type { EventHandlers, InformerEvent } from './informer-events.js';

export interface HandlerQueueOptions {
  /** Called with each handler failure; the queue goes on. */
  onError: (error: unknown, event: InformerEvent<unknown>) => void;
}

export class HandlerQueue<T> {
  readonly #handlers: EventHandlers<T>;
  readonly #onError: HandlerQueueOptions['onError'];
  readonly #buffer = new Fifo<InformerEvent<T>>();
  #running = false;
  #stopped = false;
  #idle: (() => void)[] = [];
  /** Handler calls that threw or rejected. */
  failures = 0;
  /** Events delivered (successfully or not). */
  delivered = 0;

  constructor(handlers: EventHandlers<T>, options: HandlerQueueOptions) {
    this.#handlers = handlers;
    this.#onError = options.onError;
  }

  /** Events waiting for this consumer. */
  get pending(): number {
    return this.#buffer.length;
  }

  push(event: InformerEvent<T>): void {
    if (this.#stopped) return;
    this.#buffer.push(event);
    if (!this.#running) void this.#drain();
  }

  /** Resolve when every event pushed so far has been handled. */
  idle(): Promise<void> {
    if (!this.#running && this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Deliver nothing more; events still buffered are dropped. */
  stop(): void {
    this.#stopped = true;
    this.#buffer.clear();
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#buffer.length > 0 && !this.#stopped) {
        const event = this.#buffer.shift() as InformerEvent<T>;
        try {
          await this.#deliver(event);
        } catch (error) {
          this.failures++;
          this.#onError(error, event);
        }
        this.delivered++;
      }
    } finally {
      this.#running = false;
      const waiting = this.#idle;
      this.#idle = [];
      for (const resolve of waiting) resolve();
    }
  }

  async #deliver(event: InformerEvent<T>): Promise<void> {
    const h = this.#handlers;
    switch (event.type) {
      case 'add':
        await h.add?.(event.object);
        return;
      case 'update':
        await h.update?.(event.old, event.new, { resync: event.resync });
        return;
      case 'delete':
        await h.delete?.(event.object, { tombstone: event.tombstone, previous: event.previous });
        return;
    }
  }
}
