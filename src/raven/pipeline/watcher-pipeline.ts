/**
 * One configured watcher at work: it watches the resource in its scope, keeps every current object
 * (redacted, as sinks will see them) in one store (`cache/memory-store.ts`, the only copy of the
 * object state in the daemon: the watcher runs with `keepObjects: false`), and turns each change
 * into a ChangeEvent for the daemon. Redaction happens here, once, as an object enters the store;
 * nothing downstream redacts again.
 *
 * A watcher may be several watches (one per namespace, see `watch-resource.ts`); each is a scope,
 * and the daemon is told which scope every change, bookmark and relist came from, since each
 * scope follows its own resourceVersions. The first complete list of every scope is announced with
 * all current objects, so the daemon can compare them with each sink's checkpoint before any live
 * change is passed on.
 *
 * Resumed (`resume`), it lists nothing: it starts from the objects and resourceVersion the daemon
 * kept, announces them at once, and the apiserver replays every change since. If a scope's
 * resourceVersion has expired before it delivered anything, the relist's results are not passed
 * on as changes: `relisted` says `atResumePoint`, and the daemon compares checkpoints instead.
 *
 * Beside each object it keeps where the object's stretch in the watcher's scope started (its
 * `inScopeSince`): the resourceVersion of its `added` (a creation, a move into a selector, or
 * found by a relist), kept through its modifications, ended by its deletion, which it names
 * (`eventId`). An object resumed with, or listed at the start, takes it from the checkpoint
 * (`KnownStretches`), so a deletion has the id a tombstone made from the checkpoint would have;
 * listed and unknown to the checkpoint, its stretch starts at its listed resourceVersion.
 */
import type { ResolvedResource } from '../../client/api-resource.js';
import type { KubeObject } from '../../client/kube-object.js';
import { MemoryStore } from '../../cache/memory-store.js';
import { makeObjectKey, objectKey, sameIncarnation } from '../../client/object-key.js';
import { NAMESPACE_INDEX } from '../../cache/store.js';
import { watchResource, type ScopedWatcher } from '../../watch/watch-resource.js';
import type { WatchTransport } from '../../watch/watcher.js';
import type { OutageReport } from '../../watch/outage-tracker.js';
import type { Shard } from '../../watch/shard/shard.js';
import type { WatcherEvent, WatcherStatus } from '../../watch/watcher-events.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { ChangeEvent, ResourceId } from '../model/change-event.js';
import type { KnownStretches, PipelineEvent, Relist, ResumeFrom } from '../model/pipeline-event.js';
import type { EventFeed } from '../events/event-feed.js';
import type { WatcherConfig } from '../config/watcher-schema.js';
import { watcherChangeChannel } from '../model/diagnostics.js';
import { keepServerJson } from '../model/record-json.js';
import { redact } from '../model/redact.js';
import { compareResourceVersions } from '../model/resource-version.js';
import { buildChangeEvent } from '../model/to-change-event.js';

export type { KnownStretches, PipelineEvent, Relist, ResumeFrom };

/** How the pipeline watches: the transport and the injected clock, logger and randomness. */
export interface PipelineRunOptions {
  transport: WatchTransport;
  clock: Clock;
  logger: Logger;
  diffIgnore: readonly string[];
  signal: AbortSignal;
  /** Random numbers in [0, 1) for the reconnect jitter (Math.random unless injected). */
  random?: () => number;
  /** A sharded replica's part of the objects (`watcher.ts`: the server filters, or the client). */
  shard?: Shard;
  /** The apiserver's URL, for the outage lines (its host and port). */
  server?: string;
}

interface ScopeState {
  relisting: boolean;
  /** Resumed and nothing heard yet: a relist now means the resume point had expired. */
  atResumePoint: boolean;
  from: string | undefined;
  lastEventAt: number | undefined;
  /** Changes found by the relist under way. */
  relistChanges: number;
}

export class WatcherPipeline {
  readonly config: WatcherConfig;
  readonly resource: ResourceId;
  readonly #resolved: ResolvedResource;
  readonly #feed: Pick<EventFeed, 'decorate'> | undefined;
  /**
   * The current objects, redacted. Not frozen: sinks and custom handlers receive these objects,
   * as they always have, and freezing costs CPU on every change.
   */
  readonly #objects = new MemoryStore<KubeObject>({ freeze: 'never' });
  /** Incarnations other than the one kept for their name, by uid (see {@link WatcherPipeline.#keep}). */
  readonly #older = new Map<string, KubeObject>();
  /**
   * Per incarnation kept (by {@link stretchOf}), the resourceVersion at which it entered the
   * watcher's scope; undefined when unknown (a checkpoint entry written by an older Raven).
   */
  readonly #since = new Map<string, string | undefined>();
  #watcher: ScopedWatcher | undefined;
  #synced = false;

