/**
 * A sharded replica's view of the shared checkpoint (`sharded-checkpoints.ts`): replicas owning
 * different parts of the hash space share one store and never touch each other's parts, and a
 * replica that takes parts over reads what their last owner confirmed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCheckpointStore } from '../../../../src/raven/checkpoint/memory-checkpoint-store.js';
import {
  partName,
  RESUME_WRITE_MS,
  ShardedCheckpoints,
} from '../../../../src/raven/checkpoint/sharded-checkpoints.js';
import { FakeClock } from '../../../../src/testing/fake-clock.js';
import { makeObjectKey } from '../../../../src/client/object-key.js';
import { changesSince } from '../../../../src/raven/checkpoint/changes-since.js';
import { knownStretches } from '../../../../src/raven/delivery/resume-point.js';
import { changeEvent, pod, PODS, TIME } from './fixtures.js';

const BUCKETS = 4;
const probe = new ShardedCheckpoints(new MemoryCheckpointStore(), {
  field: 'namespace',
  buckets: BUCKETS,
  owned: [],
});
/** A namespace whose objects are in `part`. */
const namespaceIn = (part: number, skip = 0): string => {
  const found = Array.from({ length: 200 }, (_, i) => `team-${i}-x`).filter(
    (ns) => probe.partOf(undefined, ns) === part,
  );
  const namespace = found[skip];
  if (namespace === undefined) throw new Error(`no namespace in part ${part}`);
  return namespace;
};
const [n0, n1, n2, n3] = [0, 1, 2, 3].map((part) => namespaceIn(part));
const keysOf = (entries: Iterable<{ key: string; resourceVersion: string | undefined }>): string[] =>
  [...entries].map((e) => `${e.key}@${e.resourceVersion ?? '-'}`);
const confirmed = (resourceVersion: string, sinks = ['audit']) => ({
  resourceVersion,
  scope: 's',
  sinks,
  at: 0,
});

test('replicas sharing a store each see and replace only their own parts', () => {
  const store = new MemoryCheckpointStore();
  const a = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [1, 0] });
  const b = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [2, 3] });
  a.recordDelivered(changeEvent('added', pod(n1, 'z', { rv: '3' })), 'audit');
  a.recordDelivered(changeEvent('added', pod(n0, 'a', { rv: '2' })), 'audit');
  b.recordDelivered(changeEvent('added', pod(n2, 'b', { rv: '4' })), 'audit');
  // Each change is kept under its object's part, as a watcher of its own.
  assert.deepEqual(keysOf(store.entries(partName('pods', 0), 'audit')), [`${n0}/a@2`]);
  assert.deepEqual(keysOf(store.entries(partName('pods', 2), 'audit')), [`${n2}/b@4`]);
  // In key order, across the parts owned.
  assert.deepEqual(keysOf(a.entries('pods', 'audit')), [`${n0}/a@2`, `${n1}/z@3`].sort());
  assert.deepEqual(keysOf(b.entries('pods', 'audit')), [`${n2}/b@4`]);
  assert.equal(a.hasCheckpoint('pods', 'audit'), true);
  assert.equal(b.hasCheckpoint('pods', 'webhook'), false);
  // A baseline replaces what the replica's own parts held, not the others'.
  b.recordBaseline('pods', 'audit', [pod(n3, 'c', { rv: '9' })]);
  assert.deepEqual(keysOf(b.entries('pods', 'audit')), [`${n3}/c@9`]);
  assert.deepEqual(keysOf(a.entries('pods', 'audit')), [`${n0}/a@2`, `${n1}/z@3`].sort());
  b.recordDelivered(changeEvent('deleted', pod(n3, 'c', { rv: '10' })), 'audit');
  assert.deepEqual(keysOf(b.tombstones('pods', 'audit')), [`${n3}/c@10`]);
  assert.deepEqual(a.tombstones('pods', 'audit'), []);
  assert.equal(a.confirmed('pods', 'audit', makeObjectKey('c', n3)), undefined);
  assert.deepEqual(b.confirmed('pods', 'audit', makeObjectKey('c', n3)), {
    uid: 'uid-c',
    resourceVersion: '10',
    deleted: true,
  });
});

