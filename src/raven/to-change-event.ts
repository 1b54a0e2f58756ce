/**
 * Turn what a watcher or informer reports into the {@link ChangeEvent} envelope: redacted, with
 * the diff for modifications.
 */
import type { KubeObject } from '../client/kube-object.js';
import {
  eventId,
  type ChangeEvent,
  type ChangeOrigin,
  type ChangeType,
  type ResourceId,
} from './change-event.js';
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

export function toChangeEvent(
  context: ChangeContext,
  change: {
    type: ChangeType;
    object: KubeObject;
    previous?: KubeObject | undefined;
    tombstone?: boolean;
    origin: ChangeOrigin;
  },
): ChangeEvent {
  const object = redact(change.object, context.resource.resource);
  const previous =
    change.previous === undefined ? undefined : redact(change.previous, context.resource.resource);
  const meta = object.metadata;
  return {
    id: eventId(context.watcher, change.type, object),
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
    diff:
      change.type === 'modified' && previous !== undefined
        ? diffObjects(previous, object, { ignore: context.diffIgnore })
        : [],
    tombstone: change.tombstone ?? false,
    time: context.time,
  };
}
