/**
 * Watch a resource across a namespace scope: one namespace, several, all, or patterns with
 * exclusions (`team-*`, `!kube-*`). The scope is planned (see `scope/plan-namespace-queries.ts`)
 * into one watcher per namespace or one cluster-wide watcher filtered before parsing, and their
 * events are merged. `synced` is delivered once every underlying watcher has synced; later
 * `synced` events (relists of one of them) pass through.
 *
 * With `outages`, one tracker (`outage-tracker.ts`) is told every event of every watch and reports
 * each outage in a few lines, for all the namespaces as one subject.
 *
 * Selectors are validated up front: a bad one throws a SelectorError naming the position and what
 * would be valid, before any request is made.
 */
import type { ResourceRef } from '../client/resource-path.js';
import { resourcePath } from '../client/resource-path.js';
import { parseFieldSelector } from './scope/field-selector.js';
import { parseLabelSelector } from './scope/parse-label-selector.js';
import { parseNamespaceScope, type NamespaceScopeSpec } from './scope/namespace-scope.js';
import { planNamespaceQueries } from './scope/plan-namespace-queries.js';
import { systemClock } from '../util/clock.js';
import { merge } from './merge.js';
import { OutageTracker, type OutageTrackerOptions } from './outage-tracker.js';
import type { ObjectPeek } from './decode/peek.js';
import { Watcher, type WatcherOptions } from './watcher.js';
import type { KubeObject, WatcherEvent, WatcherStatus } from './watcher-events.js';

export interface WatchResourceOptions extends Omit<
  WatcherOptions,
  'path' | 'accept' | 'labelSelector' | 'fieldSelector'
> {
  /** The resource, as discovery resolved it. */
  resource: ResourceRef;
  /** Namespace scope; undefined (or `[]`) is every namespace. Ignored for cluster-scoped resources. */
  namespaces?: NamespaceScopeSpec | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /**
   * Report outages as a few lines (`outage-tracker.ts`): one when one starts, one every 30 s
   * while it lasts, one when it heals. One tracker for all the namespaces watched. Default: not
   * reported (each failure is still an `error` event).
   */
  outages?: OutageReporting;
}

/** What {@link watchResource} needs to report outages; the clock and the statuses are its own. */
export type OutageReporting = Pick<OutageTrackerOptions, 'report'> &
  Partial<Pick<OutageTrackerOptions, 'what' | 'server' | 'counts' | 'everyMs' | 'checkMs'>>;

/** One or more watchers behind one stream of events. */
export class ScopedWatcher<T extends KubeObject = KubeObject> implements AsyncIterable<WatcherEvent<T>> {
  /** The underlying watchers, by the namespace they watch (`*` for cluster-wide). */
  readonly watchers: ReadonlyMap<string, Watcher<T>>;
  readonly #outages: OutageTracker | undefined;

  /** `outages`: told every event of every watch, closed when the iteration ends. */
  constructor(watchers: ReadonlyMap<string, Watcher<T>>, outages?: OutageTracker) {
    this.watchers = watchers;
    this.#outages = outages;
  }

  /** Whether its failures are reported as outages (`outages`), not one by one. */
  get reportsOutages(): boolean {
    return this.#outages !== undefined;
  }

