/**
 * Change events for sink and delivery tests.
 */
import type { KubeObject } from '../../../../src/client/kube-object.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';

/** A Deployment scaled from 2 to 3 replicas, with overrides. */
export function sampleEvent(overrides: Partial<ChangeEvent> = {}): ChangeEvent {
  const name = overrides.name ?? 'web';
  const namespace = 'namespace' in overrides ? overrides.namespace : 'default';
  return {
    id: `deploys:uid-${name}:42:modified`,
    watcher: 'deploys',
    type: 'modified',
    origin: 'live',
    resource: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' },
    namespace,
    name,
    uid: `uid-${name}`,
    resourceVersion: '42',
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace,
        uid: `uid-${name}`,
        resourceVersion: '42',
        labels: { app: name, 'app.kubernetes.io/name': 'shop' },
      },
      spec: { replicas: 3, template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
    } as KubeObject,
    previous: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '41' },
      spec: { replicas: 2 },
    } as KubeObject,
    diff: [{ path: 'spec.replicas', op: 'replace', old: 2, new: 3 }],
    tombstone: false,
    time: '2024-05-01T12:00:00.000Z',
    ...overrides,
  };
}

/** `n` diff entries: `data.k0: "a" → "b"`, ... */
export function manyChanges(n: number): ChangeEvent['diff'] {
  return Array.from({ length: n }, (_, i) => ({
    path: `data.k${i}`,
    op: 'replace' as const,
    old: 'a',
    new: 'b',
  }));
}

/**
 * A change of three fields, two attributed: `spec.replicas` to `scaler`, the status to
 * `kube-controller-manager`'s write to the status subresource; the label to no one.
 */
export function attributedEvent(): ChangeEvent {
  return sampleEvent({
    diff: [
      { path: 'spec.replicas', op: 'replace', old: 2, new: 3 },
      { path: 'metadata.labels.tier', op: 'add', new: 'front' },
      { path: 'status.observedGeneration', op: 'replace', old: 4, new: 5 },
    ],
    changedBy: [
      { manager: 'scaler', operation: 'Update', time: '2026-11-28T10:42:07Z', paths: ['spec.replicas'] },
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        subresource: 'status',
        time: '2026-11-28T10:42:08Z',
        paths: ['status.observedGeneration'],
      },
    ],
  });
}

/** The lines every text sink shows for {@link attributedEvent}: the CLI's words, per change. */
export const ATTRIBUTED_LINES = [
  'spec.replicas: 2 → 3  by scaler (Update) at 10:42:07',
  'metadata.labels.tier: + "front"',
  'status.observedGeneration: 4 → 5  by kube-controller-manager (Update status) at 10:42:08',
];
