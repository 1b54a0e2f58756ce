/**
 * What the web view shows, as a feed: every change the watchers see, with its field diff, numbered
 * in order, and each watcher's health. A page that connects gets the objects that exist now (one
 * line each, never the whole object), then the changes as they happen; a page that reconnects
 * with the last number it saw gets what it missed, as long as it is still among the last
 * `keep` changes (otherwise it starts over from the objects that exist).
 *
 * Secret values never reach the feed: objects are redacted first (`redact.ts`), so a changed key
 * shows as changed without its value. Only a summary of each object is kept, not the object.
 */
import type { KubeObject } from '../client/kube-object.js';
import type { ApiResource } from '../client/api-resource.js';
import { diffObjects, formatDiffEntries } from '../raven/model/diff.js';
import { redact } from '../raven/model/redact.js';
import type { ScopedWatcher } from '../watch/watch-resource.js';
import type { WatcherStatus } from '../watch/watcher-events.js';
import type { Clock } from '../util/clock.js';

/** One change as the page receives it. */
export interface UiChange {
  /** Position in the feed, from 1; the SSE event id. */
  seq: number;
  /** Milliseconds since the epoch, when Raven received it. */
  at: number;
  type: 'EXISTING' | 'ADDED' | 'MODIFIED' | 'DELETED' | 'GONE';
  /** The watcher's name (the resource as given on the command line, or a config's watcher name). */
  watcher: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  /** The changed fields, one group of lines per field (`spec.replicas: 2 → 3`, or a line diff). */
  diff: string[][];
}

/** A failure a watcher is recovering from, for the page's notice line. */
export interface UiNotice {
  at: number;
  watcher: string;
  message: string;
}

/** One watcher's health as the page shows it. */
export interface UiWatcherHealth {
  watcher: string;
  resource: string;
  phase: WatcherStatus['phase'];
  synced: boolean;
  secondsSinceLastEvent: number;
  reconnects: number;
  relists: number;
  objects: number;
  /**
   * Seconds between the latest change's own time (creationTimestamp for an addition,
   * deletionTimestamp for a deletion, the newest managedFields time for a modification) and its
   * arrival here; undefined until a change carried a time. Kubernetes times have 1 s precision.
   */
  lagSeconds: number | undefined;
  lastError: string | undefined;
}

export type UiMessage =
  | { event: 'change'; data: UiChange }
  | { event: 'notice'; data: UiNotice }
  | { event: 'reset'; data: { seq: number } };

type Listener = (message: UiMessage) => void;

interface Followed {
  name: string;
  resource: ApiResource;
  status: () => WatcherStatus;
  lagSeconds: number | undefined;
}

/** One watcher's way into the feed, for a program that reads the watcher itself (the daemon). */
export interface UiSource {
  /** One object (`EXISTING`) or change; objects may be redacted already. */
  publish(type: UiChange['type'], object: KubeObject, previous?: KubeObject): void;
  /** A failure the watcher is recovering from. */
  notice(message: string): void;
}

export interface UiFeedOptions {
  clock: Clock;
  /** Changes kept for pages that reconnect; default 2 000. */
  keep?: number;
}

/**
 * @example
 * const feed = new UiFeed({ clock: systemClock });
 * void feed.follow('pods', podsResource, watchResource({ transport: client, resource: podsResource }));
 * feed.subscribe(0, (message) => console.log(message.event));
 */
export class UiFeed {
  readonly #clock: Clock;
  readonly #keep: number;
  readonly #followed: Followed[] = [];
  /** The objects that exist now, by uid: their latest line (an `EXISTING` or the last change). */
  readonly #current = new Map<string, UiChange>();
  #recent: UiChange[] = [];
  #seq = 0;
  readonly #listeners = new Set<Listener>();

  constructor(options: UiFeedOptions) {
    this.#clock = options.clock;
    this.#keep = options.keep ?? 2_000;
  }

  /** The number of the latest change. */
  get seq(): number {
    return this.#seq;
  }