  /** `feed`: for an events watcher, what turns its changes into occurrences. */
  constructor(config: WatcherConfig, resolved: ResolvedResource, feed?: Pick<EventFeed, 'decorate'>) {
    this.config = config;
    this.#resolved = resolved;
    this.#feed = feed;
    this.resource = {
      group: resolved.group,
      version: resolved.version,
      resource: resolved.resource,
      kind: resolved.kind,
    };
  }

  /** A change as the router and sinks see it: for an events watcher, with its occurrence. */
  decorate(event: ChangeEvent): ChangeEvent {
    return this.#feed === undefined ? event : this.#feed.decorate(event);
  }

  get synced(): boolean {
    return this.#synced;
  }

  status(): WatcherStatus | undefined {
    return this.#watcher?.status();
  }

  /** Current objects (redacted). */
  objects(): KubeObject[] {
    return this.#objects.list() as KubeObject[];
  }

  /** Current objects of one scope: a namespace, or `*` for all. */
  objectsIn(scope: string): KubeObject[] {
    return scope === '*' ? this.objects() : (this.#objects.byIndex(NAMESPACE_INDEX, scope) as KubeObject[]);
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#objects.get(makeObjectKey(name, namespace)) as KubeObject | undefined;
  }

  /** Where the stretch in scope of the incarnation kept for `object` started, if known. */
  inScopeSince(object: KubeObject): string | undefined {
    return this.#since.get(stretchOf(object));
  }

  /**
   * Watch until `signal` aborts, yielding what happens as one stream of events (see
   * {@link PipelineEvent}). Pulled: the next watch event is read once the consumer took this one.
   * `known`: where the checkpoint says incarnations' stretches in scope started.
   */
  async *events(
    options: PipelineRunOptions,
    resume?: ResumeFrom,
    known: KnownStretches = new Map(),
  ): AsyncGenerator<PipelineEvent> {
    const c = this.config;
    // Outage reports (a start, every 30 s, a heal) come from the watch's tracker as it observes
    // the watch's events or its timer; each is passed on before the next watch event. A start or
    // a heal is reported as the event that shows it is observed, so it comes before that event; a
    // reminder comes with the next retry's failure.
    const outages: OutageReport[] = [];
    const watcher = watchResource({
      transport: options.transport,
      resource: this.#resolved,
      namespaces: c.namespaces,
      labelSelector: c.labelSelector,
      fieldSelector: c.fieldSelector,
      dropManagedFields: c.dropManagedFields,
      // Who made each change (`changedBy` in every sink's record).
      fieldManagers: true,
      // The pipeline keeps each object (redacted) for diffs and tombstones: the watcher need not.
      keepObjects: false,
      // A record's object is written as the bytes it came in, not serialised again (record-json.ts).
      objectJson: keepServerJson,
      clock: options.clock,
      logger: options.logger,
      signal: options.signal,
      ...(options.random === undefined ? {} : { random: options.random }),
      ...(resume === undefined ? {} : { resume }),
      ...(options.shard === undefined ? {} : { shard: options.shard }),
      // One line when an outage starts, one every 30 s, one when it heals (not one per retry).
      outages: {
        ...(options.server === undefined ? {} : { server: options.server }),
        report: (report) => {
          logOutage(options.logger, report);
          outages.push(report);
        },
      },
    });
    this.#watcher = watcher;
    const scopes = new Map<string, ScopeState>();
    for (const scope of watcher.watchers.keys()) {
      scopes.set(scope, {
        relisting: false,
        atResumePoint: resume !== undefined,
        from: resume?.resourceVersion,
        lastEventAt: undefined,
        relistChanges: 0,
      });
    }
    yield { type: 'watching', scopes: [...scopes.keys()] };
    if (resume !== undefined) {
      for (const object of resume.objects) {
        this.#since.set(stretchOf(object), known.get(stretchOf(object)));
        this.#keep(object);
      }
      this.#synced = true;
      yield { type: 'synced', objects: this.objects(), resumed: true };
    }
    const unlisted = new Set(resume === undefined ? scopes.keys() : []);
    const context = { watcher: c.name, resource: this.resource, diffIgnore: options.diffIgnore };
    for await (const { scope, event } of watcher.scoped()) {
      for (let report = outages.shift(); report !== undefined; report = outages.shift())
        yield { type: 'outage', report };
      const state = scopes.get(scope);
      if (state === undefined) continue;
      const now = options.clock.now();
      switch (event.type) {
        case 'listing':
          if (event.relist) {
            state.relisting = true;
            state.relistChanges = 0;
            state.from = watcher.watchers.get(scope)?.status().resourceVersion ?? state.from;
            yield { type: 'relisting', scope };
          }
          break;
        case 'initial': {
          const object = redact(event.object, this.resource.resource);
          const stretch = stretchOf(object);
          this.#since.set(
            stretch,
            known.has(stretch) ? known.get(stretch) : object.metadata?.resourceVersion,
          );
          this.#objects.add(object);
          break;
        }
        case 'synced':
          if (!event.relist) {
            unlisted.delete(scope);
            yield { type: 'scopeListed', scope, resourceVersion: event.resourceVersion };
            if (unlisted.size === 0 && !this.#synced) {
              this.#synced = true;
              yield { type: 'synced', objects: this.objects(), resumed: false };
            }
          } else if (state.relisting && this.#synced) {
            yield {
              type: 'relisted',
              scope,
              relist: {
                resourceVersion: event.resourceVersion,
                from: state.from,
                lastEventAt: state.lastEventAt,
                atResumePoint: state.atResumePoint,
                changes: state.relistChanges,
              },
            };
          }
          state.relisting = false;
          state.atResumePoint = false;
          state.lastEventAt = now;
          break;
        case 'added':
        case 'modified':
        case 'deleted': {
          const change = this.#apply(event, state.relisting ? 'relist' : 'live', {
            ...context,
            time: new Date(now).toISOString(),
          });
          const passOn = this.#synced && !(state.relisting && state.atResumePoint);
          if (state.relisting) state.relistChanges++;
          else {
            state.atResumePoint = false;
            state.lastEventAt = now;
          }
          if (passOn) {
            const decorated = this.decorate(change);
            if (watcherChangeChannel.hasSubscribers)
              watcherChangeChannel.publish({ watcher: c.name, scope, event: decorated });
            yield { type: 'change', event: decorated, scope };
          }
          break;
        }
        case 'bookmark':
          state.atResumePoint = false;
          state.lastEventAt = now;
          if (this.#synced) yield { type: 'progress', scope, resourceVersion: event.resourceVersion };
          break;
        case 'error':
          yield { type: 'error', error: event.error, status: event.status };
          break;
      }
    }
  }

  /** Redact a watcher's change, turn it into a ChangeEvent, and apply it to the store. */
  #apply(
    event: Extract<WatcherEvent, { type: 'added' | 'modified' | 'deleted' }>,
    origin: 'live' | 'relist',
    context: Parameters<typeof buildChangeEvent>[0],
  ): ChangeEvent {
    const stored = this.#objects.get(objectKey(event.object)) as KubeObject | undefined;
    // An object is its uid: the state kept for its name may be another incarnation's (a sharded
    // replica replays a part's changes while a re-created object of the name is kept).
    const mine = stored !== undefined && sameIncarnation(stored.metadata?.uid, event.object.metadata?.uid);
    const uid = event.object.metadata?.uid;
    const own = mine ? stored : uid === undefined ? undefined : this.#older.get(uid);
    const previous =
      own ??
      (event.type === 'modified' && event.previous !== undefined
        ? redact(event.previous, this.resource.resource)
        : undefined);
    const tombstone = event.type === 'deleted' && event.tombstone;
    // An `added` starts a stretch in scope; a modification or a deletion is part of the kept one.
    const stretch = stretchOf(event.object);
    const since = event.type === 'added' ? event.object.metadata?.resourceVersion : this.#since.get(stretch);
    const change = buildChangeEvent(context, {
      type: event.type,
      object: tombstone && own !== undefined ? own : redact(event.object, this.resource.resource),
      previous: event.type === 'modified' ? previous : undefined,
      ends: event.type === 'deleted' ? own : undefined,
      managers: event.type === 'modified' ? event.managers : undefined,
      tombstone,
      origin,
      since,
    });
    if (event.type === 'deleted') this.#since.delete(stretch);
    else this.#since.set(stretch, since);
    if (event.type !== 'deleted') this.#keep(change.object);
    else if (mine) this.#objects.delete(change.object);
    else if (uid !== undefined) this.#older.delete(uid);
    return change;
  }

  /**
   * Keep `object` as its name's state, unless a newer incarnation of the name is kept: a replay of
   * an older one's changes never replaces it.
   */
  #keep(object: KubeObject): void {
    const stored = this.#objects.get(objectKey(object)) as KubeObject | undefined;
    if (stored === undefined || sameIncarnation(stored.metadata?.uid, object.metadata?.uid)) {
      this.#objects.add(object);
      return;
    }
    const newer =
      compareResourceVersions(stored.metadata?.resourceVersion, object.metadata?.resourceVersion) === 1;
    const [kept, aside] = newer ? [stored, object] : [object, stored];
    this.#objects.add(kept);
    const uid = aside.metadata?.uid;
    if (uid !== undefined) this.#older.set(uid, aside);
  }
}

/** Which incarnation's stretch an object is in: its uid (its name when it has none). */
function stretchOf(object: KubeObject): string {
  return object.metadata?.uid ?? objectKey(object);
}

/**
 * An outage's lines in the log: warn while it lasts, info when it heals (the line and its fields
 * say how; what a relist may have missed is the gap notices' to report). `outage` says which line
 * it is, for queries.
 */
function logOutage(log: Logger, report: OutageReport): void {
  const { kind, message, ...fields } = report;
  if (kind === 'healed') log.info({ outage: kind, ...fields }, message);
  else log.warn({ outage: kind, ...fields }, message);
}