test('a replica resumes its parts from the lowest of their confirmed resourceVersions', () => {
  const store = new MemoryCheckpointStore();
  const a = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [0, 1] });
  const b = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [2, 3] });
  assert.equal(a.confirmedVersion('pods'), undefined);
  a.recordConfirmedVersion('pods', confirmed('50'));
  b.recordConfirmedVersion('pods', confirmed('30', ['audit', 'webhook']));
  assert.equal(a.confirmedVersion('pods')?.resourceVersion, '50');
  // b dies; a takes part 2 over: it resumes from 30, and knows part 0 needs nothing at or below 50.
  const taking = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [0, 1, 2] });
  assert.deepEqual(taking.confirmedVersion('pods'), confirmed('30', ['audit']));
  const in0 = changeEvent('modified', pod(n0, 'a', { rv: '45' }));
  const in2 = changeEvent('modified', pod(n2, 'b', { rv: '45' }));
  assert.equal(taking.replayFloor(in0, 'audit'), '50');
  assert.equal(taking.replayFloor(in2, 'audit'), '30');
  assert.equal(taking.replayFloor(in0, 'webhook'), undefined, 'part 0 was confirmed for audit only');
  assert.equal(
    taking.replayFloor(changeEvent('modified', pod(n0, 'a', { rv: '51' })), 'audit'),
    undefined,
    'a change above every resume point is live',
  );
  assert.equal(taking.replayFloor(changeEvent('added', pod(n3, 'd')), 'audit'), undefined, 'not owned');
  // The watermark, restarting from 30, never lowers a part that was further on.
  taking.recordConfirmedVersion('pods', confirmed('40'));
  assert.equal(store.confirmedVersion(partName('pods', 0))?.resourceVersion, '50');
  assert.equal(store.confirmedVersion(partName('pods', 2))?.resourceVersion, '40');
  assert.equal(taking.replayFloor(in2, 'audit'), '40');
  // Parts recorded for different scopes cannot resume together: the scope matches no watcher.
  store.recordConfirmedVersion(partName('pods', 1), { ...confirmed('60'), scope: 'other' });
  assert.equal(taking.confirmedVersion('pods')?.scope, '');
  // A part with nothing confirmed: nothing to resume from.
  taking.forgetConfirmedVersion('pods');
  assert.equal(taking.confirmedVersion('pods'), undefined);
  assert.equal(taking.replayFloor(in0, 'audit'), '50', 'what was confirmed still holds');
});

test('a name made again with a new uid in another part: the newest of what a sink confirmed', () => {
  const store = new MemoryCheckpointStore();
  const all = new ShardedCheckpoints(store, { field: 'uid', buckets: 64, owned: [...Array(64).keys()] });
  const uids = Array.from({ length: 100 }, (_, i) => `u-${i}`);
  const first = uids[0] as string;
  const again = uids.find((uid) => all.partOf(uid, undefined) !== all.partOf(first, undefined)) as string;
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: first, rv: '5' })), 'audit');
  all.recordDelivered(changeEvent('deleted', pod('d', 'a', { uid: first, rv: '6' })), 'audit');
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: again, rv: '8' })), 'audit');
  assert.deepEqual(all.confirmed('pods', 'audit', makeObjectKey('a', 'd')), {
    uid: again,
    resourceVersion: '8',
    deleted: false,
  });
  // Each part's tombstones go with its own confirmed resourceVersion.
  assert.deepEqual(keysOf(all.tombstones('pods', 'audit')), ['d/a@6']);
  store.recordConfirmedVersion(partName('pods', all.partOf(again, undefined)), confirmed('7'));
  assert.deepEqual(keysOf(all.tombstones('pods', 'audit')), ['d/a@6']);
  store.recordConfirmedVersion(partName('pods', all.partOf(first, undefined)), confirmed('7'));
  assert.deepEqual(all.tombstones('pods', 'audit'), []);
});

