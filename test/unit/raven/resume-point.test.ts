/**
 * The objects a watcher resumes with (`resume-point.ts`), per incarnation: a name deleted and made
 * again is two objects, and the watch must be told of exactly those every sink has heard of.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCheckpointStore } from '../../../src/raven/checkpoint/memory-checkpoint-store.js';
import { ShardedCheckpoints } from '../../../src/raven/checkpoint/sharded-checkpoints.js';
import { resumeObjects } from '../../../src/raven/delivery/resume-point.js';
import { changeEvent, pod } from './checkpoint/fixtures.js';

const told = (objects: { metadata?: { uid?: string; resourceVersion?: string } }[]): string[] =>
  objects.map((o) => `${o.metadata?.uid ?? '-'}@${o.metadata?.resourceVersion ?? '-'}`).sort();

test('one sink at a re-created object and one still at its old incarnation: the watch is told of the old one only, so the creation is replayed', () => {
  const store = new MemoryCheckpointStore();
  store.recordDelivered(changeEvent('added', pod('d', 'a', { uid: 'old', rv: '4' })), 'ahead');
  store.recordDelivered(changeEvent('deleted', pod('d', 'a', { uid: 'old', rv: '5' })), 'ahead');
  store.recordDelivered(changeEvent('added', pod('d', 'a', { uid: 'new', rv: '6' })), 'ahead');
  store.recordDelivered(changeEvent('added', pod('d', 'a', { uid: 'old', rv: '4' })), 'behind');
  const { objects } = resumeObjects(store, 'pods', ['ahead', 'behind']);
  // Told of the new incarnation, the watch would drop its replayed creation as seen, and the
  // sink behind would never get it.
  assert.deepEqual(told(objects), ['old@4']);
});

test('a sink that heard of neither incarnation keeps both out of what the watch is told', () => {
  const store = new MemoryCheckpointStore();
  store.recordDelivered(changeEvent('added', pod('d', 'a', { uid: 'new', rv: '6' })), 'one');
  store.recordDelivered(changeEvent('added', pod('d', 'b', { uid: 'b', rv: '2' })), 'one');
  store.recordDelivered(changeEvent('added', pod('d', 'b', { uid: 'b', rv: '2' })), 'two');
  assert.deepEqual(told(resumeObjects(store, 'pods', ['one', 'two']).objects), ['b@2']);
});

test('sharded, two incarnations of one name in two parts are both told, each at its own state', () => {
  const store = new MemoryCheckpointStore();
  const all = new ShardedCheckpoints(store, { field: 'uid', buckets: 64, owned: [...Array(64).keys()] });
  const uids = Array.from({ length: 100 }, (_, i) => `u-${i}`);
  const old = uids[0] as string;
  const again = uids.find((uid) => all.partOf(uid, undefined) !== all.partOf(old, undefined)) as string;
  for (const sink of ['audit', 'webhook']) {
    all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: old, rv: '4' })), sink);
    all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: again, rv: '9' })), sink);
  }
  const { objects } = resumeObjects(all, 'pods', ['audit', 'webhook'], (uid, ns) => all.partOf(uid, ns));
  assert.deepEqual(told(objects), [`${again}@9`, `${old}@4`].sort());
});

test('sharded, a later incarnation in another part does not stand for the old one: a sink that never heard of the old one keeps it out', () => {
  const store = new MemoryCheckpointStore();
  const all = new ShardedCheckpoints(store, { field: 'uid', buckets: 64, owned: [...Array(64).keys()] });
  const uids = Array.from({ length: 100 }, (_, i) => `u-${i}`);
  const old = uids[0] as string;
  const again = uids.find((uid) => all.partOf(uid, undefined) !== all.partOf(old, undefined)) as string;
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: old, rv: '4' })), 'audit');
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: again, rv: '9' })), 'audit');
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: again, rv: '9' })), 'webhook');
  const { objects } = resumeObjects(all, 'pods', ['audit', 'webhook'], (uid, ns) => all.partOf(uid, ns));
  assert.deepEqual(told(objects), [`${again}@9`]);
});
