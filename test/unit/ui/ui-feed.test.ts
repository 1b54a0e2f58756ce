/**
 * The web view's feed (`ui-feed.ts`) without a socket: the order a page connecting late gets the
 * objects' lines in, who made a modification, and an outage's reports as notices.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiResource } from '../../../src/client/api-resource.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { UiFeed, type UiMessage } from '../../../src/ui/ui-feed.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import type { WatcherStatus } from '../../../src/watch/watcher-events.js';

const configmaps: ApiResource = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  singular: 'configmap',
  kind: 'ConfigMap',
  namespaced: true,
  verbs: ['list', 'watch'],
  shortNames: ['cm'],
  categories: [],
  subresources: [],
  preferred: true,
};

function cm(name: string, data: Record<string, string>): KubeObject {
  return { kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: `uid-${name}` }, data } as KubeObject;
}

function fixture() {
  const feed = new UiFeed({ clock: new FakeClock() });
  const source = feed.source('configmaps', configmaps, () => ({}) as WatcherStatus);
  const received: UiMessage[] = [];
  return { feed, source, received, listen: () => feed.subscribe(0, (m) => received.push(m)) };
}

test('a page connecting late gets each object’s latest line, in the order the changes happened', () => {
  const { source, received, listen } = fixture();
  source.publish('ADDED', cm('a', { v: '1' }));
  source.publish('ADDED', cm('b', { v: '1' }));
  source.publish('MODIFIED', cm('a', { v: '2' }), cm('a', { v: '1' }));
  listen();
  assert.deepEqual(
    received.map((m) => (m.event === 'change' ? `${m.data.seq} ${m.data.type} ${m.data.name}` : m.event)),
    ['reset', '2 ADDED b', '3 MODIFIED a'],
  );
});

test('a modification carries who made it, as data and as the lines the page shows', () => {
  const { source, received, listen } = fixture();
  listen();
  source.publish('MODIFIED', cm('a', { v: '2' }), cm('a', { v: '1' }), [
    { manager: 'kubectl-edit', operation: 'Update', time: '2026-11-28T10:42:07Z', paths: ['data.v'] },
  ]);
  const change = received.find((m) => m.event === 'change');
  assert.ok(change?.event === 'change');
  assert.deepEqual(change.data.diff, [['data.v: "1" → "2"']]);
  assert.deepEqual(change.data.by, ['by kubectl-edit (Update) at 10:42:07: data.v']);
  assert.equal(change.data.changedBy?.[0]?.manager, 'kubectl-edit');
});

test('an outage’s reports are notices that say which report they are', () => {
  const { feed, received, listen } = fixture();
  listen();
  feed.outage('configmaps', {
    kind: 'started',
    message: 'cannot reach 127.0.0.1:6443 (connection refused); retrying',
    attempts: 1,
    lastError: 'connection refused',
    errorKind: 'transport',
  });
  assert.deepEqual(
    received.map((m) => (m.event === 'notice' ? [m.data.watcher, m.data.outage, m.data.message] : m.event)),
    ['reset', ['configmaps', 'started', 'cannot reach 127.0.0.1:6443 (connection refused); retrying']],
  );
});
