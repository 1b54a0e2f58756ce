import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Discovery } from '../../../src/client/discovery.js';
import { KubeClient } from '../../../src/client/kube-client.js';
import { UnknownResourceError } from '../../../src/client/unknown-resource-error.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { configFor, CountingAuth, reply, startServer, type Step } from './test-server.js';

const res = (
  resource: string,
  kind: string,
  opts: { group?: string; version?: string; scope?: string; short?: string[]; subs?: string[] } = {},
) => ({
  resource,
  responseKind: { group: opts.group ?? '', version: opts.version ?? 'v1', kind },
  scope: opts.scope ?? 'Namespaced',
  singularResource: kind.toLowerCase(),
  verbs: ['get', 'list', 'watch'],
  shortNames: opts.short ?? [],
  subresources: (opts.subs ?? []).map((s) => ({
    subresource: s,
    responseKind: { kind: s === 'scale' ? 'Scale' : kind },
    verbs: ['get', 'update'],
  })),
});

const coreDoc = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  items: [
    {
      metadata: { name: '' },
      versions: [
        {
          version: 'v1',
          resources: [
            res('pods', 'Pod', { short: ['po'], subs: ['log', 'status'] }),
            res('events', 'Event', { short: ['ev'] }),
            res('namespaces', 'Namespace', { scope: 'Cluster', short: ['ns'] }),
          ],
        },
      ],
    },
  ],
};

const groupsDoc = (extra: object[] = []) => ({
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  items: [
    {
      metadata: { name: 'apps' },
      versions: [
        {
          version: 'v1',
          resources: [
            res('deployments', 'Deployment', { group: 'apps', short: ['deploy'], subs: ['scale', 'status'] }),
          ],
        },
        {
          version: 'v1beta1',
          resources: [res('deployments', 'Deployment', { group: 'apps', version: 'v1beta1' })],
        },
      ],
    },
    {
      metadata: { name: 'events.k8s.io' },
      versions: [
        { version: 'v1', resources: [res('events', 'Event', { group: 'events.k8s.io', short: ['ev'] })] },
      ],
    },
    ...extra,
  ],
});

const crdGroup = {
  metadata: { name: 'stable.example.com' },
  versions: [
    {
      version: 'v1',
      resources: [res('crontabs', 'CronTab', { group: 'stable.example.com', short: ['ct'] })],
    },
  ],
};

async function setup(steps: Step[]) {
  const server = await startServer();
  server.play(...steps);
  const clock = new FakeClock();
  const client = new KubeClient(configFor(server.url, new CountingAuth()));
  return { server, clock, client, discovery: new Discovery(client, { clock }) };
}

test('aggregated discovery resolves plural, singular, short name, kind and qualified forms', async () => {
  const { server, client, discovery } = await setup([reply(200, coreDoc), reply(200, groupsDoc())]);
  const pick = async (input: string) => {
    const r = await discovery.resolve(input);
    return `${r.group}/${r.version}/${r.resource}${r.subresource ? `/${r.subresource.name}` : ''}`;
  };
  assert.equal(await pick('pods'), '/v1/pods');
  assert.equal(await pick('pod'), '/v1/pods');
  assert.equal(await pick('po'), '/v1/pods');
  assert.equal(await pick('Pod'), '/v1/pods');
  assert.equal(await pick('v1/pods'), '/v1/pods');
  assert.equal(await pick('deploy'), 'apps/v1/deployments');
  assert.equal(await pick('deployments.apps'), 'apps/v1/deployments');
  assert.equal(await pick('deployments.v1beta1.apps'), 'apps/v1beta1/deployments');
  assert.equal(await pick('apps/v1beta1/deployments'), 'apps/v1beta1/deployments');
  assert.equal(await pick('deployments/scale'), 'apps/v1/deployments/scale');
  assert.equal(await pick('apps/v1/deployments/status'), 'apps/v1/deployments/status');
  const ns = await discovery.resolve('ns');
  assert.equal(ns.namespaced, false);
  assert.equal((await discovery.resolve('deployments/scale')).subresource?.kind, 'Scale');
  const accept = server.requests[0]?.headers.accept ?? '';
  assert.match(accept, /^application\/json;g=apidiscovery\.k8s\.io;v=v2;as=APIGroupDiscoveryList,/);
  assert.equal(server.requests.length, 2);
  await client.close();
});

