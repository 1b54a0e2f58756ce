/**
 * An informer: one watch feeding one cache, shared by any number of handlers.
 *
 * Guarantees:
 * - the store is updated before handlers hear of a change, and a relist is swapped in at once;
 * - each handler has its own queue: a slow or throwing handler delays or breaks only itself (its
 *   failures are counted and reported, to the logger or else on stderr; the informer and the
 *   other handlers go on);
 * - a handler added after the informer synced first receives an `add` for every cached object;
 * - with `resyncPeriodMs`, a handler periodically receives every cached object again as an update
 *   marked `resync` (for level-triggered consumers that want to re-check the world);
 * - a delete handler gets the object the DELETED event carried (its final state) and the cached
 *   state before it; a deletion inferred by a relist is a tombstone carrying the last known state:
 *   use the store for truth.
 */
import { MemoryStore, type MemoryStoreOptions } from '../cache/memory-store.js';
import type { Store, StoreReader, SyncStatus } from '../cache/store.js';
import type { KubeObject } from '../client/kube-object.js';
import { systemClock, type Clock, type TimerHandle } from '../util/clock.js';
import { silentLogger, stderrLogger, type Logger } from '../util/logger.js';
import { stoppedStatus, type WatcherEvent, type WatcherStatus } from '../watch/watcher-events.js';
import { HandlerQueue } from './handler-queue.js';
import type { EventHandlers, InformerEvent } from './informer-events.js';
import { Reflector } from './reflector.js';
import { RavenError } from '../errors/raven-error.js';

/** What an informer watches: a watcher (or several merged) that it can close. */
export interface InformerSource<T extends object> extends AsyncIterable<WatcherEvent<T>> {
  status(): WatcherStatus;
  close(): void;
}

export interface InformerOptions<T extends KubeObject> extends MemoryStoreOptions<T> {
  /** Creates the watch when the informer runs. */
  source: () => InformerSource<T>;
  clock?: Clock;
  /**
   * Where the informer logs. Default: nowhere, except a handler that throws or rejects (a bug in
   * the caller's code, never silent): it is reported on stderr with its stack.
   */
  logger?: Logger;
  /** A name for logs and metrics, e.g. `pods` or `deployments.apps in team-*`. */
  name?: string;
}

export interface HandlerOptions {
  /** Re-deliver every cached object as an update marked `resync` this often. */
  resyncPeriodMs?: number;
}

/** A registered handler: how far behind it is, whether it has caught up, and how to remove it. */
export interface HandlerRegistration {
  readonly pending: number;
  readonly failures: number;
  /** Resolves once the informer has synced and this handler has handled the initial objects. */
  synced(signal?: AbortSignal): Promise<void>;
  remove(): void;
}

export interface InformerStatus extends WatcherStatus {
  handlers: number;
  handlerFailures: number;
  /** Events waiting in the slowest handler's queue. */
  maxPending: number;
}

export class Informer<T extends KubeObject> {
  readonly name: string;
  readonly #store: Store<T>;
  readonly #options: InformerOptions<T>;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** Where a failed handler is reported: the logger, else stderr. */
  readonly #failureLog: Logger;
  readonly #queues = new Set<HandlerQueue<T>>();
  readonly #resyncTimers = new Map<HandlerQueue<T>, TimerHandle>();
  #source: InformerSource<T> | undefined;
  #running = false;
  /** Resolved once the first list's events have been handed to every handler queue. */
  readonly #dispatchedSync: Promise<void>;
  #markDispatchedSync: () => void = () => undefined;
  #removedFailures = 0;

  constructor(options: InformerOptions<T>) {
    this.#options = options;
    this.#store = new MemoryStore<T>(options);
    this.#clock = options.clock ?? systemClock;
    this.name = options.name ?? 'informer';
    this.#log = (options.logger ?? silentLogger).child({ informer: this.name });
    this.#failureLog = (options.logger ?? stderrLogger).child({ informer: this.name });
    this.#dispatchedSync = new Promise((resolve) => (this.#markDispatchedSync = resolve));
  }

  /** The cache: read-only, indexed, consistent with what handlers have been told. */
  get store(): StoreReader<T> & SyncStatus {
    return this.#store;
  }

