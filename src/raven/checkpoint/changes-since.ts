/**
 * What changed while a sink was not listening: compare what it last confirmed (its checkpoint)
 * with what the cluster holds now, and produce the events that bring it up to date.
 *
 * Per key, in key order:
 * - in the cluster, not in the checkpoint: `added`;
 * - same key, another uid (deleted and recreated while down): `deleted` (a tombstone carrying the
 *   checkpointed state), then `added`;
 * - an object is its uid: a checkpoint may hold two incarnations of one name (a sharded replica's
 *   parts each keep their own), and each is compared on its own: the one the cluster holds now as
 *   above, every other one `deleted`;
 * - same key and uid, another resourceVersion: `modified`, with `previous` the checkpointed state
 *   and the diff between the two; when the diff is empty (only noise paths such as managedFields
 *   changed) nothing is delivered, and the event goes to `silentUpdates` instead: the daemon
 *   records those with `recordDelivered` without delivering them, so the next comparison starts
 *   from the new resourceVersion;
 * - same resourceVersion: nothing;
 * - in the checkpoint, not in the cluster: `deleted`, a tombstone carrying the checkpointed state.
 *
 * Every event says where its object's stretch in the watcher's scope started (`inScopeSince`): a
 * tombstone, the checkpoint entry's, so its id is the one the live deletion of that stretch had
 * (`eventId`), whichever state of the stretch the entry holds; an entry without one (written by an
 * older Raven) names it by the checkpointed state, as before. For the objects listed now, the
 * watcher's own record when given (`inScopeSince`, the pipeline's); otherwise an `added` starts a
 * stretch at the listed object's resourceVersion and a `modified` keeps the entry's.
 *
 * `current` must be redacted the way delivered objects are, or secrets would reach sinks and
 * every redacted field would show up in diffs.
 */
import type { KubeObject } from '../../client/kube-object.js';
import { objectKey, type ObjectKey } from '../../client/object-key.js';
import { eventId, type ChangeEvent, type ChangeType, type ResourceId } from '../model/change-event.js';
import { diffObjects } from '../model/diff.js';
import { compareKeys, type CheckpointEntry, type InScopeSince } from './checkpoint-store.js';

export interface ChangesSinceOptions {
  watcher: string;
  resource: ResourceId;
  /** `restart` at start-up; `resync` for a sink brought up to date from its checkpoint. */
  origin: 'restart' | 'resync';
  /** Paths left out of diffs, in addition to the defaults (see `diff.ts`). */
  diffIgnore?: readonly string[];
  /** The time stamped on the events (ISO 8601). */
  now: () => string;
  /** Where the watcher says a listed object's stretch in scope started (the pipeline's record). */
  inScopeSince?: InScopeSince;
}

export interface CheckpointChanges {
  /** Events to deliver, in key order (for a recreated object: its `deleted` before its `added`). */
  events: ChangeEvent[];
  /** Noise-only `modified` events (empty diff): record, do not deliver. */
  silentUpdates: ChangeEvent[];
}

/**
 * @example
 * const { events, silentUpdates } = changesSince(store.entries('deployments', 'audit'), listed, {
 *   watcher: 'deployments', resource, origin: 'restart', now: () => new Date().toISOString(),
 * });
 */
export function changesSince(
  checkpoint: Iterable<CheckpointEntry>,
  current: Iterable<KubeObject>,
  options: ChangesSinceOptions,
): CheckpointChanges {
  const before = new Map<ObjectKey, CheckpointEntry[]>();
  for (const entry of checkpoint) {
    const same = before.get(entry.key);
    if (same === undefined) before.set(entry.key, [entry]);
    else same.push(entry);
  }
  const after = new Map<ObjectKey, KubeObject>();
  for (const object of current) after.set(objectKey(object), object);

  const event = (
    type: ChangeType,
    object: KubeObject,
    since: string | undefined,
    extra: Partial<Pick<ChangeEvent, 'previous' | 'diff' | 'tombstone'>> = {},
  ): ChangeEvent => ({
    id: eventId(options.watcher, type, object, undefined, since),
    watcher: options.watcher,
    type,
    origin: options.origin,
    resource: options.resource,
    namespace: object.metadata?.namespace,
    name: object.metadata?.name ?? '',
    uid: object.metadata?.uid,
    resourceVersion: object.metadata?.resourceVersion,
    object,
    previous: extra.previous,
    diff: extra.diff ?? [],
    tombstone: extra.tombstone ?? false,
    time: options.now(),
    ...(since === undefined ? {} : { inScopeSince: since }),
  });
  const gone = (entry: CheckpointEntry): ChangeEvent =>
    event('deleted', entry.object, entry.since, { tombstone: true });
  const listed = (now: KubeObject, was: CheckpointEntry | undefined): string | undefined =>
    options.inScopeSince === undefined
      ? was === undefined
        ? now.metadata?.resourceVersion
        : was.since
      : options.inScopeSince(now);

  const changes: CheckpointChanges = { events: [], silentUpdates: [] };
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort(compareKeys);
  for (const key of keys) {
    const incarnations = before.get(key) ?? [];
    const now = after.get(key);
    const uid = now?.metadata?.uid;
    // Of several incarnations, the one the cluster holds is compared; the others are gone.
    const was =
      incarnations.length > 1
        ? (incarnations.find((entry) => entry.uid === uid) ?? incarnations[0])
        : incarnations[0];
    for (const other of incarnations) if (other !== was) changes.events.push(gone(other));
    if (now === undefined) {
      if (was !== undefined) changes.events.push(gone(was));
      continue;
    }
    if (was === undefined) {
      changes.events.push(event('added', now, listed(now, undefined)));
      continue;
    }
    if (was.uid !== now.metadata?.uid) {
      changes.events.push(gone(was), event('added', now, listed(now, undefined)));
      continue;
    }
    if (was.resourceVersion === now.metadata?.resourceVersion) continue;
    const diff = diffObjects(
      was.object,
      now,
      options.diffIgnore === undefined ? {} : { ignore: options.diffIgnore },
    );
    const modified = event('modified', now, listed(now, was), { previous: was.object, diff });
    (diff.length === 0 ? changes.silentUpdates : changes.events).push(modified);
  }
  return changes;
}
