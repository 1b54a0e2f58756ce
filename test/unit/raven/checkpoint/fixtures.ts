/** Objects and events for the checkpoint tests. */
import type { KubeObject } from '../../../../src/client/kube-object.js';
import {
  eventId,
  type ChangeEvent,
  type ChangeType,
  type ResourceId,
} from '../../../../src/raven/model/change-event.js';

export const PODS: ResourceId = { group: '', version: 'v1', resource: 'pods', kind: 'Pod' };
export const TIME = '2024-05-01T12:00:00.000Z';

export interface PodShape {
  uid?: string;
  rv?: string;
  image?: string;
  managedBy?: string;
}

export function pod(namespace: string | undefined, name: string, shape: PodShape = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      uid: shape.uid ?? `uid-${name}`,
      resourceVersion: shape.rv ?? '1',
      labels: { app: 'web' },
      ...(shape.managedBy === undefined
        ? {}
        : { managedFields: [{ manager: shape.managedBy, operation: 'Update' }] }),
    },
    spec: { containers: [{ name: 'main', image: shape.image ?? 'nginx:1.25' }] },
  } as KubeObject;
}

/**
 * A pod whose serialisations are counted: `JSON.stringify` reads its `spec` once per
 * serialisation, so `reads()` tells how many times it was serialised.
 */
export function countedPod(name: string, rv: string): { object: KubeObject; reads: () => number } {
  const object = pod('d', name, { rv });
  const spec = (object as { spec?: unknown }).spec;
  let reads = 0;
  Object.defineProperty(object, 'spec', {
    enumerable: true,
    get: () => {
      reads++;
      return spec;
    },
  });
  return { object, reads: () => reads };
}

/**
 * A live event for `object`, as the daemon would deliver it; `since`: where its stretch in the
 * watcher's scope started (`inScopeSince`), if the event says.
 */
export function changeEvent(
  type: ChangeType,
  object: KubeObject,
  watcher = 'pods',
  since?: string,
): ChangeEvent {
  const m = object.metadata;
  return {
    id: eventId(watcher, type, object, undefined, since),
    watcher,
    type,
    origin: 'live',
    resource: PODS,
    namespace: m?.namespace,
    name: m?.name ?? '',
    uid: m?.uid,
    resourceVersion: m?.resourceVersion,
    object,
    previous: undefined,
    diff: [],
    tombstone: false,
    time: TIME,
    ...(since === undefined ? {} : { inScopeSince: since }),
  };
}