test('resume points reach the store at most once a second, and all of them at a flush', async () => {
  const store = new MemoryCheckpointStore();
  const clock = new FakeClock();
  const sharded = new ShardedCheckpoints(store, {
    field: 'namespace',
    buckets: BUCKETS,
    owned: [0, 1],
    clock,
  });
  const stored = (): (string | undefined)[] =>
    [0, 1].map((part) => store.confirmedVersion(partName('pods', part))?.resourceVersion);
  sharded.recordConfirmedVersion('pods', confirmed('10'));
  assert.deepEqual(stored(), ['10', '10'], 'the first at once');
  sharded.recordConfirmedVersion('pods', confirmed('11'));
  sharded.recordConfirmedVersion('pods', confirmed('12'));
  assert.deepEqual(stored(), ['10', '10'], 'then held');
  assert.equal(sharded.confirmedVersion('pods')?.resourceVersion, '10', 'what the store says');
  assert.equal(sharded.replayFloor(changeEvent('added', pod(n0, 'a')), 'audit'), '12', 'known at once');
  await clock.tick(RESUME_WRITE_MS);
  sharded.recordConfirmedVersion('pods', confirmed('13'));
  assert.deepEqual(stored(), ['13', '13'], 'a second later');
  sharded.recordConfirmedVersion('pods', confirmed('14'));
  await sharded.flush();
  assert.deepEqual(stored(), ['14', '14'], 'a flush writes what was held');
  sharded.recordConfirmedVersion('pods', confirmed('15'));
  sharded.forgetConfirmedVersion('pods');
  await sharded.flush();
  assert.deepEqual(stored(), [undefined, undefined], 'a forgotten one is not written later');
});

test('by uid, what a sink confirmed of one incarnation is read from its own part, not from a newer one of its name', () => {
  const store = new MemoryCheckpointStore();
  const all = new ShardedCheckpoints(store, { field: 'uid', buckets: 64, owned: [...Array(64).keys()] });
  const uids = Array.from({ length: 100 }, (_, i) => `u-${i}`);
  const old = uids[0] as string;
  const again = uids.find((uid) => all.partOf(uid, undefined) !== all.partOf(old, undefined)) as string;
  // The old incarnation's part confirmed its creation only; the new one's, a later state.
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: old, rv: '5' })), 'audit');
  all.recordDelivered(changeEvent('added', pod('d', 'a', { uid: again, rv: '8' })), 'audit');
  const key = makeObjectKey('a', 'd');
  assert.deepEqual(all.confirmed('pods', 'audit', key, old), {
    uid: old,
    resourceVersion: '5',
    deleted: false,
  });
  assert.deepEqual(all.confirmed('pods', 'audit', key, again), {
    uid: again,
    resourceVersion: '8',
    deleted: false,
  });
  // A replica that does not own the incarnation's part has nothing confirmed for it.
  const other = new ShardedCheckpoints(store, {
    field: 'uid',
    buckets: 64,
    owned: [all.partOf(again, undefined)],
  });
  assert.equal(other.confirmed('pods', 'audit', key, old), undefined);
});

test('a replica that takes a part over knows where its objects’ stretches in scope started, as its last owner recorded', () => {
  const store = new MemoryCheckpointStore();
  const b = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [2, 3] });
  b.recordDelivered(changeEvent('modified', pod(n2, 'a', { rv: '45' }), 'pods', '40'), 'audit');
  b.recordDelivered(changeEvent('added', pod(n3, 'c', { rv: '46' }), 'pods', '46'), 'audit');
  // b dies; a takes part 2 over, not part 3.
  const taking = new ShardedCheckpoints(store, { field: 'namespace', buckets: BUCKETS, owned: [0, 1, 2] });
  assert.deepEqual([...knownStretches(taking, 'pods', ['audit'])], [['uid-a', '40']]);
  // A deletion of a the new owner sees live is named as a tombstone of b's entry would be.
  const [gone] = changesSince(taking.entries('pods', 'audit'), [], {
    watcher: 'pods',
    resource: PODS,
    origin: 'restart',
    now: () => TIME,
  }).events;
  assert.equal(gone?.id, 'pods:uid-a:40:deleted');
});
