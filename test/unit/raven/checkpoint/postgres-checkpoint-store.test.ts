/**
 * The PostgreSQL checkpoint store against a real PostgreSQL (Debian's package, on loopback): the
 * shared contract, then what only a shared store has: the fence (a deposed replica's writes are
 * refused, a takeover sees every committed write), creating the tables from several replicas at
 * once, and surviving a server restart.
 */
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { CheckpointError } from '../../../../src/raven/checkpoint/checkpoint-error.js';
import {
  PostgresCheckpointStore,
  type PostgresCheckpointStoreOptions,
} from '../../../../src/raven/checkpoint/postgres-checkpoint-store.js';
import { makeObjectKey } from '../../../../src/client/object-key.js';
import { FakeClock } from '../../../../src/testing/fake-clock.js';
import { PostgresServer } from '../../../harness/postgres-server.js';
import { checkpointStoreContract, type CheckpointHarness } from './checkpoint-store-contract.js';
import { changeEvent, pod } from './fixtures.js';

let server: PostgresServer | undefined;
let schemas = 0;

before(async () => {
  server = await PostgresServer.start();
  await server.query('CREATE DATABASE checkpoints');
});

after(async () => {
  await server?.stop();
});

const url = (): string => {
  if (server === undefined) throw new Error('the PostgreSQL server is not started');
  return server.url('checkpoints');
};

