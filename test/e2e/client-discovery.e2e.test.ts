/**
 * Discovery against a real apiserver: the names users type resolve to the served resources, a
 * CustomResourceDefinition created after discovery was cached is found by every one of its names
 * (the unknown name refreshes the cache) and served through ResourceClient, and an unknown name
 * fails with close matches to suggest.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type {
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
} from 'kubernetes-types/apiextensions/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient, type RequestOptions } from '../../src/client/kube-client.js';
import { Discovery } from '../../src/client/discovery.js';
import { ResourceClient, type KubeObject } from '../../src/client/resource-client.js';
import { UnknownResourceError } from '../../src/client/unknown-resource-error.js';
import { aggregatedDiscoveryAccept, parseAggregated } from '../../src/client/discovery-documents.js';
import type { ApiResource } from '../../src/client/api-resource.js';
import { isNotFound } from '../../src/errors/classify.js';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import type { ControlPlane } from '../harness/control-plane.js';

/** A fresh namespace and an admin client whose default namespace it is; both gone afterwards. */
async function setUp(t: {
  after: (fn: () => Promise<void>) => void;
}): Promise<{ client: KubeClient; ns: string; plane: ControlPlane }> {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  const config = await loadConfig({ kubeconfig: plane.kubeconfig });
  const client = new KubeClient({ ...config, namespace: ns });
  t.after(async () => {
    await client.destroy();
    await deleteNamespace(plane, ns);
  });
  return { client, ns, plane };
}

