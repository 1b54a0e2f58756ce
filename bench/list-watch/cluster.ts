/**
 * The control plane and the ConfigMaps the list+watch suite reads. The control plane is the
 * benchmark's own (state in .cache/bench-cluster, apart from the development cluster of
 * `npm run cluster`), started on first use and left running so that the ConfigMaps, slow to
 * create, are reused by the next run. Stop it with
 * `RAVEN_CLUSTER_DIR=.cache/bench-cluster npm run cluster -- down`.
 * RAVEN_BENCH_KUBECONFIG points the suite at another cluster instead.
 */
import { join } from 'node:path';
import { ensureBinaries } from '../../test/harness/binaries.js';
import { ControlPlane } from '../../test/harness/control-plane.js';
import { repoRoot } from '../lib/child.js';
import { loadRaven, ravenClient } from '../lib/raven.js';

export const clusterDir = process.env.RAVEN_BENCH_CLUSTER_DIR ?? join(repoRoot, '.cache', 'bench-cluster');

/** Requests in flight while creating: enough to keep the apiserver busy, below its inflight limit. */
const CREATE_CONCURRENCY = 48;

/** The kubeconfig of a running benchmark cluster, starting it if needed. */
export async function benchKubeconfig(log: (line: string) => void): Promise<string> {
  const explicit = process.env.RAVEN_BENCH_KUBECONFIG;
  if (explicit !== undefined && explicit !== '') return explicit;
  if (ControlPlane.exists(clusterDir)) {
    const plane = await ControlPlane.attach(clusterDir);
    if (Object.values(plane.running()).every(Boolean)) return plane.kubeconfig;
    await plane.stop();
  }
  log(`list-watch: starting the benchmark control plane in ${clusterDir}`);
  const plane = await ControlPlane.start(clusterDir, await ensureBinaries(log), log);
  log(`list-watch: control plane ready at ${plane.server}; it is left running for the next run`);
  return plane.kubeconfig;
}

/**
 * The pids of the benchmark control plane's kube-apiserver and etcd, whose CPU each run reports
 * (the server's share of an initial list); undefined when the suite runs against another cluster.
 */
export async function serverPids(): Promise<number[] | undefined> {
  const explicit = process.env.RAVEN_BENCH_KUBECONFIG;
  if ((explicit !== undefined && explicit !== '') || !ControlPlane.exists(clusterDir)) return undefined;
  const { apiserver, etcd } = (await ControlPlane.attach(clusterDir)).pids();
  return apiserver === undefined || etcd === undefined ? undefined : [apiserver, etcd];
}

function configMap(namespace: string, i: number): object {
  const name = `cm-${String(i).padStart(6, '0')}`;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: 'raven-bench', shard: String(i % 16) } },
    data: { index: String(i), 'settings.yaml': `replicas: 3\nlogLevel: info\nshard: ${i % 16}\n` },
  };
}

/**
 * Make sure `namespace` holds at least `count` bench ConfigMaps (creating the missing ones) and
 * return how many ConfigMaps it holds in all (the namespace's own kube-root-ca.crt included).
 */
export async function ensureConfigMaps(
  kubeconfig: string,
  namespace: string,
  count: number,
  log: (line: string) => void,
): Promise<number> {
  const raven = await loadRaven();
  const client = await ravenClient(raven, kubeconfig);
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  const total = async (): Promise<number> => {
    const page = await client.request<{ items: unknown[]; metadata: { remainingItemCount?: number } }>({
      method: 'GET',
      path,
      query: { limit: 1 },
    });
    return page.items.length + (page.metadata.remainingItemCount ?? 0);
  };
  try {
    await client
      .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: namespace } } })
      .catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 409) throw err;
      });
    const present = await total();
    if (present >= count) {
      log(`list-watch: reusing ${present} ConfigMaps in namespace ${namespace}`);
      return present;
    }
    log(`list-watch: ${present} ConfigMaps in ${namespace}; creating up to ${count} (a few minutes)`);
    const started = Date.now();
    let next = 0;
    let done = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < count; i = next++) {
        await client
          .request({ method: 'POST', path, body: configMap(namespace, i) })
          .catch((err: unknown) => {
            if ((err as { statusCode?: number }).statusCode !== 409) throw err;
          });
        if (++done % 10_000 === 0) {
          const rate = done / ((Date.now() - started) / 1000);
          log(`list-watch: ${done}/${count} ConfigMaps (${rate.toFixed(0)}/s)`);
        }
      }
    };
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
    const after = await total();
    log(
      `list-watch: ${after} ConfigMaps in ${namespace} after ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    return after;
  } finally {
    await client.close();
  }
}
