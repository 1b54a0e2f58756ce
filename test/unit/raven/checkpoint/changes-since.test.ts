import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../src/client/kube-object.js';
import { changesSince, type ChangesSinceOptions } from '../../../../src/raven/checkpoint/changes-since.js';
import { entryFromObject } from '../../../../src/raven/checkpoint/checkpoint-store.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';
import { buildChangeEvent } from '../../../../src/raven/model/to-change-event.js';
import { pod, PODS, TIME } from './fixtures.js';

const options: ChangesSinceOptions = { watcher: 'pods', resource: PODS, origin: 'restart', now: () => TIME };

const compare = (
  checkpointed: KubeObject[],
  current: KubeObject[],
  extra: Partial<ChangesSinceOptions> = {},
) =>
  changesSince(
    checkpointed.map((object) => entryFromObject(object)),
    current,
    { ...options, ...extra },
  );

/** `type key uid/rv`, plus `tombstone` and the diff paths: what a table row checks. */
const brief = (events: ChangeEvent[]): string[] =>
  events.map((e) =>
    [
      e.type,
      e.namespace === undefined ? e.name : `${e.namespace}/${e.name}`,
      `${e.uid ?? '-'}/${e.resourceVersion ?? '-'}`,
      ...(e.tombstone ? ['tombstone'] : []),
      ...e.diff.map((d) => `${d.op}:${d.path}`),
    ].join(' '),
  );

const rows: {
  name: string;
  checkpointed: KubeObject[];
  current: KubeObject[];
  events: string[];
  silent?: string[];
}[] = [
  {
    name: 'an object created while down is added',
    checkpointed: [],
    current: [pod('d', 'new', { rv: '9' })],
    events: ['added d/new uid-new/9'],
  },
  {
    name: 'an object changed while down is modified, with the diff from the delivered state',
    checkpointed: [pod('d', 'web', { rv: '1' })],
    current: [pod('d', 'web', { rv: '2', image: 'nginx:1.27' })],
    events: ['modified d/web uid-web/2 replace:spec.containers[name=main].image'],
  },
  {
    name: 'an object deleted while down is a tombstone carrying the delivered state',
    checkpointed: [pod('d', 'gone', { rv: '3' })],
    current: [],
    events: ['deleted d/gone uid-gone/3 tombstone'],
  },
  {
    name: 'an object deleted and recreated while down is deleted, then added',
    checkpointed: [pod('d', 'db-0', { uid: 'old', rv: '4' })],
    current: [pod('d', 'db-0', { uid: 'new', rv: '8' })],
    events: ['deleted d/db-0 old/4 tombstone', 'added d/db-0 new/8'],
  },
  {
    name: "two incarnations of one name in the checkpoint (a sharded replica's parts): the current one is compared, the other deleted",
    checkpointed: [pod('d', 'db-0', { uid: 'new', rv: '7' }), pod('d', 'db-0', { uid: 'old', rv: '4' })],
    current: [pod('d', 'db-0', { uid: 'new', rv: '9', image: 'v2' })],
    events: [
      'deleted d/db-0 old/4 tombstone',
      'modified d/db-0 new/9 replace:spec.containers[name=main].image',
    ],
  },
  {
    name: 'two incarnations of one name in the checkpoint, neither in the cluster: both deleted',
    checkpointed: [pod('d', 'db-0', { uid: 'old', rv: '4' }), pod('d', 'db-0', { uid: 'new', rv: '7' })],
    current: [],
    events: ['deleted d/db-0 new/7 tombstone', 'deleted d/db-0 old/4 tombstone'],
  },
  {
    name: 'an object at the same resourceVersion is not reported',
    checkpointed: [pod('d', 'same', { rv: '5' })],
    current: [pod('d', 'same', { rv: '5' })],
    events: [],
  },
  {
    name: 'a change to noise paths only is not delivered but returned to be recorded',
    checkpointed: [pod('d', 'noisy', { rv: '5', managedBy: 'kubectl' })],
    current: [pod('d', 'noisy', { rv: '6', managedBy: 'kube-controller-manager' })],
    events: [],
    silent: ['modified d/noisy uid-noisy/6'],
  },
  {
    name: 'cluster-scoped objects are keyed by name alone',
    checkpointed: [pod(undefined, 'node-a', { rv: '1' })],
    current: [pod(undefined, 'node-b', { rv: '1' })],
    events: ['deleted node-a uid-node-a/1 tombstone', 'added node-b uid-node-b/1'],
  },
  {
    name: 'events come in key order whatever the input order',
    checkpointed: [pod('b', 'x', { rv: '1' }), pod('a', 'z', { rv: '1' })],
    current: [pod('c', 'y'), pod('a', 'z', { rv: '2', image: 'v2' }), pod('a', 'a')],
    events: [
      'added a/a uid-a/1',
      'modified a/z uid-z/2 replace:spec.containers[name=main].image',
      'deleted b/x uid-x/1 tombstone',
      'added c/y uid-y/1',
    ],
  },
];

