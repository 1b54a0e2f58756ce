import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultRavenConfig } from '../../../../src/raven/config/default-raven-config.js';
import { parseNamespaceScope } from '../../../../src/watch/scope/namespace-scope.js';

test('the default config watches the common workloads outside kube-* namespaces', () => {
  const config = defaultRavenConfig({ identity: 'raven-0' });
  assert.deepEqual(
    config.watchers.map((w) => w.resource),
    [
      'deployments.apps',
      'statefulsets.apps',
      'daemonsets.apps',
      'pods',
      'services',
      'jobs.batch',
      'cronjobs.batch',
    ],
  );
  for (const watcher of config.watchers) {
    const scope = parseNamespaceScope(watcher.namespaces);
    assert.equal(scope.matches('kube-system'), false);
    assert.equal(scope.matches('default'), true);
  }
});

test('the default config keeps checkpoints in memory and prints to stdout', () => {
  const config = defaultRavenConfig();
  assert.deepEqual(config.checkpoint, { type: 'memory' });
  assert.deepEqual(
    config.sinks.map((s) => [s.name, s.type]),
    [['console', 'stdout']],
  );
  assert.deepEqual(config.routes, [
    {
      watchers: config.watchers.map((w) => w.name),
      sinks: ['console'],
      events: ['added', 'modified', 'deleted'],
      drop: [],
      match: [],
      select: 'all',
      routes: [],
    },
  ]);
});

test('the default config drops status-only changes only where status summarises other watched objects', () => {
  const ignoring = defaultRavenConfig()
    .watchers.filter((w) => w.type === 'resource' && w.predicates.ignoreStatusOnly)
    .map((w) => w.name);
  assert.deepEqual(ignoring, ['deployments', 'statefulsets', 'daemonsets', 'cronjobs']);
});

test('each call returns a fresh copy', () => {
  const a = defaultRavenConfig();
  a.watchers.pop();
  assert.equal(defaultRavenConfig().watchers.length, 7);
});
