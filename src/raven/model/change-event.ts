/**
 * The envelope every sink, translator and handler receives: one change to one object, with a
 * field-level diff for updates. Secret data never appears in it (see `redact.ts`).
 *
 * Delivery is at-least-once per sink, in order per object: a sink may see the same event twice
 * after a crash (use `id` to deduplicate), never an older state after a newer one.
 */
import type { KubeObject } from '../../client/kube-object.js';
import { metadataKey } from '../../client/object-key.js';
import type { ChangedBy } from '../../watch/changed-by.js';
import type { EventOccurrence } from './event-occurrence.js';

export type { ChangedBy };

/** What resource an event is about. */
export interface ResourceId {
  group: string;
  version: string;
  /** Plural, as in paths: `deployments`. */
  resource: string;
  kind: string;
}

/** One changed field: `path` in dotted form with `[i]` for list items, e.g. `spec.replicas`. */
export interface DiffEntry {
  path: string;
  op: 'add' | 'remove' | 'replace';
  old?: unknown;
  new?: unknown;
}

export type ChangeType = 'added' | 'modified' | 'deleted';

/**
 * Where an event came from:
 * - `live`: a watch event;
 * - `relist`: found by a relist after the server lost history (deletions are tombstones);
 * - `restart`: found at start-up by comparing the cluster with the checkpoint (changed while down);
 * - `resync`: found when a sink that fell too far behind is brought up to date from its checkpoint.
 */
export type ChangeOrigin = 'live' | 'relist' | 'restart' | 'resync';

export interface ChangeEvent {
  /** Stable identity for deduplication: watcher, uid, resourceVersion, and `deleted` for a deletion (see {@link eventId}). */
  id: string;
  /** The name of the watcher in the config. */
  watcher: string;
  type: ChangeType;
  origin: ChangeOrigin;
  resource: ResourceId;
  namespace: string | undefined;
  name: string;
  uid: string | undefined;
  resourceVersion: string | undefined;
  /** The object now (for `deleted`, its last known state), redacted. */
  object: KubeObject;
  /** For `modified`: the state last delivered, redacted. */
  previous: KubeObject | undefined;
  /** For `modified`: what changed, noise paths left out. Empty otherwise. */
  diff: DiffEntry[];
  /**
   * For a `modified` event seen live or by a relist: the field managers whose managedFields entry
   * changed with it, each with the `diff` paths attributed to it (docs/sinks.md, "Who made the
   * change"). Absent when unknown (the previous state's entries were not seen, as for the first
   * change after a restart) and for other events.
   */
  changedBy?: ChangedBy[];
  /** For `deleted`: the deletion was inferred (relist or restart), the final state is unknown. */
  tombstone: boolean;
  /** When Raven saw the change (ISO 8601). */
  time: string;
  /** From an events watcher: the Kubernetes Event read as an occurrence (`docs/events.md`). */
  occurrence?: EventOccurrence;
  /**
   * The resourceVersion at which this incarnation entered the watcher's scope (its `added`: its
   * creation, or its move into a label or field selector): the stretch in scope the event is part
   * of, and what names a deletion ({@link eventId}). Kept with each checkpoint entry. Absent when
   * unknown: a checkpoint entry written by an older Raven (SQLite schema before version 3,
   * PostgreSQL before 2) kept none.
   */
  inScopeSince?: string;
}

/** `namespace/name` or `name`: the per-object ordering key. */
export function eventObjectKey(event: Pick<ChangeEvent, 'namespace' | 'name'>): string {
  return metadataKey(event);
}

/**
 * The deduplication id of an event, the same on every copy of one change. A change that leaves the
 * object in the watcher's scope (`added` or `modified`) is named by the state it makes:
 * `watcher:uid:resourceVersion`, without its type, for the type is a judgement of what came
 * before, and two copies of one change may judge differently: a live `modified` the receiver got
 * and, after a crash lost its record from the checkpoint, the same state found by comparing a
 * list with the checkpoint as `added`. A deletion is named by the stretch in scope it ends:
 * `watcher:uid:since:deleted`,
 * `since` being the resourceVersion at which the incarnation entered the watcher's scope (its
 * `added`; `inScopeSince`). A deletion found by comparing a list with a checkpoint (a tombstone)
 * knows the stretch from the checkpoint entry, whatever state of the stretch the entry holds: so a
 * live deletion the receiver got but Raven never saw confirmed (its answer lost, then a crash and
 * an expired resume point) is delivered again as a tombstone under the same id, even when the
 * record of the last modifications before it was lost too. An incarnation that leaves a selector's
 * scope and comes back is in a new stretch, each ending with a deletion of its own id.
 *
 * When `since` is unknown (a checkpoint entry written by an older Raven) a deletion is named as it
 * was before, by the last state it ends (`ends`: the state kept before a live deletion, or the
 * tombstone's checkpointed state), and a live deletion with nothing kept by its own resourceVersion.
 */
export function eventId(
  watcher: string,
  type: ChangeType,
  object: KubeObject,
  ends?: KubeObject,
  since?: string,
): string {
  const m = object.metadata;
  const uid = m?.uid ?? `${m?.namespace ?? ''}/${m?.name ?? ''}`;
  if (type !== 'deleted') return `${watcher}:${uid}:${m?.resourceVersion ?? ''}`;
  return `${watcher}:${uid}:${since ?? ends?.metadata?.resourceVersion ?? m?.resourceVersion ?? ''}:deleted`;
}
