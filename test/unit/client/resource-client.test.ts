import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestOptions } from '../../../src/client/kube-client.js';
import { ResourceClient, type ResourceRequester } from '../../../src/client/resource-client.js';
import { resourcePath } from '../../../src/client/resource-path.js';
import { withQuery } from '../../../src/client/request-path.js';

const pods = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const deployments = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };
const nodes = { group: '', version: 'v1', resource: 'nodes', namespaced: false };

/** A requester that records each call as `METHOD path?query` and answers from a list. */
class FakeRequester implements ResourceRequester {
  readonly namespace = 'home';
  calls: RequestOptions[] = [];
  answers: unknown[] = [];

  request<T>(opts: RequestOptions): Promise<T> {
    this.calls.push(opts);
    return Promise.resolve((this.answers.shift() ?? {}) as T);
  }

  get lines(): string[] {
    return this.calls.map((c) => `${c.method} ${withQuery(c.path, c.query)}`);
  }
}

test('paths cover the core group, named groups, namespaces, cluster scope and subresources', () => {
  assert.equal(resourcePath(pods), '/api/v1/pods');
  assert.equal(
    resourcePath(pods, { namespace: 'a', name: 'web', subresource: 'log' }),
    '/api/v1/namespaces/a/pods/web/log',
  );
  assert.equal(
    resourcePath(deployments, { namespace: 'a', name: 'api', subresource: 'scale' }),
    '/apis/apps/v1/namespaces/a/deployments/api/scale',
  );
  assert.equal(resourcePath(nodes, { namespace: 'ignored', name: 'n1' }), '/api/v1/nodes/n1');
  assert.equal(resourcePath(pods, { namespace: 'a b', name: 'x/y' }), '/api/v1/namespaces/a%20b/pods/x%2Fy');
  assert.throws(() => resourcePath(pods, { subresource: 'status' }), /needs an object name/);
});

test('single-object calls default to the client namespace and lists default to all namespaces', async () => {
  const fake = new FakeRequester();
  const client = new ResourceClient(fake, pods);
  await client.get('web');
  await client.get('web', { namespace: 'other', subresource: 'status' });
  await client.list({
    labelSelector: 'app=web',
    fieldSelector: 'status.phase=Running',
    resourceVersion: '0',
    resourceVersionMatch: 'NotOlderThan',
  });
  await client.list({ namespace: 'a', limit: 10, continue: 'tok' });
  assert.deepEqual(fake.lines, [
    'GET /api/v1/namespaces/home/pods/web',
    'GET /api/v1/namespaces/other/pods/web/status',
    'GET /api/v1/pods?labelSelector=app%3Dweb&fieldSelector=status.phase%3DRunning&resourceVersion=0&resourceVersionMatch=NotOlderThan',
    'GET /api/v1/namespaces/a/pods?limit=10&continue=tok',
  ]);
});

test('listAll follows continue tokens and drops resourceVersion after the first page', async () => {
  const fake = new FakeRequester();
  fake.answers = [
    { metadata: { continue: 'c1' }, items: [{ metadata: { name: 'a' } }] },
    { metadata: { continue: 'c2' }, items: [{ metadata: { name: 'b' } }] },
    { metadata: {}, items: [{ metadata: { name: 'c' } }] },
  ];
  const client = new ResourceClient(fake, pods);
  const names: (string | undefined)[] = [];
  for await (const pod of client.listAll({ namespace: 'a', limit: 1, resourceVersion: '0' }))
    names.push(pod.metadata?.name);
  assert.deepEqual(names, ['a', 'b', 'c']);
  assert.deepEqual(fake.lines, [
    'GET /api/v1/namespaces/a/pods?limit=1&resourceVersion=0',
    'GET /api/v1/namespaces/a/pods?limit=1&continue=c1',
    'GET /api/v1/namespaces/a/pods?limit=1&continue=c2',
  ]);
});

test('create and replace send the object with dryRun and fieldManager', async () => {
  const fake = new FakeRequester();
  const client = new ResourceClient(fake, deployments);
  const body = { metadata: { name: 'api', namespace: 'prod' } };
  await client.create(body, { dryRun: true, fieldManager: 'raven' });
  await client.replace('api', body, { fieldValidation: 'Strict' });
  await client.replace('api', { spec: { replicas: 2 } } as never, {
    namespace: 'prod',
    subresource: 'scale',
  });
  assert.deepEqual(fake.lines, [
    'POST /apis/apps/v1/namespaces/prod/deployments?dryRun=All&fieldManager=raven',
    'PUT /apis/apps/v1/namespaces/prod/deployments/api?fieldValidation=Strict',
    'PUT /apis/apps/v1/namespaces/prod/deployments/api/scale',
  ]);
  assert.deepEqual(fake.calls[0]?.body, body);
});

test('each patch type sends its content type and server-side apply needs a field manager', async () => {
  const fake = new FakeRequester();
  const client = new ResourceClient(fake, deployments);
  await client.patch('api', { spec: { replicas: 3 } }, { type: 'merge' });
  await client.patch('api', { spec: { replicas: 3 } }, { type: 'strategic' });
  await client.patch('api', [{ op: 'replace', path: '/spec/replicas', value: 3 }], {
    type: 'json',
    subresource: 'scale',
  });
  await client.apply(
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' } },
    { fieldManager: 'raven', force: true },
  );
  assert.deepEqual(
    fake.calls.map((c) => c.contentType),
    [
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/json-patch+json',
      'application/apply-patch+yaml',
    ],
  );
  assert.equal(fake.lines[2], 'PATCH /apis/apps/v1/namespaces/home/deployments/api/scale');
  assert.equal(
    fake.lines[3],
    'PATCH /apis/apps/v1/namespaces/home/deployments/api?fieldManager=raven&force=true',
  );
  await assert.rejects(client.patch('api', {}, { type: 'apply' }), /server-side apply needs a fieldManager/);
});

test('delete sends preconditions, propagation policy, grace period and dry run in DeleteOptions', async () => {
  const fake = new FakeRequester();
  const client = new ResourceClient(fake, pods);
  await client.delete('web', {
    namespace: 'a',
    preconditions: { uid: 'u-1', resourceVersion: '42' },
    propagationPolicy: 'Foreground',
    gracePeriodSeconds: 0,
    dryRun: true,
  });
  await client.deleteCollection({ labelSelector: 'app=old' });
  assert.deepEqual(fake.lines, [
    'DELETE /api/v1/namespaces/a/pods/web',
    'DELETE /api/v1/namespaces/home/pods?labelSelector=app%3Dold',
  ]);
  assert.deepEqual(fake.calls[0]?.body, {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    preconditions: { uid: 'u-1', resourceVersion: '42' },
    propagationPolicy: 'Foreground',
    gracePeriodSeconds: 0,
    dryRun: ['All'],
  });
});

test('a cluster-scoped resource never gets a namespace in its path', async () => {
  const fake = new FakeRequester();
  const client = new ResourceClient(fake, nodes);
  await client.get('n1', { namespace: 'a' });
  await client.list({ namespace: 'a' });
  assert.deepEqual(fake.lines, ['GET /api/v1/nodes/n1', 'GET /api/v1/nodes']);
});
