import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { deepFreeze, mutableCopy, shouldFreeze } from '../../../src/cache/deep-freeze.js';

test('every nested object and array is frozen', () => {
  const value = deepFreeze({ a: { b: [{ c: 1 }] } });
  assert.equal(Object.isFrozen(value.a.b[0]), true);
  assert.throws(() => {
    (value.a.b as { c: number }[]).push({ c: 2 });
  }, TypeError);
});

test('a mutable copy of a frozen object can be changed without touching the original', () => {
  const frozen = deepFreeze({ labels: { app: 'web' } });
  const copy = mutableCopy(frozen);
  copy.labels.app = 'db';
  assert.equal(frozen.labels.app, 'web');
});

test('development mode freezes only when NODE_ENV is development or test', () => {
  assert.equal(shouldFreeze('development', 'development'), true);
  assert.equal(shouldFreeze('development', 'test'), true);
  assert.equal(shouldFreeze('development', undefined), false);
  assert.equal(shouldFreeze('development', 'production'), false);
  assert.equal(shouldFreeze('development', 'staging'), false);
  assert.equal(shouldFreeze('always', 'production'), true);
  assert.equal(shouldFreeze('never', undefined), false);
});

test('a mutable copy of a cached Pod type-checks as a plain Pod', () => {
  const cached = deepFreeze<Pod>({ metadata: { name: 'a', labels: { app: 'web' } } });
  const copy: Pod = mutableCopy(cached);
  copy.metadata = { ...copy.metadata, labels: { app: 'db' } };
  assert.equal(cached.metadata?.labels?.app, 'web');
});
