import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fingerprint, redact } from '../../../src/raven/model/redact.js';
import { passes } from '../../../src/raven/routing/predicates.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';

const deployments = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
const context = { watcher: 'w', resource: deployments, time: '2026-01-01T00:00:00.000Z' };

test('secret values are replaced and the last-applied annotation that repeats them is dropped', () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 's',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"p":"x"}}', keep: 'me' },
    },
    data: { password: 'aHVudGVyMg==' },
    stringData: { token: 'abc' },
  };
  const safe = redact(secret);
  assert.deepEqual(safe.data, { password: `[redacted] (12 chars, hmac ${fingerprint('aHVudGVyMg==')})` });
  assert.deepEqual(safe.stringData, { token: `[redacted] (3 chars, hmac ${fingerprint('abc')})` });
  assert.deepEqual(safe.metadata.annotations, { keep: 'me' });
  assert.equal(JSON.stringify(safe).includes('aHVudGVyMg'), false);
  assert.equal(secret.data.password, 'aHVudGVyMg==', 'the original is not modified');
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } };
  assert.equal(redact(configMap), configMap);
});

test('a secret change event carries no secret value in object, previous or diff', () => {
  const before = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', resourceVersion: '1' },
    data: { p: 'b2xk' },
  };
  const after = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', resourceVersion: '2' },
    data: { p: 'bmV3bmV3' },
  };
  const event = toChangeEvent(
    { ...context, resource: { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' } },
    { type: 'modified', object: after, previous: before, origin: 'live' },
  );
  const text = JSON.stringify(event);
  assert.equal(text.includes('b2xk') || text.includes('bmV3bmV3'), false);
  assert.deepEqual(event.diff, [
    {
      path: 'data.p',
      op: 'replace',
      old: `[redacted] (4 chars, hmac ${fingerprint('b2xk')})`,
      new: `[redacted] (8 chars, hmac ${fingerprint('bmV3bmV3')})`,
    },
  ]);
});

test('redacting twice changes nothing, so a secret change diffs only the keys that changed', () => {
  const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };
  const before = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', resourceVersion: '1' },
    data: { password: 'aHVudGVyMg==', token: 'dG9rZW4=' },
  };
  const once = redact(before);
  assert.deepEqual(redact(once), once);
  // The watcher keeps objects redacted: `previous` arrives redacted and is redacted again.
  const relabelled = { ...before, metadata: { name: 's', resourceVersion: '2', labels: { a: 'b' } } };
  const label = toChangeEvent(
    { ...context, resource: secrets },
    { type: 'modified', object: relabelled, previous: once, origin: 'live' },
  );
  assert.deepEqual(label.diff, [{ path: 'metadata.labels.a', op: 'add', new: 'b' }]);
  const rotated = {
    ...before,
    metadata: { name: 's', resourceVersion: '3' },
    data: { ...before.data, token: 'bG9uZ2VyLXRva2Vu' },
  };
  const rotation = toChangeEvent(
    { ...context, resource: secrets },
    { type: 'modified', object: rotated, previous: once, origin: 'live' },
  );
  assert.deepEqual(rotation.diff, [
    {
      path: 'data.token',
      op: 'replace',
      old: `[redacted] (8 chars, hmac ${fingerprint('dG9rZW4=')})`,
      new: `[redacted] (16 chars, hmac ${fingerprint('bG9uZ2VyLXRva2Vu')})`,
    },
  ]);
});

const modified = (before: object, after: object) =>
  toChangeEvent(context, { type: 'modified', object: after, previous: before, origin: 'live' });

test('status-only changes are dropped when asked, spec changes pass', () => {
  const base = { metadata: { name: 'd', generation: 1 }, spec: { replicas: 1 }, status: { ready: 0 } };
  const statusOnly = modified(base, { ...base, status: { ready: 1 } });
  const specChange = modified(base, {
    ...base,
    metadata: { name: 'd', generation: 2 },
    spec: { replicas: 2 },
  });
  assert.equal(passes(statusOnly, { ignoreStatusOnly: true }), false);
  assert.equal(passes(statusOnly, {}), true);
  assert.equal(passes(specChange, { ignoreStatusOnly: true }), true);
  assert.equal(passes(statusOnly, { generationChanged: true }), false);
  assert.equal(passes(specChange, { generationChanged: true }), true);
});

test('field predicates pass only changes under the named paths; noise-only changes never pass', () => {
  const base = { metadata: { name: 'd', resourceVersion: '1' }, spec: { replicas: 1, paused: false } };
  const replicas = modified(base, { ...base, spec: { replicas: 2, paused: false } });
  const paused = modified(base, { ...base, spec: { replicas: 1, paused: true } });
  const noise = modified(base, { ...base, metadata: { name: 'd', resourceVersion: '2' } });
  assert.equal(passes(replicas, { fields: ['spec.replicas'] }), true);
  assert.equal(passes(paused, { fields: ['spec.replicas'] }), false);
  assert.equal(passes(noise, {}), false);
  const added = toChangeEvent(context, { type: 'added', object: base, origin: 'live' });
  assert.equal(passes(added, { fields: ['spec.replicas'], generationChanged: true }), true);
});
