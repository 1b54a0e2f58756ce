import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedInformers, specKey } from '../../../src/informer/shared-informers.js';
import type { WatchTransport } from '../../../src/watch/watcher.js';

const pods = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const deployments = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };
const transport: WatchTransport = {
  stream: () => Promise.reject(new Error('not started in this test')),
};

test('the same resource, scope and selectors share one informer', () => {
  const informers = new SharedInformers({ transport });
  const a = informers.informerFor({ resource: pods, namespaces: ['b', 'a'], labelSelector: 'app = web' });
  const b = informers.informerFor({ resource: pods, namespaces: ['a', 'b'], labelSelector: 'app=web' });
  const c = informers.informerFor({ resource: pods, namespaces: ['a', 'b'], labelSelector: 'app=api' });
  const d = informers.informerFor({
    resource: deployments,
    namespaces: ['a', 'b'],
    labelSelector: 'app=web',
  });
  assert.equal(a, b, 'normalised scope and selector are one watch');
  assert.notEqual(a, c);
  assert.notEqual(a, d);
  assert.equal(informers.informers.length, 3);
});

test('asking for an index the shared informer lacks is a clear error', () => {
  const informers = new SharedInformers({ transport });
  informers.informerFor({ resource: pods }, { byNode: () => [] });
  informers.informerFor({ resource: pods }, { byNode: () => [] });
  assert.throws(
    () => informers.informerFor({ resource: pods }, { byOwner: () => [] }),
    /without the indexes byOwner/,
  );
});

test('the spec key names the resource, scope and normalised selectors', () => {
  assert.equal(
    specKey({
      resource: deployments,
      namespaces: 'shop',
      labelSelector: 'tier in (a,b)',
      fieldSelector: 'metadata.name==x',
    }),
    'apps/v1/deployments in shop -l tier in (a,b) --field-selector metadata.name=x',
  );
  assert.equal(specKey({ resource: pods }), 'core/v1/pods');
});
