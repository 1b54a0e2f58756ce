/**
 * What the web view shows, as a feed: every change the watchers see, with its field diff, numbered
 * in order, and each watcher's health. A page that connects gets the objects that exist now (one
 * line each, never the whole object), then the changes as they happen; a page that reconnects
 * with the last number it saw gets what it missed, as long as it is still among the last
 * `keep` changes (otherwise it starts over from the objects that exist, oldest line first, so a
 * page opened late gets them in the order they happened).
 *
 * Each modification says who made it (`changedBy`, from `metadata.managedFields`, as in the CLI
 * and the sinks). A watcher that reports its outages (`watchResource`'s `outages`) is followed
 * through those reports: one notice when an outage starts, one every 30 s, one when it heals,
 * never one per retry.
 *
 * Secret values never reach the feed: objects are redacted first (`redact.ts`), so a changed key
 * shows as changed without its value. Only a summary of each object is kept, not the object.
 */
import type { KubeObject } from '../client/kube-object.js';
import type { ApiResource } from '../client/api-resource.js';
import { diffObjects, formatDiffEntries } from '../raven/model/diff.js';
import { redact } from '../raven/model/redact.js';
import type { ScopedWatcher } from '../watch/watch-resource.js';
import type { OutageReport } from '../watch/outage-tracker.js';
import { changedBy as attribute } from '../watch/changed-by.js';
import type { FieldManagerChange } from '../watch/field-managers.js';
import type { ChangedBy } from '../raven/model/change-event.js';
import { managerText } from '../raven/model/changed-by-text.js';
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
  /** Who made a modification: each field manager whose managedFields entry changed, and its paths. */
  changedBy?: ChangedBy[];
  /** The same as lines, one per manager: `by kubectl (Update) at 10:42:07: spec.replicas`. */
  by?: string[];
}

/** A failure a watcher is recovering from, for the page's notice line. */
export interface UiNotice {
  at: number;
  watcher: string;
  message: string;
  /** For an outage's notices: its start, a reminder every 30 s while it lasts, its end. */
  outage?: OutageReport['kind'];
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
  /**
   * One object (`EXISTING`) or change; objects may be redacted already. `changedBy`: who made a
   * modification, when the caller knows (the daemon's change events carry it).
   */
  publish(type: UiChange['type'], object: KubeObject, previous?: KubeObject, changedBy?: ChangedBy[]): void;
  /** A failure the watcher is recovering from. */
  notice(message: string): void;
  /** One of an outage's few reports (`outage-tracker.ts`), shown as a notice. */
  outage(report: OutageReport): void;
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

  /**
   * Read `watcher`'s events into the feed until it ends. A modification says who made it when the
   * watcher was started with `fieldManagers: true`. Each error is a notice, unless the watcher
   * reports its outages: then give their reports to {@link UiFeed.outage} instead.
   */
  async follow(name: string, resource: ApiResource, watcher: ScopedWatcher): Promise<void> {
    const followed = this.#add(name, resource, () => watcher.status());
    for await (const event of watcher) {
      switch (event.type) {
        case 'initial':
          this.#publish(followed, 'EXISTING', event.object);
          break;
        case 'added':
          this.#publish(followed, 'ADDED', event.object);
          break;
        case 'modified':
          this.#publish(followed, 'MODIFIED', event.object, event.previous, event.managers);
          break;
        case 'deleted':
          this.#publish(followed, event.tombstone ? 'GONE' : 'DELETED', event.object);
          break;
        case 'error':
          if (!watcher.reportsOutages) this.#notice(name, event.error.message);
          break;
        default:
          break;
      }
    }
  }

  /** Add a watcher whose events the caller reads; `status` is asked for its health. */
  source(name: string, resource: ApiResource, status: () => WatcherStatus): UiSource {
    const followed = this.#add(name, resource, status);
    return {
      publish: (type, object, previous, changedBy) =>
        this.#publish(followed, type, object, previous, changedBy),
      notice: (message) => this.#notice(name, message),
      outage: (report) => this.outage(name, report),
    };
  }

  /** One of `watcher`'s outage reports (`watchResource`'s `outages.report`), as a notice. */
  outage(watcher: string, report: OutageReport): void {
    this.#notice(watcher, report.message, report.kind);
  }

  #add(name: string, resource: ApiResource, status: () => WatcherStatus): Followed {
    const followed: Followed = { name, resource, status, lagSeconds: undefined };
    this.#followed.push(followed);
    return followed;
  }

  #notice(watcher: string, message: string, outage?: OutageReport['kind']): void {
    const data: UiNotice = { at: this.#clock.now(), watcher, message, ...(outage ? { outage } : {}) };
    this.#emit({ event: 'notice', data });
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
      // In the order they happened: an object's line is its latest change, not its first sight.
      const current = [...this.#current.values()].sort((a, b) => a.seq - b.seq);
      for (const change of current) listener({ event: 'change', data: change });
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #publish(
    followed: Followed,
    type: UiChange['type'],
    raw: KubeObject,
    rawPrevious?: KubeObject,
    who?: ChangedBy[] | FieldManagerChange[],
  ): void {
    const now = this.#clock.now();
    const object = redact(raw, followed.resource.resource);
    const previous = rawPrevious === undefined ? undefined : redact(rawPrevious, followed.resource.resource);
    const changedAt = changeTime(type, raw);
    if (changedAt !== undefined) followed.lagSeconds = Math.max(0, Math.round((now - changedAt) / 1000));
    const uid = object.metadata?.uid ?? `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
    const diff = previous === undefined ? [] : diffObjects(previous, object);
    const changedBy = whoChanged(who, diff, object);
    const change: UiChange = {
      seq: ++this.#seq,
      at: now,
      type,
      watcher: followed.name,
      kind: object.kind ?? followed.resource.kind,
      namespace: object.metadata?.namespace ?? '',
      name: object.metadata?.name ?? '',
      uid,
      diff: formatDiffEntries(diff),
      ...(changedBy === undefined
        ? {}
        : {
            changedBy,
            by: changedBy
              .filter((c) => c.paths.length > 0)
              .map((c) => `by ${managerText(c)}: ${c.paths.join(', ')}`),
          }),
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

/** Who made a change: given, or laid from the changed managedFields entries over the diff's paths. */
function whoChanged(
  who: ChangedBy[] | FieldManagerChange[] | undefined,
  diff: readonly { path: string }[],
  object: KubeObject,
): ChangedBy[] | undefined {
  if (who === undefined || diff.length === 0) return undefined;
  if (who.every((w): w is ChangedBy => 'paths' in w)) return who;
  return attribute(
    who,
    diff.map((d) => d.path),
    object,
  );
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
