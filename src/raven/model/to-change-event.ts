/**
 * Turn what a watcher reports into the {@link ChangeEvent} envelope, with the diff for
 * modifications. {@link toChangeEvent} redacts what it is given; {@link buildChangeEvent} takes
 * objects already redacted: the daemon's pipeline redacts each object once, as it enters its store
 * (`watcher-pipeline.ts`), and builds its events from the store's objects with it.
 */
import type { KubeObject } from '../../client/kube-object.js';
import {
  eventId,
  type ChangeEvent,
  type ChangeOrigin,
  type ChangeType,
  type DiffEntry,
  type ResourceId,
} from './change-event.js';
import { changedBy } from '../../watch/changed-by.js';
import type { FieldManagerChange } from '../../watch/field-managers.js';
import { diffObjects } from './diff.js';
import { redact } from './redact.js';

export interface ChangeContext {
  watcher: string;
  resource: ResourceId;
  /** Extra paths to leave out of diffs. */
  diffIgnore?: readonly string[];
  /** ISO time of the change (from the injected clock). */
  time: string;
}

export interface Change {
  type: ChangeType;
  object: KubeObject;
  previous?: KubeObject | undefined;
  /** For a live `deleted`: the state it ends (the one kept before it), which names it (`eventId`). */
  ends?: KubeObject | undefined;
  /** The resourceVersion at which the incarnation entered the watcher's scope, if known (`eventId`). */
  since?: string | undefined;
  tombstone?: boolean;
  origin: ChangeOrigin;
  /** For `modified`: the managedFields entries that changed (the watcher's `managers`), if known. */
  managers?: readonly FieldManagerChange[] | undefined;
}

/** A change event from raw objects: `object` and `previous` are redacted first. */
export function toChangeEvent(context: ChangeContext, change: Change): ChangeEvent {
  const resource = context.resource.resource;
  return buildChangeEvent(context, {
    ...change,
    object: redact(change.object, resource),
    previous: change.previous === undefined ? undefined : redact(change.previous, resource),
  });
}

/** A change event from objects already redacted (the store's). */
export function buildChangeEvent(context: ChangeContext, change: Change): ChangeEvent {
  const { object, previous, managers } = change;
  const meta = object.metadata;
  const diff =
    change.type === 'modified' && previous !== undefined
      ? diffObjects(previous, object, {
          ...(context.diffIgnore === undefined ? {} : { ignore: context.diffIgnore }),
        })
      : [];
  return {
    id: eventId(context.watcher, change.type, object, change.ends, change.since),
    watcher: context.watcher,
    type: change.type,
    origin: change.origin,
    resource: context.resource,
    namespace: meta?.namespace,
    name: meta?.name ?? '',
    uid: meta?.uid,
    resourceVersion: meta?.resourceVersion,
    object,
    previous,
    diff,
    ...(change.type === 'modified' && managers !== undefined
      ? { changedBy: changedBy(managers, paths(diff), object) }
      : {}),
    tombstone: change.tombstone ?? false,
    time: context.time,
    ...(change.since === undefined ? {} : { inScopeSince: change.since }),
  };
}

function paths(diff: readonly DiffEntry[]): string[] {
  return diff.map((d) => d.path);
}