  get hasSynced(): boolean {
    return this.#store.hasSynced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#store.waitForSync(signal);
  }

  get running(): boolean {
    return this.#running;
  }

  status(): InformerStatus {
    const base: WatcherStatus = this.#source?.status() ?? stoppedStatus();
    const queues = [...this.#queues];
    return {
      ...base,
      handlers: queues.length,
      handlerFailures: this.#removedFailures + queues.reduce((n, q) => n + q.failures, 0),
      maxPending: Math.max(0, ...queues.map((q) => q.pending)),
    };
  }

  /**
   * Register handlers. They receive every change from now on, and first an `add` for each object
   * already cached.
   *
   * @example
   * const informer = new SharedInformers({ transport: client }).informerFor<Pod>({ resource: podsRef });
   * informer.addEventHandler({ update: (old, pod) => queue.add(objectKey(pod)) }, { resyncPeriodMs: 600_000 });
   */
  addEventHandler(handlers: EventHandlers<T>, options: HandlerOptions = {}): HandlerRegistration {
    const queue = new HandlerQueue<T>(handlers, {
      onError: (error, event) => {
        this.#failureLog.error(
          { err: error, event: event.type },
          `the ${event.type} handler failed; the informer goes on`,
        );
      },
    });
    this.#queues.add(queue);
    for (const object of this.#store.list()) queue.push({ type: 'add', object });
    if (options.resyncPeriodMs !== undefined && options.resyncPeriodMs > 0)
      this.#scheduleResync(queue, options.resyncPeriodMs);
    return {
      get pending() {
        return queue.pending;
      },
      get failures() {
        return queue.failures;
      },
      synced: async (signal) => {
        await this.#store.waitForSync(signal);
        await Promise.race([this.#dispatchedSync, aborted(signal)]);
        await queue.idle();
      },
      remove: () => {
        this.#removedFailures += queue.failures;
        queue.stop();
        this.#queues.delete(queue);
        const timer = this.#resyncTimers.get(queue);
        if (timer !== undefined) this.#clock.clearTimeout(timer);
        this.#resyncTimers.delete(queue);
      },
    };
  }

  /** Watch and feed the cache and handlers until `signal` aborts. Resolves when stopped. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new RavenError('ERR_INVALID_STATE', `informer ${this.name} is already running`);
    if (signal.aborted) return;
    this.#running = true;
    const source = this.#options.source();
    this.#source = source;
    const stop = (): void => source.close();
    signal.addEventListener('abort', stop, { once: true });
    try {
      // The reflector is applied here, not as a generator of its own: one hop less per event.
      const reflector = new Reflector(this.#store);
      for await (const event of source) {
        for (const output of reflector.apply(event)) {
          switch (output.type) {
            case 'add':
            case 'update':
            case 'delete':
              this.#dispatch(output);
              break;
            case 'synced':
              this.#markDispatchedSync();
              this.#log.debug({ relist: output.relist, objects: this.#store.size }, 'synced');
              break;
            case 'error':
              // The watcher has logged this failure once, with its phase and next attempt.
              break;
          }
        }
      }
    } finally {
      signal.removeEventListener('abort', stop);
      for (const timer of this.#resyncTimers.values()) this.#clock.clearTimeout(timer);
      this.#resyncTimers.clear();
      this.#running = false;
    }
  }

  /** Resolve when every handler has handled every event dispatched so far. */
  async idle(): Promise<void> {
    await Promise.all([...this.#queues].map((q) => q.idle()));
  }

  #dispatch(event: InformerEvent<T>): void {
    for (const queue of this.#queues) queue.push(event);
  }

  #scheduleResync(queue: HandlerQueue<T>, periodMs: number): void {
    const timer = this.#clock.setTimeout(() => {
      if (!this.#queues.has(queue)) return;
      if (this.#store.hasSynced) {
        for (const object of this.#store.list())
          queue.push({ type: 'update', old: object, new: object, resync: true });
      }
      this.#scheduleResync(queue, periodMs);
    }, periodMs);
    this.#resyncTimers.set(queue, timer);
  }
}

function aborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (signal === undefined) return;
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}