  /** The combined status: synced when all are, the worst phase, summed counts, the latest error. */
  status(): WatcherStatus {
    const all = [...this.watchers.values()].map((w) => w.status());
    const order = ['failing', 'backoff', 'listing', 'watching', 'stopped'] as const;
    const phase = order.find((p) => all.some((s) => s.phase === p)) ?? 'stopped';
    const latest = all
      .map((s) => s.lastError)
      .filter((e) => e !== undefined)
      .sort((a, b) => b.at - a.at)[0];
    return {
      phase,
      synced: all.every((s) => s.synced),
      resourceVersion: all.length === 1 ? all[0]?.resourceVersion : undefined,
      lastError: latest,
      lastEventAt: Math.max(...all.map((s) => s.lastEventAt ?? 0)) || undefined,
      secondsSinceLastEvent: Math.min(...all.map((s) => s.secondsSinceLastEvent)),
      relists: all.reduce((n, s) => n + s.relists, 0),
      reconnects: all.reduce((n, s) => n + s.reconnects, 0),
      failures: Math.max(...all.map((s) => s.failures)),
      watchList: all.every((s) => s.watchList),
      objects: all.reduce((n, s) => n + s.objects, 0),
    };
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatcherEvent<T>> {
    // One watcher (one namespace, or one cluster-wide watch): its own events, with nothing between
    // (unless outages are reported: the tracker is told each event on the way).
    const only = this.watchers.size === 1 ? [...this.watchers.values()][0] : undefined;
    if (only !== undefined && this.#outages === undefined) return only[Symbol.asyncIterator]();
    return this.#merged();
  }

  /**
   * Every watch's events, each with the scope it came from (a namespace, or `*`), merged in
   * arrival order: for a consumer that follows each scope (each has its own resourceVersions).
   * Closing it closes the watchers and the outage tracker.
   */
  scoped(): AsyncGenerator<{ scope: string; event: WatcherEvent<T> }, void, undefined> {
    const outages = this.#outages;
    const tagged = [...this.watchers].map(([scope, watcher]) => tag(scope, watcher, outages));
    return merge(tagged, () => {
      this.close();
      outages?.close();
    });
  }

  async *#merged(): AsyncGenerator<WatcherEvent<T>, void, undefined> {
    const unsynced = new Set(this.watchers.keys());
    let announced = false;
    for await (const { scope, event } of this.scoped()) {
      if (event.type !== 'synced' || announced) {
        yield event;
        continue;
      }
      unsynced.delete(scope);
      if (unsynced.size === 0) {
        announced = true;
        yield event;
      }
    }
  }
}

/** A watcher's events with its scope, each told to the outage tracker first (no generator more). */
async function* tag<T extends KubeObject>(
  scope: string,
  watcher: Watcher<T>,
  outages: OutageTracker | undefined,
): AsyncGenerator<{ scope: string; event: WatcherEvent<T> }, void, undefined> {
  for await (const event of watcher) {
    outages?.observe(scope, event);
    yield { scope, event };
  }
}

/**
 * Watch a resource in a namespace scope.
 *
 * @example
 * const deployments = await discovery.resolve('deploy');
 * const w = watchResource({ transport: client, resource: deployments, namespaces: ['team-*', '!team-legacy'] });
 * for await (const event of w) console.log(event.type);
 */
export function watchResource<T extends KubeObject = KubeObject>(
  options: WatchResourceOptions,
): ScopedWatcher<T> {
  // `outages` is the ScopedWatcher's (see `scoped`), not each Watcher's.
  const {
    resource,
    namespaces,
    resume,
    labelSelector: _labelSelector,
    fieldSelector: _fieldSelector,
    outages: _outages,
    ...rest
  } = options;
  // A resumed watcher knows only the objects in its own scope, or a relist would tombstone the rest.
  const resumeWhere = (keep: (namespace: string | undefined) => boolean): Pick<WatcherOptions, 'resume'> =>
    resume === undefined
      ? {}
      : {
          resume: {
            resourceVersion: resume.resourceVersion,
            objects: [...resume.objects].filter((o) => keep(o.metadata?.namespace)),
          },
        };
  const labelSelector =
    options.labelSelector === undefined
      ? undefined
      : parseLabelSelector(options.labelSelector).toString() || undefined;
  const fieldSelector =
    options.fieldSelector === undefined ? undefined : parseFieldSelector(options.fieldSelector);
  const base = { ...rest, ...(labelSelector === undefined ? {} : { labelSelector }) };
  const watchers = new Map<string, Watcher<T>>();
  if (!resource.namespaced) {
    const clusterFieldSelector = fieldSelector?.toString() || undefined;
    watchers.set(
      '*',
      new Watcher<T>({
        ...base,
        ...(clusterFieldSelector === undefined ? {} : { fieldSelector: clusterFieldSelector }),
        path: resourcePath(resource),
        ...(resume === undefined ? {} : { resume }),
      }),
    );
    return scoped(watchers, options);
  }
  const plan = planNamespaceQueries(parseNamespaceScope(namespaces, { path: 'namespaces' }), {
    fieldSelector,
  });
  if (plan.mode === 'namespaced') {
    for (const namespace of plan.namespaces) {
      watchers.set(
        namespace,
        new Watcher<T>({
          ...base,
          ...(plan.fieldSelector === undefined ? {} : { fieldSelector: plan.fieldSelector }),
          path: resourcePath(resource, { namespace }),
          ...resumeWhere((ns) => ns === namespace),
        }),
      );
    }
  } else {
    const filter = plan.filter;
    watchers.set(
      '*',
      new Watcher<T>({
        ...base,
        ...(plan.fieldSelector === undefined ? {} : { fieldSelector: plan.fieldSelector }),
        path: resourcePath(resource),
        ...(filter === undefined
          ? {}
          : {
              accept: (peek: ObjectPeek) => peek.namespace === undefined || filter(peek.namespace),
              acceptReads: ['namespace'],
            }),
        ...resumeWhere((ns) => filter === undefined || ns === undefined || filter(ns)),
      }),
    );
  }
  return scoped(watchers, options);
}

/** The watchers as one, with their outage tracker when outages are reported. */
function scoped<T extends KubeObject>(
  watchers: Map<string, Watcher<T>>,
  options: WatchResourceOptions,
): ScopedWatcher<T> {
  const { outages, resource } = options;
  if (outages === undefined) return new ScopedWatcher(watchers);
  const what = watchers.size > 1 ? `${resource.resource} in ${watchers.size} namespaces` : resource.resource;
  const tracker = new OutageTracker({
    what,
    clock: options.clock ?? systemClock,
    status: (scope) => watchers.get(scope)?.status(),
    ...outages,
  });
  return new ScopedWatcher(watchers, tracker);
}
