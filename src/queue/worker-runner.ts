/**
 * N workers pulling keys from a rate-limiting queue and calling an async handler. Guarantees:
 * - the handler's result decides what happens to the key: `done` forgets its backoff,
 *   `requeue-after` forgets it and adds the key again after the delay, `error` adds it rate-limited;
 * - a handler that throws or rejects never stops a worker, the runner or the process: it is
 *   counted, logged and retried with backoff, like an `error` result;
 * - `done(key)` is always called on the queue, whatever the handler did;
 * - `close()` stops taking keys, waits for the handlers in flight until the deadline, and then
 *   aborts their signal; `destroy()` stops taking keys and aborts the handlers at once.
 *
 * The runner does not own the queue: closing the runner leaves it open, and shutting the queue
 * down ends the workers once it is empty.
 */
import type { Logger } from '../util/logger.js';
import { silentLogger } from '../util/logger.js';
import { sleep, systemClock, type Clock } from '../util/clock.js';
import type { HandlerResult } from './handler-result.js';
import type { QueueItem } from './work-queue.js';

/** The part of a queue the runner uses. */
export interface WorkSource<K> {
  get(signal?: AbortSignal): Promise<QueueItem<K>>;
  done(key: K): void;
  addAfter(key: K, ms: number): void;
  addRateLimited(key: K): void;
  forget(key: K): void;
}

/** Handle one key. `signal` aborts when the runner is destroyed or its close deadline passes. */
export type WorkHandler<K> = (key: K, signal: AbortSignal) => Promise<HandlerResult>;

export interface WorkerRunnerOptions {
  /** How many keys are handled at once; default 1. */
  workers?: number;
  /** Aborting it starts `close()`. */
  signal?: AbortSignal;
  /** How long `close()` waits for handlers in flight before aborting them; default 30 s. */
  shutdownDeadlineMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** Counters since the runner started. */
export interface WorkerStats {
  /** Keys handed to the handler. */
  processed: number;
  succeeded: number;
  requeued: number;
  /** Handler returned an `error` result. */
  failed: number;
  /** Handler threw or rejected. */
  thrown: number;
}

export interface ShutdownReport<K> {
  /** True when every handler in flight finished before the deadline. */
  drained: boolean;
  /** Keys whose handlers were still running when the runner gave up waiting. */
  abandoned: K[];
}

/**
 * Start `workers` workers on `queue`.
 *
 * @example
 * const runner = runWorkers(queue, async (key, signal) => {
 *   const pod = pods.get(key);
 *   if (pod === undefined) return done();
 *   await fetch(`https://inventory.example/pods/${pod.metadata?.name}`, { method: 'PUT', body: JSON.stringify(pod), signal });
 *   return done();
 * }, { workers: 4, signal, logger });
 * await runner.close();
 */
export function runWorkers<K>(
  queue: WorkSource<K>,
  handler: WorkHandler<K>,
  options: WorkerRunnerOptions = {},
): WorkerRunner<K> {
  return new WorkerRunner(queue, handler, options);
}

export class WorkerRunner<K> {
  readonly #queue: WorkSource<K>;
  readonly #handler: WorkHandler<K>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #deadlineMs: number;
  /** Aborted to stop taking keys. */
  readonly #stopTaking = new AbortController();
  /** Aborted to cancel handlers in flight. */
  readonly #cancelHandlers = new AbortController();
  /** Keys in flight with their start time; insertion order is start order, so the first is the oldest. */
  readonly #running = new Map<K, number>();
  readonly #stats: WorkerStats = { processed: 0, succeeded: 0, requeued: 0, failed: 0, thrown: 0 };
  #closing: Promise<ShutdownReport<K>> | undefined;
  /** Resolves when every worker has exited (the runner was closed or the queue shut down). */
  readonly finished: Promise<void>;

  constructor(queue: WorkSource<K>, handler: WorkHandler<K>, options: WorkerRunnerOptions = {}) {
    this.#queue = queue;
    this.#handler = handler;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.#deadlineMs = options.shutdownDeadlineMs ?? 30_000;
    const workers = Math.max(1, Math.floor(options.workers ?? 1));
    this.finished = Promise.all(Array.from({ length: workers }, () => this.#work())).then(() => undefined);
    if (options.signal?.aborted === true) void this.close();
    else options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  get stats(): Readonly<WorkerStats> {
    return { ...this.#stats };
  }

  /** Number of keys being handled now. */
  get inFlight(): number {
    return this.#running.size;
  }

  /** The key that has been running longest, and for how long. */
  longestRunning(): { key: K; runningMs: number } | undefined {
    const first = this.#running.entries().next();
    if (first.done === true) return undefined;
    const [key, started] = first.value;
    return { key, runningMs: this.#clock.now() - started };
  }

  /** Stop taking keys and wait for the handlers in flight, at most until the deadline. */
  close(): Promise<ShutdownReport<K>> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  /** Stop taking keys and abort the handlers in flight now. */
  destroy(reason: unknown = new Error('worker runner destroyed')): void {
    this.#stopTaking.abort(reason);
    this.#cancelHandlers.abort(reason);
  }

  async #shutDown(): Promise<ShutdownReport<K>> {
    this.#stopTaking.abort(new Error('worker runner closing'));
    const timer = new AbortController();
    const deadline = sleep(this.#clock, this.#deadlineMs, timer.signal).then(
      () => false,
      () => true,
    );
    const drained = await Promise.race([this.finished.then(() => true), deadline]);
    timer.abort();
    const abandoned = [...this.#running.keys()];
    if (!drained) {
      this.#logger.warn({ abandoned: abandoned.map(String) }, 'shutdown deadline passed; aborting handlers');
      this.#cancelHandlers.abort(new Error('worker runner shutdown deadline passed'));
    }
    return { drained, abandoned };
  }

  async #work(): Promise<void> {
    for (;;) {
      let item: QueueItem<K>;
      try {
        item = await this.#queue.get(this.#stopTaking.signal);
      } catch {
        return; // stopped taking keys
      }
      if (item.shutdown) return;
      try {
        await this.#process(item.key);
      } catch {
        // Only a throwing logger or queue can get here; the worker must outlive it.
      }
    }
  }

  async #process(key: K): Promise<void> {
    this.#running.set(key, this.#clock.now());
    this.#stats.processed++;
    try {
      this.#settle(key, await this.#handler(key, this.#cancelHandlers.signal));
    } catch (err) {
      this.#stats.thrown++;
      this.#logger.error({ err, key: String(key) }, 'work handler threw; retrying with backoff');
      this.#queue.addRateLimited(key);
    } finally {
      this.#running.delete(key);
      this.#queue.done(key);
    }
  }

  #settle(key: K, result: HandlerResult): void {
    switch (result.kind) {
      case 'done':
        this.#stats.succeeded++;
        this.#queue.forget(key);
        return;
      case 'requeue-after':
        this.#stats.requeued++;
        this.#queue.forget(key);
        this.#queue.addAfter(key, result.ms);
        return;
      case 'error':
        this.#stats.failed++;
        this.#logger.debug(
          { err: result.error, key: String(key) },
          'work handler failed; retrying with backoff',
        );
        this.#queue.addRateLimited(key);
        return;
      default: {
        const unexpected: never = result;
        this.#stats.failed++;
        this.#logger.error(
          { result: unexpected, key: String(key) },
          'work handler returned an unknown result; retrying',
        );
        this.#queue.addRateLimited(key);
      }
    }
  }
}
