/**
 * The namespace of pods the cache-heap suite reads, on the benchmark's own control plane (the one
 * the list+watch suite starts in .cache/bench-cluster and leaves running). Pods already there are
 * reused (the namespace is the suite's own: every pod in it counts); missing ones are created
 * (three writes each, see pods.ts).
 */
import { loadRaven, ravenClient } from '../lib/raven.js';
import {
  APP,
  APPLY_MANAGER,
  SERVICE_ACCOUNT,
  appliedMetadata,
  podName,
  podToCreate,
  replicaSet,
  unschedulableStatus,
} from './pods.js';

/** Requests in flight while creating: enough to keep the apiserver busy, below its inflight limit. */
const CREATE_CONCURRENCY = 32;

/** What the cached objects are, measured on the apiserver's own list. */
export interface PodStats {
  /** Pods in the namespace (all of them are cached). */
  pods: number;
  /** Mean size of one pod as JSON. */
  jsonBytes: number;
  /** Mean size of its metadata.managedFields as JSON. */
  managedFieldsBytes: number;
  /** The field managers recorded, e.g. `kube-controller-manager (Update)`. */
  managers: string[];
}

type Client = Awaited<ReturnType<typeof ravenClient>>;

interface ListedPod {
  metadata?: { managedFields?: { manager?: string; operation?: string; subresource?: string }[] };
}

const ignoreConflict = (err: unknown): undefined => {
  if ((err as { statusCode?: number }).statusCode !== 409) throw err;
  return undefined;
};

/** Make sure `namespace` holds `count` bench pods (creating the missing ones) and describe them. */
export async function ensurePods(
  kubeconfig: string,
  namespace: string,
  count: number,
  log: (line: string) => void,
): Promise<PodStats> {
  const client = await ravenClient(await loadRaven(), kubeconfig);
  try {
    const present = await countPods(client, namespace);
    if (present >= count) {
      log(`cache-heap: reusing ${present} pods in namespace ${namespace}`);
    } else {
      log(`cache-heap: ${present} pods in ${namespace}; creating up to ${count} (3 writes each)`);
      await createPods(client, namespace, count, log);
    }
    return await describePods(client, namespace);
  } finally {
    await client.close();
  }
}

async function countPods(client: Client, namespace: string): Promise<number> {
  const page = await client.request<{ items: unknown[]; metadata: { remainingItemCount?: number } }>({
    method: 'GET',
    path: `/api/v1/namespaces/${namespace}/pods`,
    // No selector: the apiserver gives remainingItemCount only for unfiltered lists.
    query: { limit: 1 },
  });
  return page.items.length + (page.metadata.remainingItemCount ?? 0);
}

async function createPods(
  client: Client,
  namespace: string,
  count: number,
  log: (line: string) => void,
): Promise<void> {
  await client
    .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: namespace } } })
    .catch(ignoreConflict);
  await client
    .request({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
      body: { metadata: { name: SERVICE_ACCOUNT } },
    })
    .catch(ignoreConflict);
  const rsPath = `/apis/apps/v1/namespaces/${namespace}/replicasets`;
  await client.request({ method: 'POST', path: rsPath, body: replicaSet(namespace) }).catch(ignoreConflict);
  const owner = await client.request<{ metadata: { uid: string } }>({
    method: 'GET',
    path: `${rsPath}/${APP}`,
  });
  const pods = `/api/v1/namespaces/${namespace}/pods`;
  const started = Date.now();
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      // Re-running after an interruption: a pod that exists still gets the later writes.
      await client
        .request({
          method: 'POST',
          path: pods,
          query: { fieldManager: 'kube-controller-manager' },
          body: podToCreate(i, namespace, owner.metadata),
        })
        .catch(ignoreConflict);
      await client.request({
        method: 'PATCH',
        path: `${pods}/${podName(i)}/status`,
        query: { fieldManager: 'kube-scheduler' },
        contentType: 'application/strategic-merge-patch+json',
        body: unschedulableStatus(new Date().toISOString().replace(/\.\d+Z$/, 'Z')),
      });
      await client.request({
        method: 'PATCH',
        path: `${pods}/${podName(i)}`,
        query: { fieldManager: APPLY_MANAGER, force: true },
        contentType: 'application/apply-patch+yaml',
        body: appliedMetadata(i, namespace),
      });
      if (++done % 1000 === 0) {
        const rate = done / ((Date.now() - started) / 1000);
        log(`cache-heap: ${done}/${count} pods (${rate.toFixed(0)}/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
  log(`cache-heap: ${count} pods written in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** List every pod of the namespace (pages of 500) and measure them as JSON. */
async function describePods(client: Client, namespace: string): Promise<PodStats> {
  let pods = 0;
  let jsonBytes = 0;
  let managedFieldsBytes = 0;
  const managers = new Set<string>();
  let continueToken: string | undefined;
  do {
    const page = await client.request<{ items: ListedPod[]; metadata: { continue?: string } }>({
      method: 'GET',
      path: `/api/v1/namespaces/${namespace}/pods`,
      query: { limit: 500, continue: continueToken },
    });
    for (const pod of page.items) {
      pods++;
      jsonBytes += Buffer.byteLength(JSON.stringify(pod));
      const fields = pod.metadata?.managedFields ?? [];
      managedFieldsBytes += Buffer.byteLength(JSON.stringify(fields));
      for (const f of fields) {
        const sub = f.subresource === undefined ? '' : `, ${f.subresource}`;
        managers.add(`${f.manager ?? '?'} (${f.operation ?? '?'}${sub})`);
      }
    }
    continueToken = page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (continueToken !== undefined);
  return {
    pods,
    jsonBytes: pods === 0 ? 0 : jsonBytes / pods,
    managedFieldsBytes: pods === 0 ? 0 : managedFieldsBytes / pods,
    managers: [...managers].sort(),
  };
}
