/**
 * A level-triggered controller: changes only say *which* key to look at; `reconcile(key)` reads
 * the current state from the informers' caches and converges the world to it. Missing a change is
 * harmless as long as the key is reconciled again, which is why every trigger just enqueues a key.
 *
 * Triggers: the primary resource (its own key), owned resources (through their ownerReferences to
 * the primary kind), and custom mappers from any informer. Results: done, requeue after a delay, or
 * an error (retried with per-key exponential backoff, 5 ms to 1000 s, under an overall rate limit).
 * A key is never reconciled by two workers at once.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { makeObjectKey, objectKey, type ObjectKey } from '../client/object-key.js';
import type { KubeObject } from '../client/kube-object.js';
import type { Informer } from '../informer/informer.js';
import type { HandlerRegistration } from '../informer/informer.js';
import type { EventHandlers } from '../informer/informer-events.js';
import { done, type HandlerResult } from '../queue/handler-result.js';
import { createRateLimitingQueue } from '../queue/rate-limiting-queue.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import type { QueueMetrics } from '../queue/queue-metrics.js';
import { runWorkers, type WorkerRunner } from '../queue/worker-runner.js';
import { systemClock, type Clock } from '../util/clock.js';
import { RavenError } from '../errors/raven-error.js';
import { silentLogger, stderrLogger, type Logger } from '../util/logger.js';

export interface ReconcileContext {
  signal: AbortSignal;
  logger: Logger;
}

/** What reconcile may return: nothing (done), or a result from `done()`, `requeueAfter(ms)`, `failed(err)`. */
export type Reconcile = (key: ObjectKey, context: ReconcileContext) => Promise<HandlerResult | undefined>;

/**
 * The part of an informer the controller uses to be triggered. Any `Informer<Pod>` (or of any
 * other object type, with or without indexes) fits, which `Informer<KubeObject>` would not.
 */
export interface TriggerSource {
  readonly hasSynced: boolean;
  addEventHandler(handlers: EventHandlers<KubeObject>): HandlerRegistration;
}

/** Another informer whose changes map to keys of the primary resource. */
export interface Trigger {
  informer: TriggerSource;
  map: (object: DeepReadonly<KubeObject>) => readonly ObjectKey[];
}

export interface ControllerOptions<T extends KubeObject> {
  name: string;
  /** The primary resource's informer: its objects' keys are what `reconcile` receives. */
  primary: Informer<T>;
  reconcile: Reconcile;
  /** Informers of owned resources: a change enqueues the owner named by an ownerReference of `ownerKind`. */
  owns?: TriggerSource[];
  /** The primary resource's kind, matched against ownerReferences; required with `owns`. */
  ownerKind?: string;
  /** Custom mappers. */
  watches?: Trigger[];
  workers?: number;
  rateLimiter?: RateLimiter<ObjectKey>;
  metrics?: QueueMetrics;
  /** How long a shutdown waits for reconciles in flight. Default 30 s. */
  shutdownDeadlineMs?: number;
  clock?: Clock;
  /**
   * Where the controller logs. Default: nowhere, except a reconcile that throws (most often a bug
   * in it): reported on stderr with its stack, once per key and message rather than at every retry.
   */
  logger?: Logger;
}

export interface ControllerStatus {
  name: string;
  synced: boolean;
  /** Synced, running, and the last reconciles are not all failing. */
  healthy: boolean;
  queueDepth: number;
  inFlight: number;
  reconciled: number;
  failures: number;
  lastError: { key: string; message: string; at: number } | undefined;
}

/** The keys of the owners of `object` of the given kind (same namespace, as Kubernetes requires). */
export function ownerKeys(object: DeepReadonly<KubeObject>, ownerKind: string): ObjectKey[] {
  const namespace = object.metadata?.namespace;
  return (object.metadata?.ownerReferences ?? [])
    .filter((ref) => ref.kind === ownerKind)
    .map((ref) => makeObjectKey(ref.name, namespace));
}

export class Controller<T extends KubeObject> {
  readonly #o: ControllerOptions<T>;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** With no logger: the message each key's reconcile last threw, reported on stderr once. */
  readonly #thrown = new Map<ObjectKey, string>();
  readonly #queue;
  #runner: WorkerRunner<ObjectKey> | undefined;
  #running = false;
  #consecutiveFailures = 0;
  #reconciled = 0;
  #failures = 0;
  #lastError: ControllerStatus['lastError'];

