/**
 * client-node's `makeInformer` with Raven underneath: the same calls (`on`, `off`, `start`,
 * `stop`, `list`, `get`) and callbacks, fed by Raven's watcher and informer (`src/watch`,
 * `src/informer`), with Raven's client built from the `KubeConfig` (`kube-config.ts`).
 *
 * Guarantees, where client-node's informer gives fewer (docs/migrating-from-client-node.md):
 * - it never stops on its own: a failure is passed to the `error` callbacks as a report while
 *   the watcher recovers; no restart code is needed (a `start()` on a running informer is a no-op);
 * - after a disconnect it resumes from the last resourceVersion without listing; on 410 it
 *   relists, and objects deleted meanwhile reach the `delete` callbacks (their last known state);
 * - a dead connection is found (HTTP/2 PING, no byte for 75 s) and replaced;
 * - `stop()` then `start()` resumes where it stopped, without a list while the server keeps the history.
 *
 * Differences decided on purpose: callbacks run after the cache holds the change, from a queue
 * (not inside the socket's read); `update` callbacks also get the previous state as a second
 * argument; `connect` fires before each list (the first and each relist), not before each resume;
 * `error` gets Raven's error (a `RavenError` with a `code`); the cache holds objects without
 * `metadata.managedFields`; the list function is not called (Raven lists `path` itself, paginated).
 */
import { NAMESPACE_INDEX } from '../cache/store.js';
import type { KubeClient } from '../client/kube-client.js';
import type { KubeObject } from '../client/kube-object.js';
import { makeObjectKey } from '../client/object-key.js';
import { isExpired } from '../errors/classify.js';
import { RavenError } from '../errors/raven-error.js';
import {
  Informer,
  type HandlerRegistration,
  type InformerSource,
  type InformerStatus,
} from '../informer/informer.js';
import { watch } from '../watch/watcher.js';
import type { WatcherEvent } from '../watch/watcher-events.js';
import { CallbackFailures } from './callback-failure.js';
import { acquireClient, releaseClient, type KubeConfigLike } from './kube-config.js';

/**
 * What the informer's type parameter must be: client-node's models (`V1Pod`, ...) and Raven's
 * `KubeObject` both are.
 */
