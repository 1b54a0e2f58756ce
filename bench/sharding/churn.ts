/**
 * The objects the sharding benchmark's replicas split, and the churn they watch: ConfigMaps of 2
 * to 4 KB (a settings file of 30 to 59 lines, labels, an annotation) in one namespace, created
 * once per control plane; then merge patches of `data.revision`, spread round-robin over the
 * objects. Each patch writes a revision never written before, so every one is a real change the
 * replicas must deliver. Requests go through Raven's own client (from dist/), a few in flight.
 */
import type { Raven } from '../lib/raven.js';

export type Client = InstanceType<Raven['KubeClient']>;

/**
 * Requests in flight while patching, by default: enough to keep the apiserver busy on a small
 * machine, few enough that the driver's own CPU stays a small share of it. Fewer make the changes
 * arrive further apart (`--in-flight`).
 */
export const IN_FLIGHT = 16;

const name = (i: number): string => `cm-${String(i).padStart(5, '0')}`;

/** Twelve characters of base 36 that differ from object to object (incompressible enough). */
const token = (n: number): string => (n % 36 ** 12).toString(36).padStart(12, 'x');

function configMap(namespace: string, i: number): object {
  const lines = Array.from(
    { length: 30 + (i % 30) },
    (_, k) =>
      `  setting-${k}: "${token(i * 2654435761 + k * 40503)}-${token(i * 40503 + k * 2654435761)}-value-${k}"`,
  );
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: name(i),
      namespace,
      labels: { app: 'raven-bench', 'app.kubernetes.io/part-of': 'sharding', slot: String(i % 16) },
      annotations: { 'raven.dev/bench': 'sharding' },
    },
    data: { revision: '0', 'settings.yaml': `service: shard-${i}\nsettings:\n${lines.join('\n')}\n` },
  };
}

/** The mean size of the ConfigMaps as JSON, as the apiserver serves them (managedFields included). */
export async function meanSize(client: Client, namespace: string): Promise<number> {
  const list = await client.request<{ items: unknown[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    query: { limit: 200, labelSelector: 'app=raven-bench' },
  });
  const bytes = list.items.reduce<number>((sum, item) => sum + JSON.stringify(item).length, 0);
  return bytes / Math.max(1, list.items.length);
}

/** Run `work(i)` for i in [0, count), `inFlight` at a time. */
async function pool(count: number, work: (i: number) => Promise<void>, inFlight = IN_FLIGHT): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await work(i);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
}

/** Create the `objects` ConfigMaps in `namespace` (one already there is kept). */
export async function populate(client: Client, namespace: string, objects: number): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  await pool(objects, async (i) => {
    await client.request({ method: 'POST', path, body: configMap(namespace, i) }).catch((err: unknown) => {
      if ((err as { statusCode?: number }).statusCode !== 409) throw err;
    });
  });
}

/**
 * `changes` patches, the j-th to object `j mod objects`, setting `data.revision` to
 * `firstRevision + j`. Returns the next unused revision.
 */
export async function churn(
  client: Client,
  namespace: string,
  objects: number,
  changes: number,
  firstRevision: number,
  inFlight = IN_FLIGHT,
): Promise<number> {
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  await pool(
    changes,
    async (j) => {
      await client.request({
        method: 'PATCH',
        path: `${path}/${name(j % objects)}`,
        body: { data: { revision: String(firstRevision + j) } },
        contentType: 'application/merge-patch+json',
      });
    },
    inFlight,
  );
  return firstRevision + changes;
}