for (const row of rows) {
  test(row.name, () => {
    const { events, silentUpdates } = compare(row.checkpointed, row.current);
    assert.deepEqual(brief(events), row.events);
    assert.deepEqual(brief(silentUpdates), row.silent ?? []);
  });
}

test('a modified event carries the delivered state as previous and the current object', () => {
  const before = pod('d', 'web', { rv: '1' });
  const after = pod('d', 'web', { rv: '2', image: 'v2' });
  const [event] = compare([before], [after], { origin: 'resync' }).events;
  assert.deepEqual(event, {
    id: 'pods:uid-web:2',
    watcher: 'pods',
    type: 'modified',
    origin: 'resync',
    resource: PODS,
    namespace: 'd',
    name: 'web',
    uid: 'uid-web',
    resourceVersion: '2',
    object: after,
    previous: before,
    diff: [{ path: 'spec.containers[name=main].image', op: 'replace', old: 'nginx:1.25', new: 'v2' }],
    tombstone: false,
    time: TIME,
  });
});

test('a tombstone carries the checkpointed object, its identity and an id of its own', () => {
  const gone = pod('d', 'gone', { rv: '3' });
  const [event] = compare([gone], []).events;
  assert.equal(event?.id, 'pods:uid-gone:3:deleted');
  assert.equal(event.object, gone);
  assert.equal(event.previous, undefined);
  assert.deepEqual(event.diff, []);
  assert.equal(event.tombstone, true);
  assert.equal(event.origin, 'restart');
});

test('added events are not tombstones and have no previous state', () => {
  const [event] = compare([], [pod('d', 'a')]).events;
  assert.equal(event?.id, 'pods:uid-a:1');
  assert.equal(event.tombstone, false);
  assert.equal(event.previous, undefined);
});

test('extra ignored paths turn a change into a silent update', () => {
  const before = pod('d', 'web', { rv: '1' });
  const after = pod('d', 'web', { rv: '2', image: 'v2' });
  const changes = compare([before], [after], { diffIgnore: ['spec.containers.*'] });
  assert.deepEqual(brief(changes.events), []);
  assert.deepEqual(brief(changes.silentUpdates), ['modified d/web uid-web/2']);
});

test('each event says where its stretch in scope started: a tombstone the entry’s (its id too), an added its listed resourceVersion, a modified the entry’s; with the pipeline’s record, the pipeline’s', () => {
  const checkpoint = [
    entryFromObject(pod('d', 'gone', { rv: '7' }), '3'),
    entryFromObject(pod('d', 'old', { rv: '8' })),
    entryFromObject(pod('d', 'same', { rv: '5' }), '2'),
    entryFromObject(pod('d', 'again', { rv: '4' }), '4'),
  ];
  const current = [
    pod('d', 'again', { uid: 'uid-again2', rv: '12' }),
    pod('d', 'new', { rv: '11' }),
    pod('d', 'same', { rv: '10', image: 'v2' }),
  ];
  const stretches = (events: ChangeEvent[]): string[] =>
    events.map((e) => `${e.id} since ${e.inScopeSince ?? '-'}`);
  assert.deepEqual(stretches(changesSince(checkpoint, current, options).events), [
    'pods:uid-again:4:deleted since 4',
    'pods:uid-again2:12 since 12',
    'pods:uid-gone:3:deleted since 3',
    'pods:uid-new:11 since 11',
    // Written by an older Raven: named by the state it ends, as before.
    'pods:uid-old:8:deleted since -',
    'pods:uid-same:10 since 2',
  ]);
  const pipeline = new Map([
    ['uid-again2', '12'],
    ['uid-new', '6'],
    ['uid-same', '9'],
  ]);
  const inScopeSince = (object: KubeObject): string | undefined => pipeline.get(object.metadata?.uid ?? '');
  assert.deepEqual(stretches(changesSince(checkpoint, current, { ...options, inScopeSince }).events), [
    'pods:uid-again:4:deleted since 4',
    'pods:uid-again2:12 since 12',
    'pods:uid-gone:3:deleted since 3',
    'pods:uid-new:11 since 6',
    'pods:uid-old:8:deleted since -',
    'pods:uid-same:10 since 9',
  ]);
});

test('one state has one id whatever its type is judged to be: a live modified, and the same state found as added after a crash lost its record', () => {
  const created = pod('d', 'web', { rv: '5' });
  const changed = pod('d', 'web', { rv: '7', image: 'v2' });
  const live = buildChangeEvent(
    { watcher: 'pods', resource: PODS, time: TIME },
    { type: 'modified', object: changed, previous: created, since: '5', origin: 'live' },
  );
  // The checkpoint's record of both live deliveries was lost (a SIGKILL before the flush).
  const [found] = compare([], [changed]).events;
  assert.equal(live.type, 'modified');
  assert.equal(found?.type, 'added');
  assert.equal(found.id, live.id);
  assert.equal(live.id, 'pods:uid-web:7');
});
