/**
 * Where a watcher resumes after a restart, from what the checkpoint holds: the confirmed
 * resourceVersion (every sink confirmed every change up to it), and the objects to tell the watch
 * it knows at that point.
 *
 * The objects matter because a watch drops what it believes it has seen: a change at the very
 * resourceVersion it knows for an object, and a deletion of an object it does not know. Sinks may
 * have confirmed different states of one object (one is ahead of another), so per object the watch
 * is told the oldest state any sink confirmed, and only objects every sink has heard of (a state
 * or a deletion): an object some sink never heard of was created after the resume point, and the
 * replay brings its creation. Every replayed change some sink lacks is then passed on; a sink that
 * has it skips it (`already-confirmed.ts`).
 *
 * An object is its uid: "per object" means per incarnation. One sink may have confirmed a name's
 * deletion while another confirmed its re-creation already, and a sharded replica's parts keep a
 * name's incarnations apart; keyed by the name alone, the watch would be told of a re-created
 * object before its creation is replayed, and drop that creation as seen.
 *
 * A confirmed resourceVersion is used only for the scope it was recorded for: a watcher whose
 * resource, namespaces or selectors changed lists again, since a replay would not bring the
 * objects that entered or left its scope.
 */
import type { KubeObject } from '../../client/kube-object.js';
import { objectKey, parseObjectKey, type ObjectKey } from '../../client/object-key.js';
import type { CheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { KnownStretches } from '../model/pipeline-event.js';
import type { ResourceId } from '../model/change-event.js';
import type { WatcherConfig } from '../config/watcher-schema.js';
import { compareResourceVersions } from '../model/resource-version.js';

/**
 * The scope a confirmed resourceVersion is valid for: the resource and what selects its objects
 * (and, for sharded replicas, how the hash space is cut).
 *
 * @example
 * watchScope(config, { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' });
 * // => '{"resource":"apps/v1/deployments","namespaces":["shop"],...}'
 */
export function watchScope(
  config: Pick<WatcherConfig, 'namespaces' | 'labelSelector' | 'fieldSelector'>,
  resource: ResourceId,
  sharding?: { field: string; buckets: number },
): string {
  return JSON.stringify({
    resource: `${resource.group}/${resource.version}/${resource.resource}`,
    namespaces: config.namespaces,
    labelSelector: config.labelSelector ?? '',
    fieldSelector: config.fieldSelector ?? '',
    // Sharded, a part's resume point holds only for the same cut of the hash space.
    ...(sharding === undefined ? {} : { shard: `${sharding.field}/${sharding.buckets}` }),
  });
}

export interface ResumeObjects {
  /** Per object, the oldest state a sink confirmed; only objects every sink has heard of. */
  objects: KubeObject[];
  /**
   * The newest resourceVersion any sink confirmed: a replayed change above it is one no sink can
   * have, so only changes up to it need comparing with the checkpoint. Undefined when nothing was
   * confirmed, or the versions cannot be ordered (then every change is compared).
   */
  replayedUpTo: string | undefined;
  /** False when the resourceVersions cannot be ordered: every change must then be compared. */
  ordered: boolean;
}

/**
 * The objects to resume `watcher` with, from the checkpoints of `sinks` (each has one). `partOf`
 * (sharded) names the part an object's records are kept in: a part's records are in one order, the
 * order of its replay, and records of two parts are not.
 */
export function resumeObjects(
  checkpoints: CheckpointStore,
  watcher: string,
  sinks: readonly string[],
  partOf: (uid: string | undefined, namespace: string | undefined) => number = () => 0,
): ResumeObjects {
  const oldest = new Map<string, KubeObject>();
  /** Per name, what each sink recorded of its incarnations (one per part). */
  const records = new Map<
    ObjectKey,
    { sink: number; uid: string | undefined; rv: string | undefined; part: number }[]
  >();
  const versions: { newest: string | undefined; ordered: boolean } = { newest: undefined, ordered: true };
  const see = (resourceVersion: string | undefined): void => {
    if (resourceVersion === undefined) return;
    const order = compareResourceVersions(resourceVersion, versions.newest ?? resourceVersion);
    if (order === undefined) versions.ordered = false;
    else if (versions.newest === undefined || order > 0) versions.newest = resourceVersion;
  };
  const record = (sink: number, key: ObjectKey, uid: string | undefined, rv: string | undefined): void => {
    see(rv);
    const part = partOf(uid, parseObjectKey(key).namespace);
    const list = records.get(key);
    if (list === undefined) records.set(key, [{ sink, uid, rv, part }]);
    else list.push({ sink, uid, rv, part });
  };
  sinks.forEach((sink, index) => {
    for (const entry of checkpoints.entries(watcher, sink)) {
      record(index, entry.key, entry.uid, entry.resourceVersion);
      const id = incarnationId(entry.key, entry.uid);
      const known = oldest.get(id);
      const order = compareResourceVersions(entry.resourceVersion, known?.metadata?.resourceVersion);
      if (known === undefined || order === -1) oldest.set(id, entry.object);
    }
    for (const tombstone of checkpoints.tombstones(watcher, sink))
      record(index, tombstone.key, tombstone.uid, tombstone.resourceVersion);
  });
  // A sink heard of an incarnation when it recorded it, or a later incarnation of its name in the
  // same part (a part's changes reach a sink in order: the earlier one's deletion came first).
  const heardByAll = (object: KubeObject): boolean => {
    const key = objectKey(object);
    const uid = object.metadata?.uid;
    const rv = object.metadata?.resourceVersion;
    const part = partOf(uid, object.metadata?.namespace);
    const heard = new Set<number>();
    for (const r of records.get(key) ?? [])
      if (r.uid === uid || (r.part === part && compareResourceVersions(r.rv, rv) === 1)) heard.add(r.sink);
    return heard.size === sinks.length;
  };
  const objects = [...oldest.values()].filter(heardByAll);
  return {
    objects,
    replayedUpTo: versions.ordered ? versions.newest : undefined,
    ordered: versions.ordered,
  };
}

/**
 * Where `sinks`' checkpoints say each incarnation's stretch in the watcher's scope started
 * (`CheckpointEntry.since`), by uid (by key for an object without one), for the pipeline to name
 * deletions as tombstones made from these entries would be named. Sinks that disagree (one fell
 * behind while the object left the scope and came back) give the newest stretch, the one the
 * object is in now; an entry without one (an older Raven's) counts only when no sink knows it.
 * A sharded replica's store gives the entries of every part it owns, so a replica that takes a part
 * over names its deletions as its last owner did.
 */
export function knownStretches(
  checkpoints: CheckpointStore,
  watcher: string,
  sinks: readonly string[],
): KnownStretches {
  const known = new Map<string, string | undefined>();
  for (const sink of sinks)
    for (const entry of checkpoints.entries(watcher, sink)) {
      const id = entry.uid ?? entry.key;
      const since = known.get(id);
      if (!known.has(id) || since === undefined || compareResourceVersions(entry.since, since) === 1)
        known.set(id, entry.since ?? since);
    }
  return known;
}

/** One incarnation of the object at `key`. */
function incarnationId(key: ObjectKey, uid: string | undefined): string {
  return `${key}\u0000${uid ?? ''}`;
}
