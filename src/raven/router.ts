/**
 * Which sinks and handlers a change goes to: the routes of the config, the watcher's own event
 * filter and predicates. A watcher that is routed to a sink but whose change is filtered out still
 * reaches the sink's checkpoint (silently), so a restart does not bring the filtered change back.
 */
import type { ChangeEvent, ChangeType } from './change-event.js';
import type { RavenConfig } from './config/raven-config-schema.js';
import type { Verdict } from './delivery/sink-delivery.js';
import type { WatcherConfig } from './config/watcher-schema.js';
import { occurrencePasses } from './events/occurrence-filter.js';
import { passes } from './predicates.js';

export type { Verdict };

export class Router {
  readonly #config: RavenConfig;
  /** watcher → sink → the event types routed. */
  readonly #routes = new Map<string, Map<string, Set<ChangeType>>>();

  constructor(config: RavenConfig) {
    this.#config = config;
    for (const route of config.routes) {
      for (const watcher of route.watchers) {
        const sinks = this.#routes.get(watcher) ?? new Map<string, Set<ChangeType>>();
        this.#routes.set(watcher, sinks);
        for (const sink of route.sinks) {
          const types = sinks.get(sink) ?? new Set<ChangeType>();
          for (const type of route.events) types.add(type);
          sinks.set(sink, types);
        }
      }
    }
  }

  /** The sinks a watcher is routed to (whatever the event type). */
  sinksOf(watcher: string): string[] {
    return [...(this.#routes.get(watcher)?.keys() ?? [])];
  }

  /** The watchers routed to a sink. */
  watchersOf(sink: string): string[] {
    return [...this.#routes].filter(([, sinks]) => sinks.has(sink)).map(([watcher]) => watcher);
  }

  /** Whether `event` is delivered to `sink` or only recorded in its checkpoint. */
  verdict(event: ChangeEvent, sink: string): Verdict {
    const watcher = this.#config.watchers.find((w) => w.name === event.watcher);
    const types = this.#routes.get(event.watcher)?.get(sink);
    if (watcher === undefined || types === undefined) return 'silent';
    if (!types.has(event.type)) return 'silent';
    return watcherPasses(event, watcher) ? 'deliver' : 'silent';
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