  /** Read `watcher`'s events into the feed until it ends. */
  async follow(name: string, resource: ApiResource, watcher: ScopedWatcher): Promise<void> {
    const source = this.source(name, resource, () => watcher.status());
    for await (const event of watcher) {
      switch (event.type) {
        case 'initial':
          source.publish('EXISTING', event.object);
          break;
        case 'added':
          source.publish('ADDED', event.object);
          break;
        case 'modified':
          source.publish('MODIFIED', event.object, event.previous);
          break;
        case 'deleted':
          source.publish(event.tombstone ? 'GONE' : 'DELETED', event.object);
          break;
        case 'error':
          source.notice(event.error.message);
          break;
        default:
          break;
      }
    }
  }

  /** Add a watcher whose events the caller reads; `status` is asked for its health. */
  source(name: string, resource: ApiResource, status: () => WatcherStatus): UiSource {
    const followed: Followed = { name, resource, status, lagSeconds: undefined };
    this.#followed.push(followed);
    return {
      publish: (type, object, previous) => this.#publish(followed, type, object, previous),
      notice: (message) =>
        this.#emit({ event: 'notice', data: { at: this.#clock.now(), watcher: name, message } }),
    };
  }

  /** Every followed watcher's health. */
  health(): UiWatcherHealth[] {
    return this.#followed.map(({ name, resource, status: statusOf, lagSeconds }) => {
      const status = statusOf();
      return {
        watcher: name,
        resource: resource.group === '' ? resource.resource : `${resource.resource}.${resource.group}`,
        phase: status.phase,
        synced: status.synced,
        secondsSinceLastEvent: status.secondsSinceLastEvent,
        reconnects: status.reconnects,
        relists: status.relists,
        objects: status.objects,
        lagSeconds,
        lastError: status.lastError?.message,
      };
    });
  }

  /**
   * Send `listener` what a page that saw changes up to `after` needs: the missed changes when they
   * are all still kept, otherwise a `reset` and the objects that exist; then every new message.
   * Returns the function that unsubscribes.
   */
  subscribe(after: number, listener: Listener): () => void {
    const oldest = this.#recent[0]?.seq ?? this.#seq + 1;
    if (after > 0 && after <= this.#seq && after >= oldest - 1) {
      for (const change of this.#recent) if (change.seq > after) listener({ event: 'change', data: change });
    } else {
      listener({ event: 'reset', data: { seq: this.#seq } });
      for (const change of this.#current.values()) listener({ event: 'change', data: change });
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #publish(
    followed: Followed,
    type: UiChange['type'],
    raw: KubeObject,
    rawPrevious: KubeObject | undefined,
  ): void {
    const now = this.#clock.now();
    const object = redact(raw, followed.resource.resource);
    const previous = rawPrevious === undefined ? undefined : redact(rawPrevious, followed.resource.resource);
    const changedAt = changeTime(type, raw);
    if (changedAt !== undefined) followed.lagSeconds = Math.max(0, Math.round((now - changedAt) / 1000));
    const uid = object.metadata?.uid ?? `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
    const change: UiChange = {
      seq: ++this.#seq,
      at: now,
      type,
      watcher: followed.name,
      kind: object.kind ?? followed.resource.kind,
      namespace: object.metadata?.namespace ?? '',
      name: object.metadata?.name ?? '',
      uid,
      diff: previous === undefined ? [] : formatDiffEntries(diffObjects(previous, object)),
    };
    if (type === 'DELETED' || type === 'GONE') this.#current.delete(uid);
    else this.#current.set(uid, change);
    this.#recent.push(change);
    if (this.#recent.length > this.#keep) this.#recent = this.#recent.slice(-this.#keep);
    this.#emit({ event: 'change', data: change });
  }

  #emit(message: UiMessage): void {
    for (const listener of this.#listeners) listener(message);
  }
}

/** When the change itself happened, as far as the object says (1 s precision). */
function changeTime(type: UiChange['type'], object: KubeObject): number | undefined {
  const meta = object.metadata;
  let text: string | undefined;
  if (type === 'ADDED') text = meta?.creationTimestamp;
  else if (type === 'DELETED') text = meta?.deletionTimestamp;
  else if (type === 'MODIFIED')
    text = meta?.managedFields
      ?.map((f) => f.time)
      .filter((t) => t !== undefined)
      .sort()
      .at(-1);
  const ms = text === undefined ? NaN : Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
