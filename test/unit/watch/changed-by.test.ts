import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedBy, parsePath } from '../../../src/watch/changed-by.js';
import {
  changedFieldManagers,
  scanManagedFieldsBytes,
  scanManagedFieldsObject,
  type FieldManagerChange,
} from '../../../src/watch/field-managers.js';
import { KnownObjects } from '../../../src/watch/known-objects.js';
import type { KubeObject } from '../../../src/watch/decode/watch-event.js';

interface Entry {
  manager: string;
  operation: string;
  time: string;
  fieldsV1: unknown;
  subresource?: string;
}

const applyFields = {
  'f:metadata': { 'f:labels': { 'f:app': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:selector': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:args': {} },
        },
        'f:tolerations': {},
      },
    },
  },
};
const statusFields = {
  'f:status': {
    'f:conditions': {
      '.': {},
      'k:{"type":"Available"}': { '.': {}, 'f:status': {}, 'f:type': {}, 'f:lastUpdateTime': {} },
    },
    'f:observedGeneration': {},
    'f:replicas': {},
  },
};
const labelFields = { 'f:metadata': { 'f:labels': { 'f:team': {}, 'f:tier': {} } } };
const finalizerFields = { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"example.com/keep"': {} } } };

function deployment(entries: Entry[], extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      resourceVersion: '5',
      labels: { app: 'web', team: 'a' },
      finalizers: ['example.com/keep'],
      managedFields: entries.map((e) => ({
        manager: e.manager,
        operation: e.operation,
        apiVersion: 'apps/v1',
        time: e.time,
        fieldsType: 'FieldsV1',
        fieldsV1: e.fieldsV1,
        ...(e.subresource === undefined ? {} : { subresource: e.subresource }),
      })),
    },
    spec: {
      replicas: 2,
      template: {
        spec: {
          containers: [{ name: 'web', image: 'web:1', args: ['a'] }],
          tolerations: [{ key: 'x' }],
        },
      },
    },
    ...extra,
  } as KubeObject;
}

const apply = (time: string): Entry => ({
  manager: 'deployer',
  operation: 'Apply',
  time,
  fieldsV1: applyFields,
});
const status = (time: string): Entry => ({
  manager: 'kube-controller-manager',
  operation: 'Update',
  time,
  fieldsV1: statusFields,
  subresource: 'status',
});
const labeller = (time: string, fieldsV1: unknown = labelFields): Entry => ({
  manager: 'labeller',
  operation: 'Update',
  time,
  fieldsV1,
});

/** The bytes the apiserver would send for `object`, compact JSON. */
const bytesOf = (object: KubeObject): Uint8Array => Buffer.from(JSON.stringify(object));

function changesBetween(before: KubeObject, after: KubeObject): FieldManagerChange[] {
  const previous = scanManagedFieldsBytes(bytesOf(before), false)?.stamp;
  return changedFieldManagers(previous, scanManagedFieldsBytes(bytesOf(after), false)) ?? assert.fail();
}

test('only the entries whose time or field set changed are listed, with what changed', () => {
  const before = deployment([
    apply('2026-11-28T10:00:00Z'),
    status('2026-11-28T10:00:01Z'),
    labeller('2026-11-28T10:00:02Z'),
  ]);
  const after = deployment([
    apply('2026-11-28T10:42:07Z'),
    status('2026-11-28T10:00:01Z'),
    labeller('2026-11-28T10:00:02Z', { 'f:metadata': { 'f:labels': { 'f:team': {} } } }),
  ]);
  const changes = changesBetween(before, after);
  assert.deepEqual(
    changes.map((c) => [c.manager, c.change, c.time]),
    [
      ['deployer', 'time', '2026-11-28T10:42:07Z'],
      ['labeller', 'fields', '2026-11-28T10:00:02Z'],
    ],
  );
  assert.deepEqual(JSON.parse(changes[0]?.fieldsV1 ?? ''), applyFields);
});

test('a new entry is listed as new, and a vanished one is not listed', () => {
  const before = deployment([apply('2026-11-28T10:00:00Z'), labeller('2026-11-28T10:00:02Z')]);
  const after = deployment([apply('2026-11-28T10:00:00Z'), status('2026-11-28T10:05:00Z')]);
  assert.deepEqual(
    changesBetween(before, after).map((c) => [c.manager, c.change, c.subresource]),
    [['kube-controller-manager', 'new', 'status']],
  );
});

test('identical entries in another order change nothing', () => {
  const before = deployment([apply('2026-11-28T10:00:00Z'), status('2026-11-28T10:00:01Z')]);
  const after = deployment([status('2026-11-28T10:00:01Z'), apply('2026-11-28T10:00:00Z')]);
  assert.deepEqual(changesBetween(before, after), []);
});

