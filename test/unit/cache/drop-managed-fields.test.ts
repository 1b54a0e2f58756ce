import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { dropManagedFields } from '../../../src/watch/decode/drop-managed-fields.js';

test('managedFields are dropped without modifying the input object', () => {
  const input: ConfigMap = {
    metadata: { name: 'c', labels: { a: 'b' }, managedFields: [{ manager: 'kubectl' }] },
    data: { k: 'v' },
  };
  const out = dropManagedFields(input);
  assert.deepEqual(out, { metadata: { name: 'c', labels: { a: 'b' } }, data: { k: 'v' } });
  assert.equal(input.metadata?.managedFields?.length, 1);
});

test('an object without managedFields is returned as it is', () => {
  const input: ConfigMap = { metadata: { name: 'c' } };
  assert.equal(dropManagedFields(input), input);
});
