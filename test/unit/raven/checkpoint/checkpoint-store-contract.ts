/**
 * The contract every {@link CheckpointStore} implementation must pass; each guarantee listed in
 * `src/raven/checkpoint/checkpoint-store.ts` has a test here. Call
 * {@link checkpointStoreContract} with a harness factory; a fresh harness is made per test.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CheckpointError } from '../../../../src/raven/checkpoint/checkpoint-error.js';
import type {
  CheckpointEntry,
  CheckpointStats,
  CheckpointStore,
  CheckpointTombstone,
  ConfirmedVersion,
} from '../../../../src/raven/checkpoint/checkpoint-store.js';
import { makeObjectKey } from '../../../../src/client/object-key.js';
import { FakeClock } from '../../../../src/testing/fake-clock.js';
import { changeEvent, pod } from './fixtures.js';

/** The interface plus what tests need to look inside and to crash. */
export interface ContractStore extends CheckpointStore {
  stats(): CheckpointStats;
  destroy(): void;
}

export interface CheckpointHarness {
  /**
   * Open a store on this harness's backing (one temporary file per harness, say). A store whose
   * writes travel to a server opens asynchronously, and opening it again first waits until the
   * writes the previous store sent were answered (a crash does not stop a transaction the server
   * is committing).
   */
  open(clock: FakeClock): ContractStore | Promise<ContractStore>;
  /** Whether a store opened again after `close()` sees what the first one wrote. */
  persists: boolean;
  cleanup(): void | Promise<void>;
}

const summary = (entries: Iterable<CheckpointEntry | CheckpointTombstone>): string[] =>
  [...entries].map((e) => `${e.key}@${e.uid ?? '-'}/${e.resourceVersion ?? '-'}`);

const version = (resourceVersion: string, at = 0): ConfirmedVersion => ({
  resourceVersion,
  scope: 'pods in d',
  sinks: ['audit', 'webhook'],
  at,
});