test('entries read from the bytes and from the parsed object agree', () => {
  const object = deployment([apply('2026-11-28T10:00:00Z'), status('2026-11-28T10:00:01Z')]);
  assert.deepEqual(
    scanManagedFieldsBytes(bytesOf(object), false)?.stamp,
    scanManagedFieldsObject(object).stamp,
  );
  const event = Buffer.from(JSON.stringify({ type: 'MODIFIED', object }));
  assert.deepEqual(scanManagedFieldsBytes(event, true)?.stamp, scanManagedFieldsObject(object).stamp);
  const changes = changedFieldManagers(new Int32Array(0), scanManagedFieldsObject(object)) ?? [];
  const fromBytes = changedFieldManagers(new Int32Array(0), scanManagedFieldsBytes(event, true)) ?? [];
  assert.deepEqual(fromBytes, changes);
  assert.equal(changes.length, 2);
});

test('an object without managedFields has no entries; unknown states give no answer', () => {
  const bare = Buffer.from('{"metadata":{"name":"a","annotations":{"x":"y"}}}');
  assert.equal(scanManagedFieldsBytes(bare, false)?.stamp.length, 0);
  // The key is there but not where managedFields belong: not sure, so unknown.
  const odd = Buffer.from('{"metadata":{"name":"a","annotations":{"managedFields":{"x":1}}}}');
  assert.equal(scanManagedFieldsBytes(odd, false), undefined);
  assert.equal(changedFieldManagers(undefined, scanManagedFieldsObject(deployment([]))), undefined);
});

test('diff paths map to the fieldsV1 keys that own them', () => {
  const object = deployment([]);
  // `m` only owns (it is not the writer): it is listed exactly when it owns the path.
  const owned = (fieldsV1: unknown, path: string): boolean =>
    changedBy(
      [
        {
          manager: 'm',
          operation: 'Update',
          time: 't',
          change: 'fields',
          fieldsV1: JSON.stringify(fieldsV1),
        },
        { manager: 'writer', operation: 'Update', time: 't', change: 'time', fieldsV1: '{}' },
      ],
      [path],
      object,
    ).some((c) => c.manager === 'm' && c.paths.length === 1);
  // A leaf, a field below an owned map, a map key that is not an identifier.
  assert.equal(owned(applyFields, 'spec.replicas'), true);
  assert.equal(owned(applyFields, 'metadata.labels.app'), true);
  assert.equal(owned(applyFields, 'metadata.labels.team'), false);
  assert.equal(
    owned(
      { 'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } } },
      'metadata.labels["app.kubernetes.io/name"]',
    ),
    true,
  );
  // A keyed list item by the diff's `[name=...]`, a field inside it, and a different item.
  assert.equal(owned(applyFields, 'spec.template.spec.containers[name=web].image'), true);
  assert.equal(owned(applyFields, 'spec.template.spec.containers[name=web]'), true);
  assert.equal(owned(applyFields, 'spec.template.spec.containers[name=sidecar].image'), false);
  // An atomic list owned whole owns its items; `.` alone does not own the fields of an item.
  assert.equal(owned(applyFields, 'spec.template.spec.containers[name=web].args[0]'), true);
  assert.equal(owned(applyFields, 'spec.template.spec.tolerations[0].key'), true);
  assert.equal(
    owned(
      { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {} } } } } } },
      'spec.template.spec.containers[name=web].image',
    ),
    false,
  );
  // A positional item of a set, resolved through the object to its value.
  assert.equal(owned(finalizerFields, 'metadata.finalizers[0]'), true);
  assert.equal(owned(finalizerFields, 'metadata.finalizers[1]'), false);
  // Conditions keyed by type; a multi-field key matched by the diff's identity field.
  assert.equal(owned(statusFields, 'status.conditions[type=Available].status'), true);
  assert.equal(owned(statusFields, 'status.conditions[type=Progressing].status'), false);
  assert.equal(
    owned(
      { 'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { 'f:targetPort': {} } } } },
      'spec.ports[port=80].targetPort',
    ),
    true,
  );
  // A prefix the manager has fields under.
  assert.equal(owned(statusFields, 'status'), true);
});

test('paths are split between several managers, and removed fields go to the writer', () => {
  const changes: FieldManagerChange[] = [
    {
      manager: 'deployer',
      operation: 'Apply',
      time: 'T1',
      change: 'time',
      fieldsV1: JSON.stringify(applyFields),
    },
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      subresource: 'status',
      time: 'T2',
      change: 'time',
      fieldsV1: JSON.stringify(statusFields),
    },
    // Lost a field to the write and owns nothing that changed: not listed.
    {
      manager: 'labeller',
      operation: 'Update',
      time: 'T0',
      change: 'fields',
      fieldsV1: JSON.stringify(labelFields),
    },
  ];
  const paths = ['spec.replicas', 'status.replicas', 'metadata.labels.gone'];
  assert.deepEqual(changedBy(changes, paths, deployment([])), [
    { manager: 'deployer', operation: 'Apply', time: 'T1', paths: ['spec.replicas', 'metadata.labels.gone'] },
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      time: 'T2',
      subresource: 'status',
      paths: ['status.replicas', 'metadata.labels.gone'],
    },
  ]);
});

