import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffObjects, formatDiff, touches } from '../../../src/raven/diff.js';

test('scalar changes, additions and removals are reported by path', () => {
  const diff = diffObjects(
    { spec: { replicas: 2, paused: true }, metadata: { labels: { app: 'web' } } },
    { spec: { replicas: 3 }, metadata: { labels: { app: 'web', 'app.kubernetes.io/name': 'x' } } },
  );
  assert.deepEqual(diff, [
    { path: 'metadata.labels["app.kubernetes.io/name"]', op: 'add', new: 'x' },
    { path: 'spec.paused', op: 'remove', old: true },
    { path: 'spec.replicas', op: 'replace', old: 2, new: 3 },
  ]);
});

test('noise is left out by default and extra paths can be ignored', () => {
  const before = {
    metadata: { resourceVersion: '1', managedFields: [{ a: 1 }], generation: 1 },
    status: { phase: 'Pending' },
  };
  const after = {
    metadata: { resourceVersion: '2', managedFields: [{ a: 2 }], generation: 2 },
    status: { phase: 'Running' },
  };
  assert.deepEqual(diffObjects(before, after), [
    { path: 'status.phase', op: 'replace', old: 'Pending', new: 'Running' },
  ]);
  assert.deepEqual(diffObjects(before, after, { ignore: ['status.*'] }), []);
});

test('lists of named items are matched by name, not position', () => {
  const before = {
    containers: [
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:1' },
    ],
  };
  const after = {
    containers: [
      { name: 'z', image: 'z:1' },
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:2' },
    ],
  };
  assert.deepEqual(diffObjects(before, after), [
    { path: 'containers[name=b].image', op: 'replace', old: 'b:1', new: 'b:2' },
    { path: 'containers[name=z]', op: 'add', new: { name: 'z', image: 'z:1' } },
  ]);
});

test('unnamed lists are compared by position', () => {
  assert.deepEqual(diffObjects({ args: ['-a', '-b'] }, { args: ['-a', '-c', '-d'] }), [
    { path: 'args[1]', op: 'replace', old: '-b', new: '-c' },
    { path: 'args[2]', op: 'add', new: '-d' },
  ]);
});

test('formatting shows old and new values and touches() finds a subtree', () => {
  const diff = diffObjects({ spec: { replicas: 2 } }, { spec: { replicas: 3 } });
  assert.deepEqual(formatDiff(diff), ['spec.replicas: 2 → 3']);
  assert.equal(touches(diff, 'spec'), true);
  assert.equal(touches(diff, 'status'), false);
});

test('a map that appears is shown key by key, so ignored keys inside it stay out', () => {
  const before = { metadata: { name: 'd' } };
  const after = {
    metadata: { name: 'd', annotations: { 'deployment.kubernetes.io/revision': '1', team: 'a' } },
  };
  assert.deepEqual(diffObjects(before, after), [{ path: 'metadata.annotations.team', op: 'add', new: 'a' }]);
  assert.deepEqual(diffObjects(after, before), [
    { path: 'metadata.annotations.team', op: 'remove', old: 'a' },
  ]);
  const onlyNoise = { metadata: { name: 'd', annotations: { 'deployment.kubernetes.io/revision': '1' } } };
  assert.deepEqual(diffObjects(before, onlyNoise), []);
});

test('[*] in an ignore pattern stands for any list item', () => {
  const before = { status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 't1' }] } };
  const after = { status: { conditions: [{ type: 'Ready', status: 'False', lastHeartbeatTime: 't2' }] } };
  assert.deepEqual(diffObjects(before, after, { ignore: ['status.conditions[*].lastHeartbeatTime'] }), [
    { path: 'status.conditions[type=Ready].status', op: 'replace', old: 'True', new: 'False' },
  ]);
});
