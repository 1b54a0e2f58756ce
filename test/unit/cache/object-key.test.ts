import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RavenError } from '../../../src/errors/raven-error.js';
import { makeObjectKey, objectKey, parseObjectKey, toObjectKey } from '../../../src/client/object-key.js';

test('a namespaced object is keyed namespace/name and a cluster-scoped one by name alone', () => {
  assert.equal(objectKey({ metadata: { namespace: 'default', name: 'web-0' } }), 'default/web-0');
  assert.equal(objectKey({ metadata: { name: 'node-a' } }), 'node-a');
  assert.equal(objectKey({ metadata: { namespace: '', name: 'node-a' } }), 'node-a');
});

test('an object without a name cannot be keyed', () => {
  assert.throws(
    () => objectKey({ metadata: { namespace: 'default' } }),
    (err: unknown) => err instanceof RavenError && err.code === 'ERR_INVALID_OBJECT_KEY',
  );
  assert.throws(() => objectKey({}), RavenError);
});

test('a key parses back into the namespace and name it was made of', () => {
  assert.deepEqual(parseObjectKey(makeObjectKey('web-0', 'default')), {
    namespace: 'default',
    name: 'web-0',
  });
  assert.deepEqual(parseObjectKey(makeObjectKey('node-a')), { namespace: undefined, name: 'node-a' });
});

test('malformed keys and names are rejected with a message saying what is valid', () => {
  for (const bad of ['', '/', 'a/', '/b', 'a/b/c']) {
    assert.throws(() => parseObjectKey(bad), /expected "name" or "namespace\/name"/, bad);
  }
  assert.throws(() => makeObjectKey('a/b'), /contain no "\/"/);
  assert.throws(() => toObjectKey('a/b/c'), RavenError);
  assert.equal(toObjectKey('ns/x'), 'ns/x');
});