/** Poll `probe` until it answers true; eventual states only, with a generous deadline. */
async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) assert.fail(`${what}: not reached within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `group/version/resource` and the subresource, compactly. */
function summary(r: {
  group: string;
  version: string;
  resource: string;
  subresource?: { name: string };
}): string {
  const sub = r.subresource === undefined ? '' : `/${r.subresource.name}`;
  return `${r.group === '' ? 'core' : r.group}/${r.version}/${r.resource}${sub}`;
}

test('built-in resources resolve by plural, short name, kind, qualified name, path and subresource', async (t) => {
  const { client, ns } = await setUp(t);
  const discovery = new Discovery(client);
  const expected: Record<string, string> = {
    pods: 'core/v1/pods',
    po: 'core/v1/pods',
    Pod: 'core/v1/pods',
    pod: 'core/v1/pods',
    'v1/pods': 'core/v1/pods',
    'core/v1/pods': 'core/v1/pods',
    Deployment: 'apps/v1/deployments',
    deploy: 'apps/v1/deployments',
    'deployments.apps': 'apps/v1/deployments',
    'deployments.v1.apps': 'apps/v1/deployments',
    'apps/v1/deployments': 'apps/v1/deployments',
    'deployments/scale': 'apps/v1/deployments/scale',
    // The core group is listed first, so it wins the ambiguous name.
    events: 'core/v1/events',
    'events.events.k8s.io': 'events.k8s.io/v1/events',
  };
  for (const [input, want] of Object.entries(expected)) {
    assert.equal(summary(await discovery.resolve(input)), want, `resolve(${JSON.stringify(input)})`);
  }
  const pods = await discovery.resolve('po');
  assert.equal(pods.kind, 'Pod');
  assert.equal(pods.namespaced, true);
  assert.ok(pods.verbs.includes('watch'));
  assert.ok(pods.subresources.some((s) => s.name === 'log'));
  const namespaces = await discovery.resolve('ns');
  assert.equal(namespaces.namespaced, false);

  // The scale subresource answers a Scale, and ResourceClient reaches it.
  const scale = await discovery.resolve('deployments/scale');
  assert.equal(scale.subresource?.kind, 'Scale');
  const deployments = new ResourceClient<Deployment>(client, await discovery.resolve('deploy'));
  await deployments.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'scaled' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'scaled' } },
      template: {
        metadata: { labels: { app: 'scaled' } },
        spec: { containers: [{ name: 'main', image: 'registry.invalid/main:1' }] },
      },
    },
  });
  const scales = new ResourceClient<Scale>(client, scale);
  const current = await scales.get('scaled', { subresource: 'scale' });
  assert.equal(current.kind, 'Scale');
  assert.equal(current.spec?.replicas, 1);
  await scales.patch('scaled', { spec: { replicas: 2 } }, { type: 'merge', subresource: 'scale' });
  assert.equal((await deployments.get('scaled', { namespace: ns })).spec?.replicas, 2);
});

test('the legacy per-group-version documents describe the same resources as aggregated discovery', async (t) => {
  const { client } = await setUp(t);
  const aggregated = await new Discovery(client).resources();
  // Asking for plain JSON only is what an apiserver without aggregated discovery answers.
  const legacy = await new Discovery({
    request: <T>(opts: RequestOptions): Promise<T> =>
      client.request<T>({ ...opts, headers: { ...opts.headers, accept: 'application/json' } }),
  }).resources();
  // Built-in groups only: other tests may be adding custom resources between the two fetches.
  const builtIn = (r: ApiResource): boolean => !r.group.includes('.') || r.group.endsWith('.k8s.io');
  const canonical = (list: readonly ApiResource[]): unknown[] =>
    list.filter(builtIn).map((r) => ({
      ...r,
      subresources: [...r.subresources].sort((a, b) => a.name.localeCompare(b.name)),
    }));
  assert.ok(aggregated.length > 40, `${aggregated.length} resources`);
  assert.deepEqual(canonical(legacy), canonical(aggregated));
});

test('an unknown name is an UnknownResourceError suggesting close matches', async (t) => {
  const { client } = await setUp(t);
  const discovery = new Discovery(client);
  const err = await discovery.resolve('deploymnets').then(
    () => assert.fail('a misspelt name resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof UnknownResourceError, `not an UnknownResourceError: ${String(err)}`);
  assert.equal(err.code, 'ERR_UNKNOWN_RESOURCE');
  assert.equal(err.input, 'deploymnets');
  assert.equal(err.suggestions[0], 'deployments.apps');
  assert.match(err.message, /did you mean deployments\.apps/);

  const sub = await discovery.resolve('deployments/scael').then(
    () => assert.fail('a misspelt subresource resolved'),
    (e: unknown) => e,
  );
  assert.ok(sub instanceof UnknownResourceError);
  assert.match(sub.message, /deployments\.apps has no subresource "scael" \(it has: .*scale/);
});

interface Gizmo extends KubeObject {
  spec?: { size?: number; colour?: string };
  status?: { ready?: boolean };
}

/** A discovery whose requests are counted, to see when it refreshes. */
function countingDiscovery(client: KubeClient): { discovery: Discovery; fetches: () => number } {
  let fetches = 0;
  // No refresh throttle: when the apiserver starts serving a new name is not ours to time.
  const discovery = new Discovery(
    {
      request: <T>(opts: RequestOptions): Promise<T> => {
        fetches++;
        return client.request<T>(opts);
      },
    },
    { minRefreshIntervalMs: 0 },
  );
  return { discovery, fetches: () => fetches };
}

/** Wait until the apiserver's aggregated discovery document lists a resource matching `served`. */
async function untilDiscoveryServes(
  client: KubeClient,
  what: string,
  served: (r: ApiResource) => boolean,
): Promise<void> {
  await eventually(what, async () => {
    const doc = await client.request<unknown>({
      method: 'GET',
      path: '/apis',
      headers: { accept: aggregatedDiscoveryAccept },
    });
    return parseAggregated(doc).some(served);
  });
}

/**
 * Create a small namespaced CRD with random names (cluster-scoped names must not clash with another
 * test or run), wait until it is Established and in discovery, and delete it after the test.
 */
async function createCrd(
  t: { after: (fn: () => Promise<void>) => void },
  client: KubeClient,
  plane: ControlPlane,
): Promise<{
  group: string;
  names: Required<CustomResourceDefinitionNames>;
  crds: ResourceClient<CustomResourceDefinition>;
}> {
  const suffix = Array.from(randomBytes(6), (b) => String.fromCharCode(97 + (b % 26))).join('');
  const group = `e2e-${suffix}.raven.test`;
  const names = {
    plural: `gizmos${suffix}`,
    singular: `gizmo${suffix}`,
    shortNames: [`gz${suffix}`],
    kind: `Gadget${suffix}`,
    listKind: `Gadget${suffix}List`,
    categories: [],
  };
  const crds = new ResourceClient<CustomResourceDefinition>(client, {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    namespaced: false,
  });
  const crdName = `${names.plural}.${group}`;
  await crds.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName },
    spec: {
      group,
      scope: 'Namespaced',
      names,
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer' }, colour: { type: 'string' } },
                },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
        },
      ],
    },
  });
  t.after(async () => {
    // Through the harness: hooks run in the order they were added, after the client is closed.
    await plane.adminRequest('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
  });
  await eventually('the CRD is Established', async () => {
    const crd = await crds.get(crdName);
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;
  });
  // The apiserver publishes the new group in its discovery documents shortly after.
  await untilDiscoveryServes(
    client,
    'the apiserver lists the new group in discovery',
    (r) => r.group === group,
  );
  return { group, names, crds };
}

test('a new CustomResourceDefinition resolves by plural, singular, short name and kind and serves CRUD', async (t) => {
  const { client, ns, plane } = await setUp(t);
  const { discovery, fetches } = countingDiscovery(client);
  // Discovery is cached before the CRD exists.
  const before = await discovery.resources();
  const { group, names } = await createCrd(t, client, plane);
  assert.ok(!before.some((r) => r.group === group));

  // The cache does not know the name: resolve() refreshes it by itself, once.
  const expected = `${group}/v1/${names.plural}`;
  const fetchesBefore = fetches();
  assert.equal(summary(await discovery.resolve(names.plural)), expected);
  assert.ok(fetches() > fetchesBefore, 'resolving the unknown name refetched discovery');
  const fetchesAfter = fetches();
  const [shortName = ''] = names.shortNames;
  for (const input of [names.plural, names.singular, shortName, names.kind, `${names.plural}.${group}`]) {
    const found = await discovery.resolve(input);
    assert.equal(summary(found), expected, `resolve(${JSON.stringify(input)})`);
    assert.equal(found.kind, names.kind);
    assert.equal(found.namespaced, true);
  }
  assert.equal(fetches(), fetchesAfter, 'known names are answered from the cache');

  const gizmos = new ResourceClient<Gizmo>(client, await discovery.resolve(shortName));
  const created = await gizmos.create({
    apiVersion: `${group}/v1`,
    kind: names.kind,
    metadata: { name: 'first' },
    spec: { size: 1, colour: 'red' },
  });
  assert.equal(created.metadata?.namespace, ns);
  assert.deepEqual((await gizmos.get('first')).spec, { size: 1, colour: 'red' });
  const patched = await gizmos.patch('first', { spec: { size: 2 } }, { type: 'merge' });
  assert.deepEqual(patched.spec, { size: 2, colour: 'red' });
  const replaced = await gizmos.replace('first', { ...patched, spec: { size: 3 } });
  assert.deepEqual(replaced.spec, { size: 3 });
  const applied = await gizmos.apply(
    { apiVersion: `${group}/v1`, kind: names.kind, metadata: { name: 'second' }, spec: { colour: 'blue' } },
    { fieldManager: 'raven-e2e' },
  );
  assert.deepEqual(applied.spec, { colour: 'blue' });
  const listed = await gizmos.list({ namespace: ns });
  assert.deepEqual(
    listed.items.map((g) => g.metadata?.name),
    ['first', 'second'],
  );
  await gizmos.delete('first');
  await assert.rejects(gizmos.get('first'), isNotFound);
  assert.deepEqual(
    (await gizmos.list({ namespace: ns })).items.map((g) => g.metadata?.name),
    ['second'],
  );
});

test('a subresource added to a CustomResourceDefinition later is found by refreshing discovery', async (t) => {
  const { client, plane } = await setUp(t);
  const { group, names, crds } = await createCrd(t, client, plane);
  const { discovery, fetches } = countingDiscovery(client);
  const gizmos = new ResourceClient<Gizmo>(client, await discovery.resolve(names.plural));
  await gizmos.create({
    apiVersion: `${group}/v1`,
    kind: names.kind,
    metadata: { name: 'one' },
    spec: { size: 1 },
  });
  // Without the subresource, status is written with the object.
  assert.equal((await discovery.resolve(names.plural)).subresources.length, 0);

  await crds.patch(
    `${names.plural}.${group}`,
    [{ op: 'add', path: '/spec/versions/0/subresources', value: { status: {} } }],
    { type: 'json' },
  );
  await untilDiscoveryServes(
    client,
    'the apiserver lists the status subresource',
    (r) => r.group === group && r.subresources.some((sub) => sub.name === 'status'),
  );

  // The cached discovery knows the resource but not its new subresource: that is an unknown name too.
  const fetchesBefore = fetches();
  const status = await discovery.resolve(`${names.plural}/status`);
  assert.ok(fetches() > fetchesBefore, 'the unknown subresource refetched discovery');
  assert.equal(status.subresource?.name, 'status');
  const statuses = new ResourceClient<Gizmo>(client, status);
  const written = await statuses.patch(
    'one',
    { status: { ready: true } },
    { type: 'merge', subresource: 'status' },
  );
  assert.deepEqual(written.status, { ready: true });
  assert.deepEqual(written.spec, { size: 1 });
});
