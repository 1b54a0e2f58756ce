import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiResource } from '../../../src/client/api-resource.js';
import { closeMatches } from '../../../src/client/resource-matcher.js';
import { suggest } from '../../../src/util/did-you-mean.js';

const resource = (resource: string, kind: string, shortNames: string[], group = ''): ApiResource => ({
  group,
  version: 'v1',
  resource,
  singular: kind.toLowerCase(),
  kind,
  namespaced: true,
  verbs: ['list', 'watch'],
  shortNames,
  categories: [],
  subresources: [],
  preferred: true,
});

const served = [
  resource('pods', 'Pod', ['po']),
  resource('services', 'Service', ['svc']),
  resource('deployments', 'Deployment', ['deploy'], 'apps'),
];

test('a misspelled resource is suggested by edit distance with transpositions: pdos and podz both find pods', () => {
  assert.deepEqual(closeMatches(served, 'pdos'), ['pods']);
  assert.deepEqual(closeMatches(served, 'podz'), ['pods']);
  assert.deepEqual(closeMatches(served, 'depoly'), ['deployments.apps']);
  assert.deepEqual(closeMatches(served, 'xyzzy'), []);
});

test('config keys and resource names share one edit distance', () => {
  assert.equal(suggest('pdos', ['pods', 'services']), 'pods');
});