export interface ClientNodeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** client-node's object callback; `update` callbacks also receive the previous state. */
export type ObjectCallback<T> = (obj: T, previous?: T) => void;
/** `error` callbacks get the failure; `connect` callbacks get nothing. */
export type ErrorCallback = (err?: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any
/** client-node's list function: accepted for the signature, never called (see the header). */
export type ListPromise<T> = () => Promise<{ items: T[] }>;

/** The object callbacks `RavenInformer.on` takes, as client-node names them. */
export type ObjectVerb = 'add' | 'update' | 'delete';
type Verb = ObjectVerb | 'change' | 'connect' | 'error';
const VERBS: readonly Verb[] = ['add', 'update', 'delete', 'change', 'connect', 'error'];

interface Run {
  abort: AbortController;
  /** Settles when the first list is handled or the first failure reported. */
  started: Promise<void>;
  done: Promise<void>;
}

/**
 * An informer with client-node's interface; make one with {@link makeInformer}.
 *
 * @example
 * const informer = makeInformer(kc, '/api/v1/namespaces/default/pods', () => api.listNamespacedPod({ namespace: 'default' }));
 * informer.on('add', (pod) => console.log('added', pod.metadata?.name));
 * await informer.start();
 */
export class RavenInformer<T extends ClientNodeObject> {
  readonly #kubeConfig: KubeConfigLike;
  readonly #path: string;
  readonly #labelSelector: string | undefined;
  readonly #fieldSelector: string | undefined;
  readonly #informer: Informer<KubeObject>;
  readonly #registration: HandlerRegistration;
  readonly #objectCallbacks: Record<ObjectVerb, ObjectCallback<T>[]> = { add: [], update: [], delete: [] };
  readonly #connectCallbacks: ErrorCallback[] = [];
  readonly #errorCallbacks: ErrorCallback[] = [];
  readonly #failures: CallbackFailures;
  #starting: Promise<void> | undefined;
  #run: Run | undefined;
  #reportStart: (() => void) | undefined;
  /** The resourceVersion the cache is at (a relist in progress does not move it). */
  #resourceVersion: string | undefined;
  #listing = false;
  #client: KubeClient | undefined;

  constructor(kubeConfig: KubeConfigLike, path: string, labelSelector?: string, fieldSelector?: string) {
    if (typeof path !== 'string' || !path.startsWith('/')) {
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `makeInformer: path must be a collection path such as '/api/v1/namespaces/default/pods', got ${JSON.stringify(path)}`,
      );
    }
    this.#kubeConfig = kubeConfig;
    this.#path = path;
    this.#labelSelector = labelSelector;
    this.#fieldSelector = fieldSelector;
    this.#failures = new CallbackFailures(`the informer of ${path}`);
    this.#informer = new Informer<KubeObject>({
      name: path,
      // client-node hands out plain objects that programs may change; so does this cache.
      freeze: 'never',
      source: () => this.#source(),
    });
    this.#registration = this.#informer.addEventHandler({
      add: (obj) => this.#emit('add', obj as T),
      update: (old, obj) => this.#emit('update', obj as T, old as T),
      delete: (obj) => this.#emit('delete', obj as T),
    });
  }

  on(verb: ObjectVerb | 'change', cb: ObjectCallback<T>): void;
  on(verb: 'connect' | 'error', cb: ErrorCallback): void;
  on(verb: Verb, cb: ObjectCallback<T> | ErrorCallback): void {
    for (const list of this.#lists(verb)) list.push(cb);
  }

  off(verb: ObjectVerb | 'change', cb: ObjectCallback<T>): void;
  off(verb: 'connect' | 'error', cb: ErrorCallback): void;
  off(verb: Verb, cb: ObjectCallback<T> | ErrorCallback): void {
    for (const list of this.#lists(verb)) {
      const at = (list as unknown[]).indexOf(cb);
      if (at !== -1) list.splice(at, 1);
    }
  }

  /**
   * Start (or resume) watching. Resolves once the first list has reached the callbacks, or once a
   * first failure has been reported to the `error` callbacks (the informer goes on trying).
   * Rejects only when the `KubeConfig` cannot be used. A no-op while running.
   */
  start(): Promise<void> {
    this.#starting ??= this.#start().finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  /** Stop watching; resolves once stopped. The cache is kept, and a later `start()` resumes from it. */
  async stop(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    const run = this.#run;
    if (run === undefined) return;
    this.#run = undefined;
    run.abort.abort();
    await run.done;
  }

  /** The cached objects, of one namespace or of all. */
  list(namespace?: string): readonly T[] {
    const objects =
      namespace === undefined || namespace === ''
        ? this.#informer.store.list()
        : this.#informer.store.byIndex(NAMESPACE_INDEX, namespace);
    return objects as unknown as readonly T[];
  }

  /** One cached object; `namespace` for a namespaced one. */
  get(name: string, namespace?: string): T | undefined {
    return this.#informer.store.get(makeObjectKey(name, namespace === '' ? undefined : namespace)) as
      T | undefined;
  }

  /** The resourceVersion the cache is at. */
  latestResourceVersion(): string {
    return this.#resourceVersion ?? '';
  }

  /** Raven's view of the informer: phase, synced, relists, reconnects, the last error... */
  status(): InformerStatus {
    return this.#informer.status();
  }

  async #start(): Promise<void> {
    if (this.#run !== undefined) return;
    this.#client = await acquireClient(this.#kubeConfig);
    const abort = new AbortController();
    const started = new Promise<void>((resolve) => (this.#reportStart = resolve));
    const synced = this.#registration.synced(abort.signal).catch(() => undefined);
    const done = this.#informer
      .run(abort.signal)
      .catch((err: unknown) => this.#emitError(err))
      .finally(async () => {
        this.#reportStart?.();
        this.#failures.summarize();
        await releaseClient(this.#kubeConfig);
      });
    this.#run = { abort, started, done };
    await Promise.race([started, synced]);
  }

  /** The watcher for one run: from the cache's resourceVersion after a stop, else a list. */
  #source(): InformerSource<KubeObject> {
    const transport = this.#client;
    if (transport === undefined)
      throw new RavenError('ERR_INVALID_STATE', 'the informer runs only after its client is made');
    const resume =
      this.#resourceVersion === undefined
        ? undefined
        : { resourceVersion: this.#resourceVersion, objects: this.#informer.store.list() as KubeObject[] };
    const watcher = watch({
      transport,
      path: this.#path,
      ...(this.#labelSelector === undefined ? {} : { labelSelector: this.#labelSelector }),
      ...(this.#fieldSelector === undefined ? {} : { fieldSelector: this.#fieldSelector }),
      // The informer's store keeps the objects; server-side apply bookkeeping is not cached.
      keepObjects: false,
      dropManagedFields: true,
      ...(resume === undefined ? {} : { resume }),
    });
    return {
      status: () => watcher.status(),
      close: () => watcher.close(),
      [Symbol.asyncIterator]: () => {
        const events = watcher[Symbol.asyncIterator]();
        return {
          next: async () => {
            const next = await events.next();
            if (next.done !== true) this.#observe(next.value);
            return next;
          },
          return: async () => (await events.return?.()) ?? { done: true, value: undefined },
        };
      },
    };
  }

  /** What the callbacks of `connect` and `error` hear, and where the cache is. */
  #observe(event: WatcherEvent): void {
    switch (event.type) {
      case 'listing':
        this.#listing = true;
        for (const cb of [...this.#connectCallbacks]) this.#failures.call(() => cb(undefined));
        break;
      case 'synced':
        this.#listing = false;
        this.#resourceVersion = event.resourceVersion;
        break;
      case 'added':
      case 'modified':
      case 'deleted':
        if (!this.#listing)
          this.#resourceVersion = event.object.metadata?.resourceVersion ?? this.#resourceVersion;
        break;
      case 'bookmark':
        if (!this.#listing) this.#resourceVersion = event.resourceVersion;
        break;
      case 'error':
        // 410 is not a failure here: the relist that follows is announced by `connect`.
        if (!isExpired(event.error)) this.#emitError(event.error);
        break;
      case 'initial':
        break;
    }
  }

  #emit(verb: ObjectVerb, obj: T, previous?: T): void {
    for (const cb of [...this.#objectCallbacks[verb]]) this.#failures.call(() => cb(obj, previous));
  }

  #emitError(err: unknown): void {
    for (const cb of [...this.#errorCallbacks]) this.#failures.call(() => cb(err));
    this.#reportStart?.();
  }

  #lists(verb: Verb): (ObjectCallback<T> | ErrorCallback)[][] {
    switch (verb) {
      case 'add':
      case 'update':
      case 'delete':
        return [this.#objectCallbacks[verb]];
      case 'change':
        return [this.#objectCallbacks.add, this.#objectCallbacks.update, this.#objectCallbacks.delete];
      case 'connect':
        return [this.#connectCallbacks];
      case 'error':
        return [this.#errorCallbacks];
      default:
        throw new RavenError(
          'ERR_INVALID_ARGUMENT',
          `unknown informer event ${JSON.stringify(verb)}; valid: ${VERBS.join(', ')}`,
        );
    }
  }
}

/**
 * client-node's `makeInformer`, Raven underneath: an informer of the collection at `path`.
 * `listFn` is accepted so that client-node code compiles unchanged, and never called: Raven
 * lists `path` itself with the same selectors as the watch.
 *
 * @example
 * const informer = makeInformer(kc, '/api/v1/namespaces/default/pods', listFn, 'app=web');
 * informer.on('error', (err) => console.error('recovering:', err)); // no restart needed
 * await informer.start();
 */
export function makeInformer<T extends ClientNodeObject = KubeObject>(
  kubeConfig: KubeConfigLike,
  path: string,
  _listFn?: ListPromise<T>,
  labelSelector?: string,
  fieldSelector?: string,
): RavenInformer<T> {
  return new RavenInformer<T>(kubeConfig, path, labelSelector, fieldSelector);
}
