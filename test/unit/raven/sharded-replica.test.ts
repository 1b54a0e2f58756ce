/**
 * The sharded replica's loop on the fake clock, against the in-memory Lease collection the lease
 * group's own tests use: when the work runs, on which parts, that a replica's works never
 * overlap, and that the group is left only after the work has drained.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ShardingConfig } from '../../../src/raven/config/raven-config-schema.js';
import { runShardedReplica } from '../../../src/raven/sharded-replica.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { LeaseCollection } from '../controller/lease-collection.js';

const BUCKETS = 8;

const config = (identity: string): ShardingConfig => ({
  enabled: true,
  namespace: 'ns',
  group: 'shards',
  identity,
  field: 'uid',
  buckets: BUCKETS,
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
});

interface Work {
  parts: readonly number[];
  started: number;
  stopped?: number;
  /** Ends the work's drain (it drains until this is called, once its signal aborted). */
  drained: () => void;
}

interface Replica {
  identity: string;
  works: Work[];
  controller: AbortController;
  done: Promise<void>;
  /** `done` has settled. */
  ended: boolean;
  /** What the daemon would show: the parts of the running work. */
  parts: readonly number[];
  members: readonly string[];
}

interface Options {
  /** Drain at once when stopped (default), or wait for `drained()`. */
  drainAtOnce?: boolean;
  /** Works that end by themselves as soon as they start (a fenced checkpoint), counted down. */
  endings?: number;
  /** The first work fails with this error. */
  failure?: Error;
}

function replica(collection: LeaseCollection, clock: FakeClock, identity: string, o: Options = {}): Replica {
  let endings = o.endings ?? 0;
  const r: Replica = {
    identity,
    works: [],
    controller: new AbortController(),
    done: Promise.resolve(),
    ended: false,
    parts: [],
    members: [],
  };
  r.done = runShardedReplica(
    {
      client: collection.clientFor(identity),
      config: config(identity),
      clock,
      logger: silentLogger,
      random: () => 0.5,
      work: (parts, signal) => {
        const running = r.works.find((w) => w.stopped === undefined);
        assert.equal(running, undefined, `${identity} started work on ${parts.join(',')} while another ran`);
        let drained = (): void => undefined;
        const work: Work = { parts, started: clock.now(), drained: () => drained() };
        r.works.push(work);
        if (endings > 0) {
          endings--;
          work.stopped = clock.now();
          return Promise.resolve();
        }
        if (o.failure !== undefined) {
          work.stopped = clock.now();
          return Promise.reject(o.failure);
        }
        return new Promise<void>((resolve) => {
          drained = () => {
            work.stopped = clock.now();
            resolve();
          };
          signal.addEventListener('abort', () => {
            if (o.drainAtOnce !== false) drained();
          });
        });
      },
      onMembers: (members) => {
        r.members = members;
      },
      onParts: (parts) => {
        r.parts = parts;
      },
    },
    r.controller.signal,
  ).finally(() => {
    r.ended = true;
  });
  r.done.catch(() => undefined); // a test that expects the failure awaits it
  return r;
}

const all = Array.from({ length: BUCKETS }, (_, i) => i);

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 250) await clock.tick(250);
}

test('replicas of a group split the parts between them, each working on its own, and one that leaves hands them over', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const a = replica(collection, clock, 'a');
  const b = replica(collection, clock, 'b');
  await advance(clock, 30_000);
  assert.deepEqual(a.members, ['a', 'b']);
  assert.deepEqual(b.members, ['a', 'b']);
  assert.ok(a.parts.length > 0 && b.parts.length > 0, `a: ${a.parts.join(',')}; b: ${b.parts.join(',')}`);
  assert.deepEqual(
    [...a.parts, ...b.parts].sort((x, y) => x - y),
    all,
    'disjoint, and every part owned',
  );
  // b leaves: its work stops, then a works on every part (its own work restarted, never overlapping).
  b.controller.abort();
  await b.done;
  assert.equal(b.works.at(-1)?.stopped !== undefined, true);
  assert.deepEqual(b.parts, []);
  await advance(clock, 20_000);
  assert.deepEqual(a.members, ['a']);
  assert.deepEqual(a.parts, all);
  const last = a.works.at(-1);
  assert.ok(last);
  assert.deepEqual(last.parts, all);
  assert.equal(last.stopped, undefined, 'the work on every part runs');
  a.controller.abort();
  await a.done;
  assert.equal(collection.leases.size, 0, 'both left the group');
});

