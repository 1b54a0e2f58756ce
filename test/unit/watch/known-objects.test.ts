import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/watch/decode/watch-event.js';
import { KnownObjects } from '../../../src/watch/known-objects.js';
import { pod } from './fake-transport.js';

function known(names: string[]): KnownObjects<KubeObject> {
  const objects = new KnownObjects<KubeObject>({ keepObjects: false, dropManagedFields: false });
  for (const name of names) objects.set(`ns/${name}`, pod(name, '1'), undefined, false);
  return objects;
}

const unlistedKeys = (objects: KnownObjects<KubeObject>): string[] => objects.unlisted().map(([key]) => key);

test('a list that saw every known object leaves nothing unlisted', () => {
  const objects = known(['a', 'b', 'c']);
  objects.beginList();
  for (const key of ['ns/a', 'ns/b', 'ns/c', 'ns/a']) objects.listed(objects.get(key) ?? assert.fail(key));
  assert.deepEqual(unlistedKeys(objects), []);
});

test('what a list did not see is unlisted, and a new list starts from nothing seen', () => {
  const objects = known(['a', 'b', 'c']);
  objects.beginList();
  objects.listed(objects.get('ns/b') ?? assert.fail());
  assert.deepEqual(unlistedKeys(objects), ['ns/a', 'ns/c']);
  objects.beginList();
  objects.listed(objects.get('ns/a') ?? assert.fail());
  assert.deepEqual(unlistedKeys(objects), ['ns/b', 'ns/c']);
});

test('an object the list saw and that is then deleted does not hide one it did not see', () => {
  const objects = known(['a', 'b', 'c']);
  objects.beginList();
  objects.listed(objects.get('ns/a') ?? assert.fail());
  objects.listed(objects.get('ns/b') ?? assert.fail());
  objects.delete('ns/a');
  // Two entries left, one of them seen: counting alone would say "all seen" if the delete were not counted.
  objects.set('ns/d', pod('d', '2'), undefined, false);
  objects.listed(objects.get('ns/d') ?? assert.fail());
  assert.deepEqual(unlistedKeys(objects), ['ns/c']);
});

test('an object added outside the list (a watch event) is unlisted', () => {
  const objects = known(['a']);
  objects.beginList();
  objects.listed(objects.get('ns/a') ?? assert.fail());
  objects.set('ns/e', pod('e', '3'), undefined, false);
  assert.deepEqual(unlistedKeys(objects), ['ns/e']);
});

test('unchanged marks what it finds unchanged only when asked to', () => {
  const objects = known(['a', 'b']);
  objects.beginList();
  const peek = { name: 'a', namespace: 'ns', resourceVersion: '1', uid: 'uid-a' };
  assert.equal(objects.unchanged(peek), true);
  assert.deepEqual(unlistedKeys(objects), ['ns/a', 'ns/b']);
  assert.equal(objects.unchanged(peek, true), true);
  assert.equal(objects.unchanged({ ...peek, name: 'b', uid: 'uid-b', resourceVersion: '7' }, true), false);
  assert.deepEqual(unlistedKeys(objects), ['ns/b']);
});

test('entries deleted before any list (a resume, then watch events) leave the first list counting right', () => {
  const objects = known(['a', 'b', 'c']);
  objects.delete('ns/a');
  objects.beginList();
  objects.listed(objects.get('ns/b') ?? assert.fail());
  assert.deepEqual(unlistedKeys(objects), ['ns/c']);
  objects.listed(objects.get('ns/c') ?? assert.fail());
  assert.deepEqual(unlistedKeys(objects), []);
});
