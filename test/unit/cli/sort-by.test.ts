import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { naturalCompare, parseSortBy, sortByField } from '../../../src/cli/sort-by.js';
import { UsageError } from '../../../src/cli/usage-error.js';
import { labelHeader, labelsText } from '../../../src/cli/format-watch.js';
import { tableOptions } from '../../../src/cli/cluster-target.js';

const item = (name: string, extra: Record<string, unknown> = {}): { object: KubeObject } => ({
  object: { metadata: { name }, ...extra },
});
const names = (items: { object: KubeObject }[] | string): unknown =>
  typeof items === 'string' ? items : items.map((i) => i.object.metadata?.name);

test('--sort-by takes kubectl’s path forms and names the path as kubectl does', () => {
  for (const form of ['.metadata.name', '{.metadata.name}', 'metadata.name', ' {.metadata.name} '])
    assert.equal(parseSortBy(form).text, '{.metadata.name}', form);
  assert.throws(() => parseSortBy('{.metadata[name'), UsageError);
});

test('sorts text in natural order, numbers by value, and objects without the field first', () => {
  const pods = [item('web-10'), item('web-2'), item('web-1')];
  assert.deepEqual(names(sortByField(pods, parseSortBy('.metadata.name'))), ['web-1', 'web-2', 'web-10']);
  const sized = [item('a', { spec: { replicas: 10 } }), item('b'), item('c', { spec: { replicas: 9 } })];
  assert.deepEqual(names(sortByField(sized, parseSortBy('.spec.replicas'))), ['b', 'c', 'a']);
  const times = [
    item('late', { metadata: { name: 'late', creationTimestamp: '2026-11-28T12:00:10Z' } }),
    item('early', { metadata: { name: 'early', creationTimestamp: '2026-11-28T12:00:09Z' } }),
  ];
  assert.deepEqual(names(sortByField(times, parseSortBy('{.metadata.creationTimestamp}'))), [
    'early',
    'late',
  ]);
});

test('keeps the order of equal values, and says so when no object has the field', () => {
  const items = [
    item('b', { data: { x: '1' } }),
    item('a', { data: { x: '1' } }),
    item('c', { data: { x: '0' } }),
  ];
  assert.deepEqual(names(sortByField(items, parseSortBy('.data.x'))), ['c', 'b', 'a']);
  assert.equal(
    sortByField(items, parseSortBy('.spec.none')),
    'couldn\'t find any field with path "{.spec.none}" in the list of objects',
  );
  assert.deepEqual(sortByField([], parseSortBy('.spec.none')), []);
});

test('natural order compares digit runs as numbers and the rest by code unit', () => {
  const sorted = ['a10', 'a9', 'b1', 'a', 'A2'].sort(naturalCompare);
  assert.deepEqual(sorted, ['A2', 'a', 'a9', 'a10', 'b1']);
});

test('-L columns are headed by the key’s last part in capitals; --show-labels prints <none> for none', () => {
  assert.equal(labelHeader('app.kubernetes.io/name'), 'NAME');
  assert.equal(labelHeader('tier'), 'TIER');
  assert.equal(labelsText({ metadata: { labels: { a: '1', b: '2' } } }), 'a=1,b=2');
  assert.equal(labelsText({ metadata: {} }), '<none>');
  assert.deepEqual(tableOptions({ 'label-columns': ['app', 'tier,app', 'version'] }).labelColumns, [
    'app',
    'tier',
    'version',
  ]);
  assert.throws(() => tableOptions({ 'label-columns': ['app,'] }), /-L takes label keys/);
});