test('the group is left only once the work has drained', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const a = replica(collection, clock, 'a', { drainAtOnce: false });
  await advance(clock, 20_000);
  assert.deepEqual(a.parts, all);
  a.controller.abort();
  await advance(clock, 60_000);
  assert.equal(a.ended, false, 'still draining');
  assert.equal(collection.leases.size, 1, 'its Lease is kept while it drains: nobody takes its parts');
  a.works.at(-1)?.drained();
  await a.done;
  assert.equal(collection.leases.size, 0);
});

test('a work that ends by itself (its checkpoint fenced) is started again on the parts after the retry period', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const a = replica(collection, clock, 'a', { endings: 2 });
  await advance(clock, 30_000);
  assert.equal(a.works.length, 3, 'two that ended, then a work that runs');
  for (const w of a.works) assert.deepEqual(w.parts, all);
  const [first, second, third] = a.works;
  assert.ok((second?.started ?? 0) - (first?.started ?? 0) >= 2_000, 'waits the retry period');
  assert.ok((third?.started ?? 0) - (second?.started ?? 0) >= 2_000, 'waits the retry period');
  assert.equal(third?.stopped, undefined);
  assert.deepEqual(a.parts, all);
  a.controller.abort();
  await a.done;
});

test('a work that fails ends the replica with its error, after leaving the group', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const failure = new Error('the sink configuration is broken');
  const a = replica(collection, clock, 'a', { failure });
  await advance(clock, 20_000);
  assert.equal(a.ended, true);
  await assert.rejects(a.done, (err) => err === failure);
  assert.equal(a.works.length, 1, 'not started again');
  assert.equal(collection.leases.size, 0, 'it left the group');
});

/**
 * Step through time recording, per part, how long it went with no running work, and asserting at
 * every step that no part is worked on by two replicas at once.
 */
async function watchParts(clock: FakeClock, ms: number, replicas: Replica[], unwatched: Map<number, number>) {
  const since = new Map<number, number>();
  for (let t = 0; t < ms; t += 50) {
    await clock.tick(50);
    const holders = new Map<number, string[]>();
    for (const r of replicas)
      for (const w of r.works)
        if (w.stopped === undefined)
          for (const p of w.parts) holders.set(p, [...(holders.get(p) ?? []), r.identity]);
    for (const part of all) {
      const who = holders.get(part) ?? [];
      assert.ok(who.length <= 1, `at ${clock.now()} part ${part} is worked on by ${who.join(' and ')}`);
      if (who.length === 0) since.set(part, since.get(part) ?? clock.now());
      else {
        const from = since.get(part);
        if (from !== undefined) unwatched.set(part, Math.max(unwatched.get(part) ?? 0, clock.now() - from));
        since.delete(part);
      }
    }
  }
  for (const [part, from] of since)
    unwatched.set(part, Math.max(unwatched.get(part) ?? 0, clock.now() - from));
}

test('a replica that joins a running group takes its share within 2 s of its last owner giving it up, never while another holds it', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const a = replica(collection, clock, 'a');
  const b = replica(collection, clock, 'b');
  await advance(clock, 30_000);
  assert.deepEqual(
    [...a.parts, ...b.parts].sort((x, y) => x - y),
    all,
  );
  const joined = clock.now();
  const c = replica(collection, clock, 'c');
  const unwatched = new Map<number, number>();
  await watchParts(clock, 20_000, [a, b, c], unwatched);
  assert.deepEqual(c.members, ['a', 'b', 'c']);
  assert.ok(c.parts.length > 0, 'c has a share');
  assert.deepEqual(
    [...a.parts, ...b.parts, ...c.parts].sort((x, y) => x - y),
    all,
    'every part owned',
  );
  const started = c.works[0]?.started ?? Infinity;
  // Before the acknowledgement, a joiner waited a whole lease duration (15 s).
  assert.ok(started - joined <= 5_000, `c started working ${started - joined} ms after it joined`);
  const longest = Math.max(...unwatched.values());
  assert.ok(longest <= 2_000, `a part went unwatched for ${longest} ms during the hand-over`);
  for (const r of [a, b, c]) r.controller.abort();
  await Promise.all([a.done, b.done, c.done]);
});
