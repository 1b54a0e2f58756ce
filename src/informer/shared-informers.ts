/**
 * Shared informers: one watch per (resource, namespace scope, selectors), however many consumers
 * ask for it. Ask with {@link SharedInformers.informerFor}; start them all with `start(signal)`
 * (informers asked for later start at once); `waitForSync()` waits for every one.
 */
import type { Indexers } from '../cache/store.js';
import type { KubeObject } from '../client/kube-object.js';
import type { ResourceRef } from '../client/resource-path.js';
import { RavenError } from '../errors/raven-error.js';
import type { Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { raceSignal } from '../util/signals.js';
import { parseFieldSelector } from '../watch/scope/field-selector.js';
import { parseLabelSelector } from '../watch/scope/parse-label-selector.js';
import type { NamespaceScopeSpec } from '../watch/scope/namespace-scope.js';
import { watchResource } from '../watch/watch-resource.js';
import type { WatcherOptions, WatchTransport } from '../watch/watcher.js';
import { shardSelector, type Shard } from '../watch/shard/shard.js';
import { Informer } from './informer.js';

/** What one informer watches. */
export interface InformerSpec {
  resource: ResourceRef;
  namespaces?: NamespaceScopeSpec;
  labelSelector?: string;
  fieldSelector?: string;
  /** Cache one shard of the collection only (see `WatcherOptions.shard`). */
  shard?: Shard;
}

/** Watcher settings shared by every informer of a factory. */
export type SharedWatcherSettings = Omit<
  WatcherOptions,
  'transport' | 'path' | 'accept' | 'labelSelector' | 'fieldSelector' | 'signal' | 'clock' | 'logger'
>;

export interface SharedInformersOptions {
  transport: WatchTransport;
  /**
   * Settings for every informer's watcher. Defaults differ from a bare watcher's: objects are
   * decoded without `metadata.managedFields` (`dropManagedFields: true`) and the watcher keeps no
   * copy of them (`keepObjects: false`: the store has them).
   */
  watcher?: SharedWatcherSettings;
  /** Applied to every object before it is cached, e.g. `dropManagedFields`. */
  transform?: <T extends KubeObject>(obj: T) => T;
  clock?: Clock;
  logger?: Logger;
}

interface Entry {
  informer: Informer<KubeObject>;
  indexers: string[];
  run: Promise<void> | undefined;
}

export class SharedInformers {
  readonly #options: SharedInformersOptions;
  readonly #entries = new Map<string, Entry>();
  #signal: AbortSignal | undefined;
  readonly #log: Logger;

  constructor(options: SharedInformersOptions) {
    this.#options = options;
    this.#log = options.logger ?? silentLogger;
  }

  /**
   * The informer for `spec`, created on first request. Indexers given by a later caller must already
   * exist on it (same names), since a running cache cannot be re-indexed.
   *
   * @example
   * const informers = new SharedInformers({ transport: client });
   * const pods = informers.informerFor<Pod>({ resource: podsRef, namespaces: 'shop' }, { byNode: (p) => [p.spec?.nodeName ?? ''] });
   */
  informerFor<T extends KubeObject>(spec: InformerSpec, indexers: Indexers<T> = {}): Informer<T> {
    const key = specKey(spec);
    const existing = this.#entries.get(key);
    if (existing !== undefined) {
      const missing = Object.keys(indexers).filter((name) => !existing.indexers.includes(name));
      if (missing.length > 0) {
        throw new RavenError(
          'ERR_INVALID_INDEX',
          `informer ${key} already exists without the indexes ${missing.join(', ')}; declare every index where the informer is first asked for`,
        );
      }
      return existing.informer as unknown as Informer<T>;
    }
    const { transport, watcher, clock, logger, transform } = this.#options;
    const informer = new Informer<T>({
      name: key,
      indexers,
      ...(transform === undefined ? {} : { transform }),
      ...(clock === undefined ? {} : { clock }),
      ...(logger === undefined ? {} : { logger }),
      source: () =>
        watchResource<T>({
          // The store keeps every object (and gives handlers the old one): the watcher need not.
          keepObjects: false,
          // Server-side apply bookkeeping, often a third of an object, that no controller reads
          // from a cache: never parsed nor kept unless asked for (`watcher.dropManagedFields: false`).
          dropManagedFields: true,
          ...watcher,
          transport,
          ...(clock === undefined ? {} : { clock }),
          ...(logger === undefined ? {} : { logger }),
          resource: spec.resource,
          namespaces: spec.namespaces,
          labelSelector: spec.labelSelector,
          fieldSelector: spec.fieldSelector,
          ...(spec.shard === undefined ? {} : { shard: spec.shard }),
        }),
    });
    const entry: Entry = {
      informer: informer as unknown as Informer<KubeObject>,
      indexers: Object.keys(indexers),
      run: undefined,
    };
    this.#entries.set(key, entry);
    if (this.#signal !== undefined) this.#run(entry, this.#signal);
    return informer;
  }

  /** Run every informer (and any asked for later) until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.#signal = signal;
    for (const entry of this.#entries.values()) if (entry.run === undefined) this.#run(entry, signal);
  }

  /** Resolve once every informer asked for so far has synced; reject when `signal` aborts first. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    // One abort listener for all of them, not one per informer: the events watcher's cache of
    // involved objects alone has more informers than Node's listener warning threshold (10).
    await raceSignal(Promise.all([...this.#entries.values()].map((e) => e.informer.waitForSync())), signal);
  }

  get informers(): Informer<KubeObject>[] {
    return [...this.#entries.values()].map((e) => e.informer);
  }

  /** Resolve once every started informer has stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    await Promise.all([...this.#entries.values()].map(async (e) => e.run));
  }

  #run(entry: Entry, signal: AbortSignal): void {
    entry.run = entry.informer.run(signal).catch((err: unknown) => {
      this.#log.error(
        { err: err instanceof Error ? err.message : String(err), informer: entry.informer.name },
        'informer stopped',
      );
    });
  }
}

/** The identity of a watch: resource, normalised scope and selectors. */
export function specKey(spec: InformerSpec): string {
  const { group, version, resource } = spec.resource;
  const scope =
    spec.namespaces === undefined
      ? ''
      : typeof spec.namespaces === 'string'
        ? spec.namespaces
        : [...spec.namespaces].sort().join(',');
  const labels = spec.labelSelector === undefined ? '' : parseLabelSelector(spec.labelSelector).toString();
  const fields = spec.fieldSelector === undefined ? '' : parseFieldSelector(spec.fieldSelector).toString();
  return (
    `${group === '' ? 'core' : group}/${version}/${resource}` +
    (scope ? ` in ${scope}` : '') +
    (labels ? ` -l ${labels}` : '') +
    (fields ? ` --field-selector ${fields}` : '') +
    (spec.shard === undefined ? '' : ` --shard-selector ${shardSelector(spec.shard)}`)
  );
}