  constructor(options: ControllerOptions<T>) {
    if (options.owns !== undefined && options.owns.length > 0 && options.ownerKind === undefined) {
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `controller ${options.name}: ownerKind is required with owns`,
      );
    }
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = (options.logger ?? silentLogger).child({ controller: options.name });
    this.#queue = createRateLimitingQueue<ObjectKey>({
      clock: this.#clock,
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
  }

  get hasSynced(): boolean {
    return this.#informers().every((i) => i.hasSynced);
  }

  status(): ControllerStatus {
    return {
      name: this.#o.name,
      synced: this.hasSynced,
      healthy: this.#running && this.hasSynced && this.#consecutiveFailures < 10,
      queueDepth: this.#queue.len,
      inFlight: this.#runner?.inFlight ?? 0,
      reconciled: this.#reconciled,
      failures: this.#failures,
      lastError: this.#lastError,
    };
  }

  /** Enqueue a key by hand (e.g. from an external event). */
  enqueue(key: ObjectKey): void {
    this.#queue.add(key);
  }

  /**
   * Register the triggers, wait for the caches to sync, then reconcile until `signal` aborts; on
   * abort, stop taking keys and wait (up to the shutdown deadline) for reconciles in flight.
   * Rejects with `ERR_NOT_STARTED` when an informer it reads was never started (start them first:
   * `informers.start(signal)`).
   */
  async run(signal: AbortSignal): Promise<void> {
    const registrations = this.#register();
    this.#running = true;
    // A cache that nobody started never syncs, and nothing else would keep the process alive:
    // waiting for it would end the program without a word. Informers started in the same turn
    // as `run` (`const running = controller.run(signal); informers.start(signal);`) are fine.
    await Promise.resolve();
    const idle = this.#informers().filter((i) => !i.hasSynced && 'running' in i && i.running === false);
    if (idle.length > 0 && !signal.aborted) {
      for (const r of registrations) r.remove();
      this.#running = false;
      this.#queue.shutDown();
      const names = idle.map((i) => ('name' in i && typeof i.name === 'string' ? i.name : 'an informer'));
      throw new RavenError(
        'ERR_NOT_STARTED',
        `controller ${this.#o.name}: the informer${idle.length === 1 ? '' : 's'} ${names.join(', ')} ${idle.length === 1 ? 'was' : 'were'} never started, so ${idle.length === 1 ? 'its cache' : 'their caches'} would never sync; call informers.start(signal) (or informer.run(signal)) before controller.run(signal)`,
      );
    }
    try {
      // Wait until each handler has enqueued its cache's initial objects, not just until the caches
      // are filled: workers then start from a complete queue.
      await Promise.all(registrations.map((r) => r.synced(signal)));
    } catch {
      for (const r of registrations) r.remove();
      this.#running = false;
      this.#queue.shutDown();
      return;
    }
    this.#log.info({ workers: this.#o.workers ?? 1 }, 'caches synced; reconciling');
    const runner = runWorkers(this.#queue, (key, handlerSignal) => this.#handle(key, handlerSignal), {
      workers: this.#o.workers ?? 1,
      signal,
      clock: this.#clock,
      logger: this.#log,
      shutdownDeadlineMs: this.#o.shutdownDeadlineMs ?? 30_000,
    });
    this.#runner = runner;
    try {
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await runner.close();
    } finally {
      for (const r of registrations) r.remove();
      this.#queue.shutDown();
      this.#running = false;
    }
  }

  async #handle(key: ObjectKey, signal: AbortSignal): Promise<HandlerResult> {
    try {
      const result = (await this.#o.reconcile(key, { signal, logger: this.#log.child({ key }) })) ?? done();
      this.#reconciled++;
      if (result.kind === 'error') this.#recordFailure(key, result.error);
      else this.#consecutiveFailures = 0;
      this.#thrown.delete(key);
      return result;
    } catch (error) {
      this.#reconciled++;
      this.#recordFailure(key, error);
      this.#reportThrown(key, error);
      throw error;
    }
  }

  /**
   * Without a logger, a reconcile that throws is still seen: on stderr, the first time a key
   * throws a message (the worker runner retries it with backoff; a line at every retry would
   * flood the terminal). With a logger, the worker runner logs every throw there.
   */
  #reportThrown(key: ObjectKey, error: unknown): void {
    if (this.#o.logger !== undefined) return;
    const message = error instanceof Error ? error.message : String(error);
    if (this.#thrown.get(key) === message) return;
    this.#thrown.set(key, message);
    stderrLogger.error(
      { err: error, controller: this.#o.name, key: String(key) },
      'reconcile threw; retrying with backoff (said again if it throws something else)',
    );
  }

  #recordFailure(key: ObjectKey, error: unknown): void {
    this.#failures++;
    this.#consecutiveFailures++;
    this.#lastError = {
      key,
      message: error instanceof Error ? error.message : String(error),
      at: this.#clock.now(),
    };
  }

  #informers(): TriggerSource[] {
    return [this.#o.primary, ...(this.#o.owns ?? []), ...(this.#o.watches ?? []).map((w) => w.informer)];
  }

  #register(): HandlerRegistration[] {
    const enqueue = (keys: readonly ObjectKey[]): void => {
      for (const key of keys) this.#queue.add(key);
    };
    const all = (map: (o: DeepReadonly<KubeObject>) => readonly ObjectKey[]) => ({
      add: (o: DeepReadonly<KubeObject>) => enqueue(map(o)),
      update: (old: DeepReadonly<KubeObject>, now: DeepReadonly<KubeObject>) =>
        enqueue([...map(old), ...map(now)]),
      delete: (o: DeepReadonly<KubeObject>) => enqueue(map(o)),
    });
    const registrations: HandlerRegistration[] = [
      (this.#o.primary as TriggerSource).addEventHandler(all((o) => [objectKey(o)])),
    ];
    const ownerKind = this.#o.ownerKind ?? '';
    for (const owned of this.#o.owns ?? [])
      registrations.push(owned.addEventHandler(all((o) => ownerKeys(o, ownerKind))));
    for (const trigger of this.#o.watches ?? [])
      registrations.push(trigger.informer.addEventHandler(all(trigger.map)));
    return registrations;
  }
}