/** A fresh schema per harness: tests never see each other's rows. */
function postgresHarness(): CheckpointHarness {
  const schema = `contract_${++schemas}`;
  let last: PostgresCheckpointStore | undefined;
  return {
    persists: true,
    async open(clock) {
      await last?.idle();
      // The contract is written for interval flushing (the SQLite store's); group commit is tested below.
      last = await PostgresCheckpointStore.open({ url: url(), schema, clock, flushIntervalMs: 1000 });
      return last;
    },
    async cleanup() {
      await last?.idle();
      await server?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`, [], 'checkpoints');
    },
  };
}

checkpointStoreContract('PostgresCheckpointStore', postgresHarness);

describe('PostgresCheckpointStore', () => {
  const open = (schema: string, options: Partial<PostgresCheckpointStoreOptions> = {}) =>
    PostgresCheckpointStore.open({ url: url(), schema, clock: new FakeClock(), ...options });

  const isCode =
    (code: string) =>
    (err: unknown): boolean => {
      assert.ok(err instanceof CheckpointError, String(err));
      assert.equal(err.code, code);
      return true;
    };

  test('a deposed replica cannot record deliveries once a newer epoch took the fence', async () => {
    const fencedCalls: CheckpointError[] = [];
    const old = await open('fence_a', {
      holder: 'raven-a',
      epoch: 3,
      onFenced: (err) => fencedCalls.push(err),
    });
    old.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '5' })), 'audit');
    await old.flush();

    const next = await open('fence_a', { holder: 'raven-b', epoch: 4 });
    assert.deepEqual(
      next.entries('pods', 'audit').map((e) => e.resourceVersion),
      ['5'],
      'the new holder reads what the old one committed',
    );

    old.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '9' })), 'audit');
    old.recordDelivered(changeEvent('added', pod('d', 'late', { rv: '9' })), 'audit');
    await assert.rejects(old.flush(), isCode('ERR_CHECKPOINT_FENCED'));
    assert.equal(fencedCalls.length, 1);
    assert.match(fencedCalls[0]?.message ?? '', /held by raven-b at epoch 4; raven-a at epoch 3/);
    await assert.rejects(old.flush(), isCode('ERR_CHECKPOINT_FENCED'), 'and stays refused');
    old.destroy();

    await next.close();
    const reader = await open('fence_a', { holder: 'raven-c', epoch: 5 });
    try {
      assert.deepEqual(
        reader.entries('pods', 'audit').map((e) => `${e.key}@${e.resourceVersion ?? '-'}`),
        ['d/a@5'],
        'nothing the deposed replica recorded after the takeover was stored',
      );
    } finally {
      await reader.close();
    }
  });

  test('a replica with an older epoch cannot take the fence back', async () => {
    const current = await open('fence_b', { holder: 'raven-b', epoch: 7 });
    await assert.rejects(open('fence_b', { holder: 'raven-a', epoch: 6 }), (err: unknown) => {
      isCode('ERR_CHECKPOINT_FENCED')(err);
      assert.match((err as Error).message, /held by raven-b at epoch 7/);
      return true;
    });
    await assert.rejects(
      open('fence_b', { holder: 'raven-x', epoch: 7 }),
      isCode('ERR_CHECKPOINT_FENCED'),
      'the same epoch is only the same holder',
    );
    current.recordDelivered(changeEvent('added', pod('d', 'a')), 'audit');
    await current.close();
  });

  test('without an epoch the last replica to open holds the fence', async () => {
    const first = await open('fence_c', { holder: 'one' });
    const second = await open('fence_c', { holder: 'two' });
    assert.equal(second.fence.epoch, first.fence.epoch + 1);
    first.recordConfirmedVersion('pods', { resourceVersion: '10', scope: 's', sinks: [], at: 0 });
    await assert.rejects(first.flush(), isCode('ERR_CHECKPOINT_FENCED'));
    first.destroy();
    await second.close();
  });

  test('a writer holding several fences (a sharded replica) loses its writes with any one of them', async () => {
    const a = await open('fence_parts', { holder: 'a', fence: ['part-2', 'part-0', 'part-1'] });
    assert.deepEqual(
      a.fences.map((f) => `${f.name}@${f.epoch}`),
      ['part-0@1', 'part-1@1', 'part-2@1'],
    );
    a.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '5' })), 'audit');
    await a.flush();
    // Another writer takes parts 1 and 3: part 1 was a's, so every later write of a is refused.
    const b = await open('fence_parts', { holder: 'b', fence: ['part-1', 'part-3'] });
    assert.deepEqual(
      b.fences.map((f) => `${f.name}@${f.epoch}`),
      ['part-1@2', 'part-3@1'],
    );
    a.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '6' })), 'audit');
    await assert.rejects(a.flush(), (err: unknown) => {
      isCode('ERR_CHECKPOINT_FENCED')(err);
      assert.match((err as Error).message, /fence part-1\) is held by b at epoch 2/);
      return true;
    });
    a.destroy();
    // A writer whose fences nobody else took writes on.
    const c = await open('fence_parts', { holder: 'c', fence: ['part-4'] });
    c.recordDelivered(changeEvent('added', pod('d', 'c', { rv: '7' })), 'audit');
    await c.flush();
    await b.close();
    await c.close();
    const reader = await open('fence_parts', { holder: 'reader', fence: 'reader' });
    try {
      assert.deepEqual(
        reader.entries('pods', 'audit').map((e) => `${e.key}@${e.resourceVersion ?? '-'}`),
        ['d/a@5', 'd/c@7'],
      );
    } finally {
      await reader.close();
    }
    await assert.rejects(open('fence_parts', { fence: ['x', 'y'], epoch: 3 }), /omit epoch/);
  });

  test('a takeover waits for the write in flight and then sees it', async () => {
    const old = await open('fence_d', { holder: 'a', epoch: 1 });
    for (let i = 0; i < 2000; i++)
      old.recordDelivered(changeEvent('added', pod('d', `p${i}`, { rv: String(i + 1) })), 'audit');
    const writing = old.flush();
    const next = await open('fence_d', { holder: 'b', epoch: 2 });
    // Either the flush committed before the takeover (and the new holder has all 2000 entries)
    // or it was refused (and the new holder has none): never half.
    const outcome = await writing.then(
      () => 'committed',
      (err: unknown) => (err as CheckpointError).code,
    );
    const count = next.entries('pods', 'audit').length;
    if (outcome === 'committed') assert.equal(count, 2000);
    else {
      assert.equal(outcome, 'ERR_CHECKPOINT_FENCED');
      assert.equal(count, 0);
    }
    old.destroy();
    await next.close();
  });

  test('replicas starting together create the tables once', async () => {
    const stores = await Promise.allSettled(
      ['r1', 'r2', 'r3', 'r4'].map((holder) => open('together', { holder })),
    );
    // Each open takes the fence in turn; all of them open (the last one holds it).
    for (const s of stores)
      assert.equal(s.status, 'fulfilled', s.status === 'rejected' ? String(s.reason) : '');
    for (const s of stores) if (s.status === 'fulfilled') s.value.destroy();
  });

  test('a version 1 schema is migrated: its entries kept without a stretch, new entries keep theirs', async () => {
    const first = await open('version1');
    first.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '5' })), 'audit');
    await first.close();
    // Back to version 1 as Raven wrote it before entries kept where their stretch started.
    await server?.query(
      `ALTER TABLE version1.delivered DROP COLUMN since;
       UPDATE version1.meta SET value = '1' WHERE name = 'schema_version'`,
      [],
      'checkpoints',
    );
    const store = await open('version1');
    assert.deepEqual(
      [...store.entries('pods', 'audit')].map(
        (e) => `${e.key}@${e.resourceVersion ?? '-'} since ${e.since ?? '-'}`,
      ),
      ['d/a@5 since -'],
    );
    store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '7' }), 'pods', '7'), 'audit');
    await store.close();
    const again = await open('version1');
    assert.deepEqual(
      [...again.entries('pods', 'audit')].map((e) => `${e.key} since ${e.since ?? '-'}`),
      ['d/a since -', 'd/b since 7'],
    );
    await again.close();
    const rows = await server?.query<{ value: string }>(
      "SELECT value FROM version1.meta WHERE name = 'schema_version'",
      [],
      'checkpoints',
    );
    assert.equal(rows?.[0]?.value, '2');
  });

  test('what is stored is shared between sinks and collected, in the tables too', async () => {
    const store = await open('stats');
    for (const sink of ['audit', 'webhook', 'slack'])
      store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), sink);
    await store.flush();
    assert.deepEqual(await store.storedStats(), { checkpoints: 3, entries: 3, states: 1 });
    store.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '2' })), 'audit');
    store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '3' })), 'slack');
    await store.flush();
    assert.deepEqual(await store.storedStats(), { checkpoints: 3, entries: 2, states: 2 });
    store.recordBaseline('pods', 'webhook', []);
    await store.flush();
    assert.deepEqual(await store.storedStats(), { checkpoints: 3, entries: 1, states: 1 });
    assert.deepEqual(store.confirmed('pods', 'slack', makeObjectKey('a', 'd')), {
      uid: 'uid-a',
      resourceVersion: '3',
      deleted: true,
    });
    await store.close();
  });

  test('values travel inlined in the SQL: quotes, backslashes and SQL in them come back as written', async () => {
    const hostile = String.raw`it's \' a \\ back\slash'); DROP SCHEMA literals CASCADE; -- $$ $1 E'\x00'`;
    const WATCHER = "watch'er\\";
    const object = pod('d', 'a', { rv: '7' });
    object.metadata = { ...object.metadata, annotations: { note: hostile, 'a"b': '\n\t"' } };
    const store = await open('literals');
    store.recordDelivered(changeEvent('added', object, WATCHER), `sink ${hostile}`);
    store.recordDelivered(changeEvent('deleted', pod('d', 'old', { rv: '5' }), WATCHER), `sink ${hostile}`);
    store.recordDelivered(changeEvent('deleted', pod('d', 'gone', { rv: '8' }), WATCHER), `sink ${hostile}`);
    // Reaches the tombstone at 5 (dropped in the same write), not the one at 8.
    store.recordConfirmedVersion(WATCHER, { resourceVersion: '7', scope: hostile, sinks: [hostile], at: 1 });
    await store.close();
    const again = await open('literals');
    const [entry] = again.entries(WATCHER, `sink ${hostile}`);
    assert.deepEqual(entry?.object, object);
    assert.deepEqual(
      again.tombstones(WATCHER, `sink ${hostile}`).map((t) => t.key),
      [makeObjectKey('gone', 'd')],
    );
    assert.deepEqual(again.confirmedVersion(WATCHER), {
      resourceVersion: '7',
      scope: hostile,
      sinks: [hostile],
      at: 1,
    });
    await again.close();
  });

  test('by default deliveries wait up to 100 ms and are written together', async () => {
    const clock = new FakeClock();
    const store = await open('linger', { clock });
    const stored = async (): Promise<number> =>
      Number(
        (
          await server?.query<{ n: string }>('SELECT count(*) AS n FROM linger.delivered', [], 'checkpoints')
        )?.[0]?.n,
      );
    store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), 'audit');
    await clock.tick(50);
    store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '2' })), 'audit');
    await store.idle();
    assert.equal(await stored(), 0, 'nothing written before 100 ms');
    await clock.tick(50);
    await store.idle();
    assert.equal(await stored(), 2, 'both written at 100 ms, in one write');
    assert.equal(clock.pending, 0);
    await store.close();
  });

  test('with flushIntervalMs 0 each delivery is written as soon as the write before it committed (group commit)', async () => {
    const clock = new FakeClock();
    const store = await open('burst', { clock, flushIntervalMs: 0 });
    const reader = async (): Promise<string[]> =>
      (
        (await server?.query<{ key: string; resource_version: string }>(
          'SELECT d.key, st.resource_version FROM burst.delivered d JOIN burst.states st ON st.id = d.state ORDER BY d.key',
          [],
          'checkpoints',
        )) ?? []
      ).map((r) => `${r.key}@${r.resource_version}`);
    store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), 'audit');
    // A burst while the first write is in flight goes out as the next write, all together.
    for (let i = 2; i <= 50; i++)
      store.recordDelivered(changeEvent('added', pod('d', `b${i}`, { rv: `${i}` })), 'audit');
    // No timer is advanced: only the writes themselves are waited for.
    // Each round waits for the writes in flight; two writes carry the 50, a few rounds are plenty.
    for (let round = 0; round < 20 && (await reader()).length < 50; round++) {
      await store.idle();
      await delay(10);
    }
    assert.equal((await reader()).length, 50, 'every delivery written without a flush');
    assert.equal((await reader())[0], 'd/a@1');
    assert.equal(clock.pending, 0, 'no timer is involved');
    await store.close();
  });

  test('a flush while the server is down is kept and written once it is back', async () => {
    const clock = new FakeClock();
    const store = await open('outage', { clock, timeoutMs: 2000 });
    store.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '1' })), 'audit');
    await store.flush();
    await server?.down();
    store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '2' })), 'audit');
    await assert.rejects(store.flush(), isCode('ERR_CHECKPOINT_WRITE'));
    store.recordDelivered(changeEvent('modified', pod('d', 'b', { rv: '3' })), 'audit');
    await server?.up();
    await store.flush();
    await store.close();
    const again = await open('outage');
    try {
      assert.deepEqual(
        again.entries('pods', 'audit').map((e) => `${e.key}@${e.resourceVersion ?? '-'}`),
        ['d/a@1', 'd/b@3'],
      );
    } finally {
      await again.close();
    }
  });

  test('a bad URL or an unreachable server is refused at open, without showing the URL', async () => {
    await assert.rejects(
      PostgresCheckpointStore.open({ url: 'postgres://raven:s3cret@127.0.0.1:1/x', timeoutMs: 2000 }),
      (err: unknown) => {
        isCode('ERR_CHECKPOINT_UNREADABLE')(err);
        assert.doesNotMatch((err as Error).message, /s3cret/);
        return true;
      },
    );
  });
});