test('a map whose fields another manager took (`f:data: {}`) does not own them: the entry that lists them does', () => {
  // As the apiserver records it: a ConfigMap made without a field manager ('unknown'), then
  // data.mode patched by 'ops' in the same second, so only the creator's field set changed.
  const changes: FieldManagerChange[] = [
    { manager: 'unknown', operation: 'Update', time: 'T0', change: 'fields', fieldsV1: '{"f:data":{}}' },
    {
      manager: 'ops',
      operation: 'Update',
      time: 'T0',
      change: 'new',
      fieldsV1: '{"f:data":{"f:mode":{}}}',
    },
  ];
  const configMap = { metadata: { name: 'web' }, data: { mode: 'green' } };
  assert.deepEqual(changedBy(changes, ['data.mode'], configMap), [
    { manager: 'ops', operation: 'Update', time: 'T0', paths: ['data.mode'] },
  ]);
  // An atomic field owned whole by the only entry that changed is still that entry's.
  const atomic: FieldManagerChange[] = [
    {
      manager: 'deployer',
      operation: 'Apply',
      time: 'T1',
      change: 'time',
      fieldsV1: JSON.stringify(applyFields),
    },
  ];
  assert.deepEqual(
    changedBy(atomic, ['spec.template.spec.containers[name=web].args[0]'], deployment([]))[0]?.paths,
    ['spec.template.spec.containers[name=web].args[0]'],
  );
});

test('with no entry written anew, the changed entries share what nobody owns', () => {
  const changes: FieldManagerChange[] = [
    {
      manager: 'labeller',
      operation: 'Update',
      time: 'T0',
      change: 'fields',
      fieldsV1: JSON.stringify(labelFields),
    },
  ];
  assert.deepEqual(changedBy(changes, ['metadata.labels.tier', 'metadata.labels.old'], deployment([])), [
    {
      manager: 'labeller',
      operation: 'Update',
      time: 'T0',
      paths: ['metadata.labels.tier', 'metadata.labels.old'],
    },
  ]);
  assert.deepEqual(changedBy([], ['spec.replicas'], deployment([])), []);
});

test('paths are read as the diff writes them', () => {
  assert.deepEqual(parsePath('spec.template.spec.containers[name=web].image'), [
    { kind: 'field', name: 'spec' },
    { kind: 'field', name: 'template' },
    { kind: 'field', name: 'spec' },
    { kind: 'field', name: 'containers' },
    { kind: 'item', field: 'name', value: 'web' },
    { kind: 'field', name: 'image' },
  ]);
  assert.deepEqual(parsePath('metadata.annotations["a.b/c"]'), [
    { kind: 'field', name: 'metadata' },
    { kind: 'field', name: 'annotations' },
    { kind: 'field', name: 'a.b/c' },
  ]);
  assert.deepEqual(parsePath('data["x"][2]'), [
    { kind: 'field', name: 'data' },
    { kind: 'field', name: 'x' },
    { kind: 'index', index: 2 },
  ]);
  assert.equal(parsePath('spec.[oops'), undefined);
});

test('the watcher state names the writers even when managedFields are dropped from what is kept', () => {
  const known = new KnownObjects<KubeObject>({
    keepObjects: false,
    dropManagedFields: true,
    fieldManagers: true,
  });
  const before = deployment([apply('2026-11-28T10:00:00Z'), status('2026-11-28T10:00:01Z')]);
  const after = deployment([apply('2026-11-28T10:00:00Z'), status('2026-11-28T10:09:09Z')]);
  // What the watcher keeps and hands on has no managedFields; the bytes still do.
  const { managedFields: _dropped, ...metadata } = before.metadata ?? {};
  const entry = known.set('shop/web', { ...before, metadata }, { bytes: bytesOf(before) }, false);
  const changes = known.update(entry, { ...after, metadata }, { bytes: bytesOf(after) }, false);
  assert.deepEqual(
    changes?.map((c) => [c.manager, c.subresource, c.time, c.change]),
    [['kube-controller-manager', 'status', '2026-11-28T10:09:09Z', 'time']],
  );
  assert.equal(entry.managed?.length, 6);
});

test('without a stamp of the previous state the writers are unknown', () => {
  const known = new KnownObjects<KubeObject>({
    keepObjects: false,
    dropManagedFields: true,
    fieldManagers: true,
  });
  // Handed over without managedFields (a resume's objects): nothing to compare with.
  const entry = known.set('shop/web', { metadata: { name: 'web', namespace: 'shop' } }, undefined, false);
  const after = deployment([apply('2026-11-28T10:00:00Z')]);
  assert.equal(known.update(entry, after, { bytes: bytesOf(after) }, false), undefined);
  // The next change has one.
  const later = deployment([apply('2026-11-28T10:00:05Z')]);
  assert.equal(known.update(entry, later, { bytes: bytesOf(later) }, false)?.[0]?.change, 'time');
});
