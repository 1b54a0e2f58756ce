/**
 * The values a decoded watch stream yields. An in-stream ERROR is a value, not a thrown error: the
 * watcher must see it to tell an expired resourceVersion (410) from other failures and recover.
 */
import type { Status } from 'kubernetes-types/meta/v1.js';
import type { ApiError } from '../../errors/api-error.js';

import type { KubeObject } from '../../client/kube-object.js';

/** Any Kubernetes object as decoded from JSON; the decoder checks only that it is a JSON object. */
export type { KubeObject };

/** Event types that carry an object. */
export type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/** Every event type the apiserver sends. */
export type WatchEventType = ObjectEventType | 'ERROR';

/** A change to one object; a BOOKMARK carries only `metadata.resourceVersion` (and annotations). */
export interface ObjectWatchEvent<T extends object = KubeObject> {
  type: ObjectEventType;
  object: T;
}

/** An in-stream error: `error` is built from the Status, with `statusCode` = `Status.code`. */
export interface ErrorWatchEvent {
  type: 'ERROR';
  object: Status;
  error: ApiError;
}

/** One decoded watch event. */
export type WatchEvent<T extends object = KubeObject> = ObjectWatchEvent<T> | ErrorWatchEvent;

const objectEventTypes: ReadonlySet<string> = new Set<ObjectEventType>([
  'ADDED',
  'MODIFIED',
  'DELETED',
  'BOOKMARK',
]);

/** True for the four types that carry an object. */
export function isObjectEventType(type: unknown): type is ObjectEventType {
  return typeof type === 'string' && objectEventTypes.has(type);
}
