/**
 * The pods the cache-heap suite caches, written to a real apiserver the way a cluster writes them,
 * so that their managedFields are the apiserver's own record of several field managers:
 *
 * 1. created by `kube-controller-manager` (an Update, as the ReplicaSet controller creates a
 *    replica), from the realistic pod of bench/lib/pod-fixture.ts without its server-set fields,
 *    its node and its status; the ServiceAccount admission plugin adds the token volume;
 * 2. marked unschedulable by `kube-scheduler` (an Update of the status subresource with the
 *    PodScheduled condition, what the scheduler writes when no node fits: none runs here);
 * 3. labelled and annotated through server-side apply by a third manager (an Apply entry).
 *
 * No kubelet runs, so the pods stay Pending with a short status. They are owned by a real
 * ReplicaSet, whose selector does not match them and whose reference is not a controller
 * reference: the garbage collector finds their owner, and the ReplicaSet controller neither adopts,
 * releases nor replaces them.
 */
import { makePod } from '../lib/pod-fixture.js';

export const APP = 'checkout-api-5d8f7c9b4d';
export const SERVICE_ACCOUNT = 'checkout-api';
export const APPLY_MANAGER = 'policy-controller';

/** `checkout-api-5d8f7c9b4d-<5 characters>`, distinct and stable for pod `i`. */
export function podName(i: number): string {
  return `${APP}-${i.toString(36).padStart(5, '0')}`;
}

/** The owning ReplicaSet: replicas 0 and a selector the pods do not match (see the header). */
export function replicaSet(namespace: string): object {
  const labels = { 'app.kubernetes.io/name': 'checkout-api', 'raven-bench/owner': 'replicaset' };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: APP, namespace },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'registry.example.com/shop/checkout-api:2.14.3' }] },
      },
    },
  };
}

type Json = Record<string, unknown>;

const isTokenVolume = (v: Json): boolean => String(v.name).startsWith('kube-api-access-');

/** The pod as its creator sends it: the fixture without server-set fields, node, status or token volume. */
export function podToCreate(i: number, namespace: string, owner: { uid: string }): Json {
  const pod = makePod(i);
  const metadata = pod.metadata as Json;
  const spec = pod.spec as Json & { volumes: Json[]; containers: Json[] };
  const tokenVolumes = new Set(spec.volumes.filter(isTokenVolume).map((v) => v.name));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(i),
      generateName: metadata.generateName,
      namespace,
      labels: metadata.labels,
      annotations: metadata.annotations,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: APP,
          uid: owner.uid,
          controller: false,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      ...spec,
      nodeName: undefined,
      volumes: spec.volumes.filter((v) => !isTokenVolume(v)),
      containers: spec.containers.map((c) => ({
        ...c,
        volumeMounts: (c.volumeMounts as Json[] | undefined)?.filter((m) => !tokenVolumes.has(m.name)),
      })),
    },
  };
}

/** What kube-scheduler writes (strategic merge patch of status) for a pod no node fits. */
export function unschedulableStatus(now: string): Json {
  return {
    status: {
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: now,
          reason: 'Unschedulable',
          message: '0/0 nodes are available: no nodes available to schedule pods.',
        },
      ],
    },
  };
}

/** The server-side apply configuration of the third manager. */
export function appliedMetadata(i: number, namespace: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(i),
      namespace,
      labels: { 'cost-center': `cc-${1000 + (i % 7)}`, 'policy.example.com/tier': 'standard' },
      annotations: { 'policy.example.com/validated-at': '2026-03-14T09:27:01Z' },
    },
  };
}
