import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffObjects, formatDiff, touches } from '../../../src/raven/model/diff.js';

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

/** A 40-line file, with line 21 replaced when `changed`. */
function configFile(changed: boolean): string {
  const lines = Array.from({ length: 40 }, (_, i) => `setting_${i + 1} = ${i + 1}`);
  if (changed) lines[20] = 'setting_21 = 2100';
  return `${lines.join('\n')}\n`;
}

test('a change inside a multi-line string is a line diff with an @@ hunk and 3 lines of context', () => {
  const diff = diffObjects(
    { data: { 'app.conf': configFile(false) } },
    { data: { 'app.conf': configFile(true) } },
  );
  assert.deepEqual(formatDiff(diff), [
    'data["app.conf"]: text changed (40 → 40 lines)',
    '  @@ -18,7 +18,7 @@',
    '   setting_18 = 18',
    '   setting_19 = 19',
    '   setting_20 = 20',
    '  -setting_21 = 21',
    '  +setting_21 = 2100',
    '   setting_22 = 22',
    '   setting_23 = 23',
    '   setting_24 = 24',
  ]);
});

test('separate changes in one string get separate hunks; added lines count in the summary', () => {
  const before = configFile(false);
  const after = before
    .replace('setting_2 = 2\n', 'setting_2 = 20\n')
    .replace('setting_39 = 39\n', 'setting_39 = 39\nextra = 1\n');
  const lines = formatDiff([{ path: 'data.f', op: 'replace', old: before, new: after }]);
  assert.equal(lines[0], 'data.f: text changed (40 → 41 lines)');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('  @@')),
    ['  @@ -1,5 +1,5 @@', '  @@ -37,4 +37,5 @@'],
  );
  assert.ok(lines.includes('  +extra = 1'));
});

test('a long one-line string is shown around its first difference, never cut before it', () => {
  const head = 'a'.repeat(300);
  const [line] = formatDiff([
    { path: 'spec.token', op: 'replace', old: `${head}OLD${head}`, new: `${head}NEW${head}` },
  ]);
  assert.match(line ?? '', /^spec\.token: …a{40}OLD.*a{40}… → …a{40}NEW.*a{40}…$/);
  assert.ok((line ?? '').length < 300);
});

test('equal subtrees report nothing whatever their key order; only what differs deep inside is reported', () => {
  const container = (image: string): Record<string, unknown> => ({
    name: 'app',
    image,
    env: [
      { name: 'A', value: '1' },
      { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    ports: [{ containerPort: 8080, protocol: 'TCP' }],
  });
  const before = {
    metadata: { name: 'web', labels: { app: 'web', tier: 'front' }, resourceVersion: '1' },
    spec: { containers: [container('web:1')], volumes: [{ name: 'v', emptyDir: {} }], tolerations: [1, 2] },
  };
  const after = {
    spec: { tolerations: [1, 2], volumes: [{ emptyDir: {}, name: 'v' }], containers: [container('web:2')] },
    metadata: { resourceVersion: '2', labels: { tier: 'front', app: 'web' }, name: 'web' },
  };
  assert.deepEqual(diffObjects(before, after), [
    { path: 'spec.containers[name=app].image', op: 'replace', old: 'web:1', new: 'web:2' },
  ]);
  assert.deepEqual(diffObjects(before, structuredClone(before)), []);
  // A key present as undefined on one side only is no change either, as before.
  assert.deepEqual(diffObjects({ a: { b: 1 } }, { a: { b: 1, c: undefined } }), []);
});

test('each ignore list is honoured as given, however many patterns and calls there are', () => {
  const before = { a: { x: 1, y: 1 }, b: [{ t: 1 }, { t: 1 }], c: 1 };
  const after = { a: { x: 2, y: 2 }, b: [{ t: 2 }, { t: 2 }], c: 2 };
  const paths = (ignore: string[], replaceDefaults?: boolean): string[] =>
    diffObjects(before, after, { ignore, ...(replaceDefaults === undefined ? {} : { replaceDefaults }) }).map(
      (d) => d.path,
    );
  assert.deepEqual(paths(['a.x', 'b[*].t', 'c']), ['a.y']);
  const list = ['a.*'];
  assert.deepEqual(paths(list), ['b[0].t', 'b[1].t', 'c']);
  list.push('c');
  assert.deepEqual(paths(list), ['b[0].t', 'b[1].t'], 'the same list, changed since, is read again');
  assert.deepEqual(paths([]), ['a.x', 'a.y', 'b[0].t', 'b[1].t', 'c']);
  assert.deepEqual(
    diffObjects(
      { metadata: { generation: 1 } },
      { metadata: { generation: 2 } },
      { replaceDefaults: true, ignore: [] },
    ),
    [{ path: 'metadata.generation', op: 'replace', old: 1, new: 2 }],
  );
});
