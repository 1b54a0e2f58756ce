/**
 * One configured watcher at work: it watches the resource in its scope, keeps every current object
 * (redacted, as sinks will see them), and turns each change into a ChangeEvent for the daemon. The
 * first complete list is announced with all current objects, so the daemon can compare them with
 * each sink's checkpoint before any live change is passed on.
 */
import type { ResolvedResource } from '../client/api-resource.js';
import type { KubeObject } from '../client/kube-object.js';
import { keyOf } from '../watch/known-objects.js';
import { watchResource, type ScopedWatcher } from '../watch/watch-resource.js';
import type { WatchTransport } from '../watch/watcher.js';
import type { WatcherStatus } from '../watch/watcher-events.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { ChangeEvent, ResourceId } from './change-event.js';
import type { WatcherConfig } from './config/watcher-schema.js';
import { redact } from './redact.js';
import { toChangeEvent } from './to-change-event.js';

export interface PipelineCallbacks {
  /** The first list is complete: `objects` is everything that exists now. */
  synced(objects: readonly KubeObject[]): void;
  /** A change after the first list (live, or found by a relist). */
  change(event: ChangeEvent): void;
  relisting(): void;
  error(error: Error, status: WatcherStatus): void;
}

export class WatcherPipeline {
  readonly config: WatcherConfig;
  readonly resource: ResourceId;
  readonly #resolved: ResolvedResource;
  readonly #objects = new Map<string, KubeObject>();
  #watcher: ScopedWatcher | undefined;
  #synced = false;

  constructor(config: WatcherConfig, resolved: ResolvedResource) {
    this.config = config;
    this.#resolved = resolved;
    this.resource = {
      group: resolved.group,
      version: resolved.version,
      resource: resolved.resource,
      kind: resolved.kind,
    };
  }

  get synced(): boolean {
    return this.#synced;
  }

  status(): WatcherStatus | undefined {
    return this.#watcher?.status();
  }

  /** Current objects (redacted). */
  objects(): KubeObject[] {
    return [...this.#objects.values()];
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#objects.get(keyOf({ namespace, name }));
  }

  /** Watch until `signal` aborts. */
  async run(
    options: {
      transport: WatchTransport;
      clock: Clock;
      logger: Logger;
      diffIgnore: readonly string[];
      signal: AbortSignal;
    },
    callbacks: PipelineCallbacks,
  ): Promise<void> {
    const c = this.config;
    const watcher = watchResource({
      transport: options.transport,
      resource: this.#resolved,
      namespaces: c.namespaces,
      labelSelector: c.labelSelector,
      fieldSelector: c.fieldSelector,
      dropManagedFields: c.dropManagedFields,
      // The pipeline keeps each object (redacted) for diffs and tombstones: the watcher need not.
      keepObjects: false,
      clock: options.clock,
      logger: options.logger,
      signal: options.signal,
    });
    this.#watcher = watcher;
    const context = { watcher: c.name, resource: this.resource, diffIgnore: options.diffIgnore };
    let relisting = false;
    for await (const event of watcher) {
      const time = new Date(options.clock.now()).toISOString();
      switch (event.type) {
        case 'listing':
          relisting = event.relist;
          if (event.relist) callbacks.relisting();
          break;
        case 'initial': {
          const object = redact(event.object, this.resource.resource);
          this.#objects.set(keyOf(object.metadata), object);
          break;
        }
        case 'synced':
          if (!event.relist) {
            this.#synced = true;
            callbacks.synced(this.objects());
          }
          relisting = false;
          break;
        case 'added':
        case 'modified':
        case 'deleted': {
          const origin = relisting ? 'relist' : 'live';
          const key = keyOf(event.object.metadata);
          const previous = this.#objects.get(key);
          const change = toChangeEvent(
            { ...context, time },
            {
              type: event.type,
              object:
                event.type === 'deleted' && event.tombstone && previous !== undefined
                  ? previous
                  : event.object,
              previous: event.type === 'modified' ? previous : undefined,
              tombstone: event.type === 'deleted' && event.tombstone,
              origin,
            },
          );
          if (event.type === 'deleted') this.#objects.delete(key);
          else this.#objects.set(key, change.object);
          if (this.#synced) callbacks.change(change);
          break;
        }
        case 'error':
          callbacks.error(event.error, event.status);
          break;
        case 'bookmark':
          break;
      }
    }
  }
}
