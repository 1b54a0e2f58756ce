import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiResource } from '../../../src/client/api-resource.js';
import type { RequestOptions } from '../../../src/client/kube-client.js';
import { estimateListTotal } from '../../../src/cli/list-total.js';

const resource = (namespaced: boolean): ApiResource => ({
  group: '',
  version: 'v1',
  resource: namespaced ? 'configmaps' : 'nodes',
  singular: '',
  kind: namespaced ? 'ConfigMap' : 'Node',
  namespaced,
  verbs: ['list'],
  shortNames: [],
  categories: [],
  subresources: [],
  preferred: true,
});

/** Answers each list with the page `answer` gives for its path, and records the requests. */
function requester(answer: (path: string) => object) {
  const requests: RequestOptions[] = [];
  return {
    requests,
    namespace: 'default',
    request: <T>(opts: RequestOptions): Promise<T> => {
      requests.push(opts);
      return Promise.resolve(answer(opts.path) as T);
    },
  };
}

const signal = new AbortController().signal;
const page = (items: number, meta: object) => ({
  items: Array.from({ length: items }, () => ({})),
  metadata: meta,
});

test('the total is the one item asked for plus remainingItemCount, summed over namespaces', async () => {
  const client = requester((path) =>
    page(1, { continue: 'x', remainingItemCount: path.includes('/namespaces/a/') ? 2999 : 9 }),
  );
  assert.equal(await estimateListTotal(client, resource(true), { namespaces: ['a', 'b'], signal }), 3010);
  assert.deepEqual(
    client.requests.map((r) => [r.path, r.query?.limit]),
    [
      ['/api/v1/namespaces/a/configmaps', 1],
      ['/api/v1/namespaces/b/configmaps', 1],
    ],
  );
});

test('a list that fits in one item is counted exactly; a cluster-scoped resource is asked once', async () => {
  assert.equal(
    await estimateListTotal(
      requester(() => page(0, {})),
      resource(true),
      { namespaces: undefined, signal },
    ),
    0,
  );
  const nodes = requester(() => page(1, { continue: 'x', remainingItemCount: 4 }));
  assert.equal(await estimateListTotal(nodes, resource(false), { namespaces: ['a', 'b'], signal }), 5);
  assert.deepEqual(
    nodes.requests.map((r) => r.path),
    ['/api/v1/nodes'],
  );
});

test('no estimate without a count, with selectors or patterns, or when the request fails', async () => {
  const noCount = requester(() => page(1, { continue: 'x' }));
  assert.equal(await estimateListTotal(noCount, resource(true), { namespaces: ['a'], signal }), undefined);
  const unused = requester(() => assert.fail('no request is made'));
  for (const scope of [
    { labelSelector: 'a=b' },
    { fieldSelector: 'metadata.name=x' },
    { namespaces: ['team-*'] },
  ])
    assert.equal(
      await estimateListTotal(unused, resource(true), { namespaces: ['a'], signal, ...scope }),
      undefined,
    );
  const failing = { namespace: 'default', request: () => Promise.reject(new Error('refused')) };
  assert.equal(await estimateListTotal(failing, resource(true), { namespaces: ['a'], signal }), undefined);
});