test('the core group wins an ambiguous name', async () => {
  const { client, discovery } = await setup([reply(200, coreDoc), reply(200, groupsDoc())]);
  assert.equal((await discovery.resolve('events')).group, '');
  assert.equal((await discovery.resolve('ev')).group, '');
  assert.equal((await discovery.resolve('events.events.k8s.io')).group, 'events.k8s.io');
  await client.close();
});

test('an unknown name refreshes discovery once and finds a new custom resource', async () => {
  const { server, client, clock, discovery } = await setup([
    reply(200, coreDoc),
    reply(200, groupsDoc()),
    reply(200, coreDoc),
    reply(200, groupsDoc([crdGroup])),
  ]);
  await discovery.resources();
  await clock.tick(10_000);
  for (const name of ['ct', 'crontab', 'CronTab', 'crontabs.stable.example.com']) {
    assert.equal((await discovery.resolve(name)).resource, 'crontabs');
  }
  assert.equal(server.requests.length, 4);
  server.assertConsumed();
  await client.close();
});

test('an unknown subresource of a known resource refreshes discovery once and finds it', async () => {
  const withStatus = {
    ...crdGroup,
    versions: [
      {
        version: 'v1',
        resources: [
          res('crontabs', 'CronTab', { group: 'stable.example.com', short: ['ct'], subs: ['status'] }),
        ],
      },
    ],
  };
  const { server, client, clock, discovery } = await setup([
    reply(200, coreDoc),
    reply(200, groupsDoc([crdGroup])),
    reply(200, coreDoc),
    reply(200, groupsDoc([withStatus])),
  ]);
  assert.deepEqual((await discovery.resolve('ct')).subresources, []);
  await clock.tick(10_000);
  const status = await discovery.resolve('crontabs/status');
  assert.equal(status.resource, 'crontabs');
  assert.equal(status.subresource?.name, 'status');
  assert.equal(server.requests.length, 4);
  server.assertConsumed();
  await client.close();
});

test('an unknown name fails with close matches and refreshes at most once per interval', async () => {
  const { server, client, discovery } = await setup([reply(200, coreDoc), reply(200, groupsDoc())]);
  await assert.rejects(discovery.resolve('deploymnets'), (err: unknown) => {
    assert.ok(err instanceof UnknownResourceError);
    assert.match(
      err.message,
      /does not serve a resource named "deploymnets"; did you mean deployments.apps\?/,
    );
    return true;
  });
  await assert.rejects(
    discovery.resolve('pods/exec'),
    /pods has no subresource "exec" \(it has: log, status\)/,
  );
  assert.equal(server.requests.length, 2);
  await client.close();
});

const legacy: Record<string, object | undefined> = {
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      {
        name: 'pods',
        singularName: 'pod',
        namespaced: true,
        kind: 'Pod',
        verbs: ['get'],
        shortNames: ['po'],
      },
      { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    ],
  },
  '/apis/apps/v1': {
    kind: 'APIResourceList',
    groupVersion: 'apps/v1',
    resources: [
      { name: 'deployments', singularName: '', namespaced: true, kind: 'Deployment', verbs: ['list'] },
    ],
  },
};

/** Answers legacy group-version documents by path; unknown paths get a 503. */
const legacyRoute: Step = (req, res) => {
  const body = legacy[req.url ?? ''];
  if (body === undefined) res.writeHead(503).end('service unavailable');
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

test('legacy discovery is used when the aggregated format is not served, skipping failed group versions', async () => {
  const { server, client, discovery } = await setup([
    reply(200, { kind: 'APIVersions', versions: ['v1'] }),
    reply(200, {
      kind: 'APIGroupList',
      groups: [
        {
          name: 'apps',
          versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
        },
        {
          name: 'metrics.k8s.io',
          versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }],
          preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' },
        },
      ],
    }),
    legacyRoute,
    legacyRoute,
    legacyRoute,
  ]);
  const resources = await discovery.resources();
  assert.deepEqual(
    resources.map((r) => `${r.group}/${r.version}/${r.resource}`),
    ['/v1/pods', 'apps/v1/deployments'],
  );
  assert.deepEqual(
    (await discovery.resolve('po')).subresources.map((s) => s.name),
    ['log'],
  );
  assert.equal((await discovery.resolve('deployment')).kind, 'Deployment');
  assert.equal((await discovery.resolve('pods/log')).subresource?.name, 'log');
  server.assertConsumed();
  await client.close();
});
