/**
 * Which sinks and handlers a change goes to: the route tree of the config (`route-tree.ts`), the
 * watcher's own event filter and predicates. A watcher that is routed to a sink but whose change is filtered out still
 * reaches the sink's checkpoint (silently), so a restart does not bring the filtered change back.
 */
import type { ChangeEvent } from '../model/change-event.js';
import { routerVerdictChannel } from '../model/diagnostics.js';
import { flattenRoutes } from '../config/route-schema.js';
import type { RavenConfig } from '../config/raven-config-schema.js';
import type { Verdict } from '../model/delivery-verdict.js';
import type { WatcherConfig } from '../config/watcher-schema.js';
import { occurrencePasses } from '../events/occurrence-filter.js';
import { passes } from './predicates.js';
import { routeSinks } from './route-tree.js';

export type { Verdict };

export class Router {
  readonly #config: RavenConfig;
  /** watcher → every sink some route from it may send to. */
  readonly #reachable = new Map<string, Set<string>>();
  /** The tree's answer for the change asked about last (asked once per sink, in a row). */
  #last: { event: ChangeEvent; sinks: Set<string> } | undefined;

  constructor(config: RavenConfig) {
    this.#config = config;
    for (const { route } of flattenRoutes(config.routes)) {
      for (const watcher of route.watchers) {
        const sinks = this.#reachable.get(watcher) ?? new Set<string>();
        this.#reachable.set(watcher, sinks);
        for (const sink of route.sinks) sinks.add(sink);
      }
    }
  }

  /** The sinks a watcher may be routed to (whatever the event). */
  sinksOf(watcher: string): string[] {
    return [...(this.#reachable.get(watcher) ?? [])];
  }

  /** The watchers routed to a sink. */
  watchersOf(sink: string): string[] {
    return [...this.#reachable].filter(([, sinks]) => sinks.has(sink)).map(([watcher]) => watcher);
  }

  /** Whether `event` is delivered to `sink` or only recorded in its checkpoint. */
  verdict(event: ChangeEvent, sink: string): Verdict {
    const verdict = this.#decide(event, sink);
    if (routerVerdictChannel.hasSubscribers) routerVerdictChannel.publish({ sink, event, verdict });
    return verdict;
  }

  #decide(event: ChangeEvent, sink: string): Verdict {
    const watcher = this.#config.watchers.find((w) => w.name === event.watcher);
    if (watcher === undefined || this.#reachable.get(event.watcher)?.has(sink) !== true) return 'silent';
    if (!this.#routed(event).has(sink)) return 'silent';
    return watcherPasses(event, watcher) ? 'deliver' : 'silent';
  }

  #routed(event: ChangeEvent): Set<string> {
    if (this.#last?.event !== event) this.#last = { event, sinks: routeSinks(this.#config.routes, event) };
    return this.#last.sinks;
  }

  /** The handlers a change goes to. */
  handlersFor(event: ChangeEvent): string[] {
    const watcher = this.#config.watchers.find((w) => w.name === event.watcher);
    if (watcher === undefined || !watcherPasses(event, watcher)) return [];
    return this.#config.handlers
      .filter((h) => h.watchers.includes(event.watcher) && h.events.includes(event.type))
      .map((h) => h.name);
  }
}

/** The watcher's own filter: its event types, then its predicates (or, for Events, occurrences). */
function watcherPasses(event: ChangeEvent, watcher: WatcherConfig): boolean {
  if (!watcher.events.includes(event.type)) return false;
  return watcher.type === 'events' ? occurrencePasses(event, watcher) : passes(event, watcher.predicates);
}
