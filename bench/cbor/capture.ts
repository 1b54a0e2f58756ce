/**
 * Captures the same pods from a real apiserver in both encodings it serves: a list and a watch
 * stream from resourceVersion 0 (one ADDED event per pod), as JSON and as CBOR
 * (`CBORServingAndStorage`, which the test control plane turns on). The pods are the benchmarks'
 * realistic fixture (bench/lib/pod-fixture.ts), created with their status, so both encodings carry
 * the apiserver's own managedFields, timestamps and resourceVersions.
 */
import { KubeClient, loadConfig } from '../../src/index.js';
import { makePod } from '../lib/pod-fixture.js';

export interface Capture {
  jsonList: Buffer;
  cborList: Buffer;
  jsonWatch: Buffer;
  cborWatch: Buffer;
  pods: number;
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Creates `pods` pods in namespace `namespace` (made if missing) and captures them. */
export async function capturePods(kubeconfig: string, namespace: string, pods: number): Promise<Capture> {
  const client = new KubeClient(await loadConfig({ kubeconfig }));
  try {
    await client
      .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: namespace } } })
      .catch((error: unknown) => {
        if ((error as { statusCode?: number }).statusCode !== 409) throw error;
      });
    const base = `/api/v1/namespaces/${namespace}/pods`;
    const accounts = new Set<string>();
    // Pods made by an earlier run are reused: creating them is the slow part.
    const existing = await client.request<{ items: { metadata: { name: string } }[] }>({
      method: 'GET',
      path: base,
    });
    const made = new Set(existing.items.map((p) => p.metadata.name));
    for (let i = 0; i < pods; i++) {
      if (made.has(`cbor-${String(i)}`)) continue;
      const pod = makePod(i) as {
        metadata: Record<string, unknown>;
        spec: { serviceAccountName?: string };
        status: unknown;
      };
      const account = pod.spec.serviceAccountName;
      if (account !== undefined && !accounts.has(account)) {
        accounts.add(account);
        await client
          .request({
            method: 'POST',
            path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
            body: { metadata: { name: account } },
          })
          .catch((error: unknown) => {
            if ((error as { statusCode?: number }).statusCode !== 409) throw error;
          });
      }
      const name = `cbor-${i}`;
      const metadata: Record<string, unknown> = { ...pod.metadata, name, namespace };
      delete metadata.uid;
      delete metadata.resourceVersion;
      delete metadata.creationTimestamp;
      delete metadata.managedFields;
      delete metadata.ownerReferences;
      // Unbound: the pod garbage collector deletes pods bound to nodes that do not exist.
      const spec: Record<string, unknown> = { ...pod.spec };
      delete spec.nodeName;
      const created = await client.request<Record<string, unknown>>({
        method: 'POST',
        path: base,
        body: { ...pod, metadata, spec, status: undefined },
      });
      await client.request({
        method: 'PUT',
        path: `${base}/${name}/status`,
        body: { ...created, status: pod.status },
      });
    }
    // A watch from resourceVersion 0 starts with an ADDED event per pod; timeoutSeconds ends it.
    const get = async (accept: string, query: Record<string, string>): Promise<Buffer> => {
      const response = await client.stream({ path: base, query, headers: { accept } });
      const expected = accept.includes('cbor') ? 'application/cbor' : 'application/json';
      const type = String(response.headers['content-type']);
      if (!type.startsWith(expected)) {
        throw new Error(
          `${base}: asked for ${accept}, the apiserver answered ${type}; a control plane started before ` +
            'CBORServingAndStorage was turned on in test/harness/control-plane.ts must be restarted ' +
            '(RAVEN_CLUSTER_DIR=.cache/bench-cluster npm run cluster -- down)',
        );
      }
      return readAll(response.body);
    };
    const jsonList = await get('application/json', {});
    const cborList = await get('application/cbor', {});
    const watchQuery = { watch: 'true', resourceVersion: '0', timeoutSeconds: '2' };
    const jsonWatch = await get('application/json', watchQuery);
    const cborWatch = await get('application/cbor', watchQuery);
    return { jsonList, cborList, jsonWatch, cborWatch, pods };
  } finally {
    await client.close();
  }
}