export function checkpointStoreContract(name: string, createHarness: () => CheckpointHarness): void {
  const withStore = async (
    body: (store: ContractStore, clock: FakeClock, harness: CheckpointHarness) => Promise<void> | void,
  ): Promise<void> => {
    const harness = createHarness();
    const clock = new FakeClock();
    const store = await harness.open(clock);
    try {
      await body(store, clock, harness);
    } finally {
      store.destroy();
      await harness.cleanup();
    }
  };
  const skipUnlessPersistent = createHarness();
  const notPersistent = skipUnlessPersistent.persists
    ? false
    : `${name} keeps nothing across a restart by design`;
  void skipUnlessPersistent.cleanup();

  describe(`${name} checkpoint store contract`, () => {
    test('a delivered added event is read back as the entry for its key', () =>
      withStore((store) => {
        const web = pod('default', 'web-0', { uid: 'u1', rv: '5' });
        store.recordDelivered(changeEvent('added', web), 'audit');
        const entries = [...store.entries('pods', 'audit')];
        assert.deepEqual(summary(entries), ['default/web-0@u1/5']);
        assert.deepEqual(entries[0]?.object, web);
      }));

    test('a modified event overwrites the entry and a deleted event removes it', () =>
      withStore((store) => {
        store.recordDelivered(changeEvent('added', pod('default', 'a', { rv: '1' })), 'audit');
        store.recordDelivered(changeEvent('added', pod('default', 'b', { rv: '2' })), 'audit');
        store.recordDelivered(
          changeEvent('modified', pod('default', 'a', { rv: '3', image: 'v2' })),
          'audit',
        );
        store.recordDelivered(changeEvent('deleted', pod('default', 'b', { rv: '4' })), 'audit');
        const entries = [...store.entries('pods', 'audit')];
        assert.deepEqual(summary(entries), ['default/a@uid-a/3']);
        assert.deepEqual(entries[0]?.object, pod('default', 'a', { rv: '3', image: 'v2' }));
      }));

    test('entries come back in key order, cluster-scoped and namespaced alike', () =>
      withStore((store) => {
        for (const [ns, n] of [
          ['kube-system', 'z'],
          [undefined, 'node-b'],
          ['default', 'a'],
          [undefined, 'Node-A'],
        ] as const) {
          store.recordDelivered(changeEvent('added', pod(ns, n)), 'audit');
        }
        assert.deepEqual(
          [...store.entries('pods', 'audit')].map((e) => e.key),
          ['Node-A', 'default/a', 'kube-system/z', 'node-b'],
        );
      }));

    test('sinks and watchers are independent: recording for one leaves the others unchanged', () =>
      withStore(async (store) => {
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), 'audit');
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), 'webhook');
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' }), 'other-watcher'), 'audit');
        store.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '2' })), 'audit');
        store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '3' })), 'webhook');
        await store.flush();
        assert.deepEqual(summary(store.entries('pods', 'audit')), ['d/a@uid-a/2']);
        assert.deepEqual(summary(store.entries('pods', 'webhook')), []);
        assert.deepEqual(summary(store.entries('other-watcher', 'audit')), ['d/a@uid-a/1']);
      }));

    test('a baseline records the objects as delivered and replaces what the sink had', () =>
      withStore((store) => {
        store.recordDelivered(changeEvent('added', pod('d', 'old')), 'audit');
        store.recordDelivered(changeEvent('added', pod('d', 'old')), 'webhook');
        store.recordBaseline('pods', 'audit', [pod('d', 'b', { rv: '7' }), pod('d', 'a', { rv: '6' })]);
        assert.deepEqual(summary(store.entries('pods', 'audit')), ['d/a@uid-a/6', 'd/b@uid-b/7']);
        assert.deepEqual(summary(store.entries('pods', 'webhook')), ['d/old@uid-old/1']);
      }));

    test('each entry keeps where its stretch in scope started, as the event said: through modifications, anew after a re-creation and after leaving the scope and coming back', () =>
      withStore(async (store) => {
        const stretches = (sink: string): string[] =>
          [...store.entries('pods', sink)].map(
            (e) => `${e.key}@${e.uid ?? '-'}/${e.resourceVersion ?? '-'} since ${e.since ?? '-'}`,
          );
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '3' }), 'pods', '3'), 'audit');
        store.recordDelivered(
          changeEvent('modified', pod('d', 'a', { rv: '5', image: 'v2' }), 'pods', '3'),
          'audit',
        );
        assert.deepEqual(stretches('audit'), ['d/a@uid-a/5 since 3'], 'kept across a modification');
        // Left a label selector at 6, came back at 8.
        store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '6' }), 'pods', '3'), 'audit');
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '8' }), 'pods', '8'), 'audit');
        assert.deepEqual(stretches('audit'), ['d/a@uid-a/8 since 8'], 'a new stretch once back in scope');
        // Deleted and made again under the same name: another incarnation, its own stretch.
        store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '9' }), 'pods', '8'), 'audit');
        store.recordDelivered(
          changeEvent('added', pod('d', 'a', { uid: 'uid-a2', rv: '11' }), 'pods', '11'),
          'audit',
        );
        assert.deepEqual(stretches('audit'), ['d/a@uid-a2/11 since 11'], 'a re-creation starts its own');
        // Two sinks at one state may disagree (one fell behind while the object left and came
        // back): each keeps its own; an event that says none leaves none.
        store.recordDelivered(
          changeEvent('modified', pod('d', 'a', { uid: 'uid-a2', rv: '11' }), 'pods', '10'),
          'webhook',
        );
        store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '12' })), 'webhook');
        await store.flush();
        assert.deepEqual(stretches('audit'), ['d/a@uid-a2/11 since 11']);
        assert.deepEqual(stretches('webhook'), ['d/a@uid-a2/11 since 10', 'd/b@uid-b/12 since -']);
        store.recordBaseline(
          'pods',
          'other',
          [pod('d', 'c', { rv: '14' }), pod('d', 'e', { rv: '15' })],
          (o) => (o.metadata?.name === 'c' ? '13' : undefined),
        );
        assert.deepEqual(stretches('other'), ['d/c@uid-c/14 since 13', 'd/e@uid-e/15 since -']);
      }));

    test('hasCheckpoint tells a sink that never ran from one that ran and saw nothing', () =>
      withStore((store) => {
        assert.equal(store.hasCheckpoint('pods', 'audit'), false);
        store.recordBaseline('pods', 'audit', []);
        assert.equal(store.hasCheckpoint('pods', 'audit'), true);
        assert.deepEqual([...store.entries('pods', 'audit')], []);

        store.recordDelivered(changeEvent('deleted', pod('d', 'gone')), 'webhook');
        assert.equal(store.hasCheckpoint('pods', 'webhook'), true);
        assert.equal(store.hasCheckpoint('pods', 'never'), false);
      }));

    test('reads see writes that are not flushed yet', () =>
      withStore((store) => {
        store.recordBaseline('pods', 'audit', [pod('d', 'a'), pod('d', 'b')]);
        store.recordDelivered(changeEvent('added', pod('d', 'c')), 'audit');
        store.recordDelivered(changeEvent('deleted', pod('d', 'a')), 'audit');
        store.recordDelivered(changeEvent('modified', pod('d', 'b', { rv: '2' })), 'audit');
        store.recordDelivered(changeEvent('added', pod('d', 'x')), 'new-sink');
        assert.deepEqual(summary(store.entries('pods', 'audit')), ['d/b@uid-b/2', 'd/c@uid-c/1']);
        assert.equal(store.hasCheckpoint('pods', 'new-sink'), true);
      }));

    test('sinks at the same state share one stored state, collected once no sink refers to it', () =>
      withStore(async (store) => {
        for (const sink of ['audit', 'webhook', 'slack']) {
          store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), sink);
        }
        await store.flush();
        assert.deepEqual(store.stats(), { checkpoints: 3, entries: 3, states: 1 });

        store.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '2' })), 'audit');
        await store.flush();
        assert.deepEqual(store.stats(), { checkpoints: 3, entries: 3, states: 2 });

        store.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '2' })), 'webhook');
        store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '3' })), 'slack');
        await store.flush();
        assert.deepEqual(store.stats(), { checkpoints: 3, entries: 2, states: 1 });

        store.recordBaseline('pods', 'audit', []);
        store.recordBaseline('pods', 'webhook', []);
        assert.deepEqual(store.stats(), { checkpoints: 3, entries: 0, states: 0 });
      }));

    test('redelivering the state a sink already has changes nothing', () =>
      withStore(async (store) => {
        const a = pod('d', 'a', { rv: '1' });
        store.recordDelivered(changeEvent('added', a), 'audit');
        store.recordDelivered(changeEvent('added', a), 'audit');
        await store.flush();
        store.recordDelivered(changeEvent('added', a), 'audit');
        await store.flush();
        assert.deepEqual(summary(store.entries('pods', 'audit')), ['d/a@uid-a/1']);
        assert.deepEqual(store.stats(), { checkpoints: 1, entries: 1, states: 1 });
      }));

    test('a delivered deletion leaves a tombstone, not an entry, and confirmed() tells the two apart', () =>
      withStore((store) => {
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '3' })), 'audit');
        store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '4' })), 'audit');
        store.recordDelivered(changeEvent('deleted', pod('d', 'b', { rv: '9' })), 'audit');
        assert.deepEqual(summary(store.entries('pods', 'audit')), ['d/a@uid-a/3']);
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), ['d/b@uid-b/9']);
        assert.deepEqual(store.confirmed('pods', 'audit', makeObjectKey('a', 'd')), {
          uid: 'uid-a',
          resourceVersion: '3',
          deleted: false,
        });
        assert.deepEqual(store.confirmed('pods', 'audit', makeObjectKey('b', 'd')), {
          uid: 'uid-b',
          resourceVersion: '9',
          deleted: true,
        });
        assert.equal(store.confirmed('pods', 'audit', makeObjectKey('c', 'd')), undefined);
        assert.equal(store.confirmed('pods', 'webhook', makeObjectKey('a', 'd')), undefined);
      }));

    test('confirmed() and tombstones() read flushed writes the same as buffered ones', () =>
      withStore(async (store) => {
        store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '3' })), 'audit');
        store.recordDelivered(changeEvent('deleted', pod('d', 'b', { rv: '9' })), 'audit');
        await store.flush();
        assert.deepEqual(store.confirmed('pods', 'audit', makeObjectKey('a', 'd')), {
          uid: 'uid-a',
          resourceVersion: '3',
          deleted: false,
        });
        assert.deepEqual(store.confirmed('pods', 'audit', makeObjectKey('b', 'd')), {
          uid: 'uid-b',
          resourceVersion: '9',
          deleted: true,
        });
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), ['d/b@uid-b/9']);
      }));

    test('an object created again under a deleted name replaces its tombstone', () =>
      withStore(async (store) => {
        store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '9' })), 'audit');
        await store.flush();
        store.recordDelivered(changeEvent('added', pod('d', 'a', { uid: 'second', rv: '12' })), 'audit');
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), []);
        await store.flush();
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), []);
        assert.deepEqual(summary(store.entries('pods', 'audit')), ['d/a@second/12']);
      }));

    test('a confirmed resourceVersion is read back per watcher and drops the tombstones it reached', () =>
      withStore(async (store) => {
        assert.equal(store.confirmedVersion('pods'), undefined);
        store.recordDelivered(changeEvent('deleted', pod('d', 'early', { rv: '9' })), 'audit');
        store.recordDelivered(changeEvent('deleted', pod('d', 'late', { rv: '11' })), 'audit');
        store.recordDelivered(
          changeEvent('deleted', pod('d', 'other', { rv: '5' }), 'other-watcher'),
          'audit',
        );
        store.recordConfirmedVersion('pods', version('10', 1234));
        assert.deepEqual(store.confirmedVersion('pods'), version('10', 1234));
        assert.equal(store.confirmedVersion('other-watcher'), undefined);
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), ['d/late@uid-late/11']);
        await store.flush();
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), ['d/late@uid-late/11']);
        assert.deepEqual(summary(store.tombstones('other-watcher', 'audit')), ['d/other@uid-other/5']);
        assert.deepEqual(store.confirmedVersion('pods'), version('10', 1234));
      }));

    test('forgetting a confirmed resourceVersion leaves nothing to resume from', () =>
      withStore(async (store) => {
        store.recordConfirmedVersion('pods', version('10'));
        await store.flush();
        store.recordConfirmedVersion('pods', version('12'));
        store.forgetConfirmedVersion('pods');
        assert.equal(store.confirmedVersion('pods'), undefined);
        await store.flush();
        assert.equal(store.confirmedVersion('pods'), undefined);
      }));

    test('a baseline drops the tombstones the sink had', () =>
      withStore((store) => {
        store.recordDelivered(changeEvent('deleted', pod('d', 'gone', { rv: '9' })), 'audit');
        store.recordBaseline('pods', 'audit', [pod('d', 'a', { rv: '6' })]);
        assert.deepEqual(summary(store.tombstones('pods', 'audit')), []);
        assert.equal(store.confirmed('pods', 'audit', makeObjectKey('gone', 'd')), undefined);
      }));

    test('a closed store refuses further use with a clear error', () =>
      withStore(async (store) => {
        await store.close();
        assert.throws(
          () => store.entries('pods', 'audit'),
          (err: unknown) => {
            assert.ok(err instanceof CheckpointError);
            assert.equal(err.code, 'ERR_CHECKPOINT_CLOSED');
            return true;
          },
        );
        await store.close();
      }));

    test('flushed and closed writes are read back by a store opened again', { skip: notPersistent }, () =>
      withStore(async (store, _clock, harness) => {
        store.recordBaseline('pods', 'audit', [pod('d', 'base')], (o) => o.metadata?.resourceVersion);
        store.recordDelivered(changeEvent('added', pod('d', 'flushed'), 'pods', '4'), 'audit');
        await store.flush();
        store.recordDelivered(changeEvent('added', pod('d', 'closed')), 'webhook');
        await store.close();
        const again = await harness.open(new FakeClock());
        try {
          assert.deepEqual(summary(again.entries('pods', 'audit')), [
            'd/base@uid-base/1',
            'd/flushed@uid-flushed/1',
          ]);
          assert.deepEqual(summary(again.entries('pods', 'webhook')), ['d/closed@uid-closed/1']);
          assert.deepEqual([...again.entries('pods', 'webhook')][0]?.object, pod('d', 'closed'));
          assert.equal(again.hasCheckpoint('pods', 'audit'), true);
          assert.equal(again.hasCheckpoint('pods', 'never'), false);
          assert.deepEqual(
            [...again.entries('pods', 'audit')].map((e) => `${e.key} since ${e.since ?? '-'}`),
            ['d/base since 1', 'd/flushed since 4'],
            'where each stretch started is read back too',
          );
        } finally {
          again.destroy();
        }
      }),
    );

    test(
      'a confirmed resourceVersion lands in the same flush as the entries recorded before it',
      { skip: notPersistent },
      () =>
        withStore(async (store, clock, harness) => {
          store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '7' })), 'audit');
          store.recordConfirmedVersion('pods', version('7'));
          await clock.tick(1000);
          store.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '8' })), 'audit');
          store.recordDelivered(changeEvent('deleted', pod('d', 'b', { rv: '9' })), 'audit');
          store.recordConfirmedVersion('pods', version('9'));
          store.destroy();
          const again = await harness.open(new FakeClock());
          try {
            assert.deepEqual(again.confirmedVersion('pods'), version('7'));
            assert.deepEqual(summary(again.entries('pods', 'audit')), ['d/a@uid-a/7']);
            assert.deepEqual(summary(again.tombstones('pods', 'audit')), []);
          } finally {
            again.destroy();
          }
        }),
    );

    test('forgetting a confirmed resourceVersion is durable at once', { skip: notPersistent }, () =>
      withStore(async (store, _clock, harness) => {
        store.recordConfirmedVersion('pods', version('10'));
        await store.flush();
        store.forgetConfirmedVersion('pods');
        store.destroy();
        const again = await harness.open(new FakeClock());
        try {
          assert.equal(again.confirmedVersion('pods'), undefined);
        } finally {
          again.destroy();
        }
      }),
    );

    test(
      'a crash loses only unflushed checkpoints, so those deliveries happen again',
      { skip: notPersistent },
      () =>
        withStore(async (store, clock, harness) => {
          store.recordDelivered(changeEvent('added', pod('d', 'early')), 'audit');
          await clock.tick(1000);
          store.recordDelivered(changeEvent('added', pod('d', 'late')), 'audit');
          await clock.tick(999);
          store.destroy();
          const again = await harness.open(new FakeClock());
          try {
            assert.deepEqual(summary(again.entries('pods', 'audit')), ['d/early@uid-early/1']);
          } finally {
            again.destroy();
          }
        }),
    );
  });
}
