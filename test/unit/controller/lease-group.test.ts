/**
 * LeaseGroup on the fake clock, against an in-memory Lease collection (optimistic concurrency,
 * label selection, delete preconditions) that can cut one member off: a member that cannot reach
 * the apiserver for a chosen stretch is a fault the real apiserver cannot produce per client on
 * demand. `test/e2e/lease-group.e2e.test.ts` runs the group against the real apiserver.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LEASE_GROUP_LABEL, LeaseGroup, SETTLED_ANNOTATION } from '../../../src/controller/lease-group.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { LeaseCollection } from './lease-collection.js';

interface Member {
  identity: string;
  group: LeaseGroup;
  controller: AbortController;
  done: Promise<void>;
  /** Every view reported, with when. */
  views: { at: number; members: readonly string[] }[];
}

function member(collection: LeaseCollection, clock: FakeClock, identity: string): Member {
  const views: Member['views'] = [];
  const group = new LeaseGroup({
    client: collection.clientFor(identity),
    namespace: 'ns',
    group: 'shards',
    identity,
    clock,
    random: () => 0.5,
    onChange: (members) => views.push({ at: clock.now(), members }),
  });
  const controller = new AbortController();
  return { identity, group, controller, done: group.run(controller.signal), views };
}

/** When `m` first reported a view that satisfies `when`, after `from`. */
const firstView = (m: Member, when: (members: readonly string[]) => boolean, from = 0): number | undefined =>
  m.views.find((v) => v.at >= from && when(v.members))?.at;

/**
 * Step through time and check, at every step, that no member counts itself in while another
 * member that is in does not count it: the newcomer never takes a share someone still works on.
 */
async function advance(clock: FakeClock, ms: number, members: Member[]): Promise<void> {
  for (let t = 0; t < ms; t += 250) {
    await clock.tick(250);
    for (const m of members) {
      if (!m.group.members.includes(m.identity)) continue;
      for (const other of members)
        if (other !== m && other.group.members.includes(other.identity))
          assert.ok(
            other.group.members.includes(m.identity),
            `at ${clock.now()} ${m.identity} counts itself in but ${other.identity} (in) does not: ${other.group.members.join(',')}`,
          );
    }
  }
}

test('members that start together count each other at once, and themselves a lease duration later', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const collection = new LeaseCollection();
  const all = ['a', 'b', 'c'].map((id) => member(collection, clock, id));
  await advance(clock, 5_000, all);
  for (const m of all)
    assert.deepEqual(
      m.group.members,
      all.map((o) => o.identity).filter((id) => id !== m.identity),
      `${m.identity} at 5 s`,
    );
  await advance(clock, 15_000, all);
  for (const m of all) {
    assert.deepEqual(m.group.members, ['a', 'b', 'c']);
    const selfIn = firstView(m, (ms) => ms.includes(m.identity)) ?? Infinity;
    assert.ok(selfIn - start >= 15_000, `${m.identity} counted itself in at ${selfIn - start} ms`);
  }
  // Each holds a Lease of its own, labelled with the group.
  assert.deepEqual(
    [...collection.leases.values()]
      .map((l) => [l.spec?.holderIdentity, l.metadata?.labels?.[LEASE_GROUP_LABEL]])
      .sort(),
    [
      ['a', 'shards'],
      ['b', 'shards'],
      ['c', 'shards'],
    ],
  );
  for (const m of all) m.controller.abort();
  await Promise.all(all.map((m) => m.done));
  assert.equal(collection.leases.size, 0, 'each member deleted its Lease on the way out');
});

test('a member cut off steps out at the renew deadline, before the others drop it at the lease duration', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const all = ['a', 'b', 'c'].map((id) => member(collection, clock, id));
  await advance(clock, 20_000, all);
  const [a, b, c] = all as [Member, Member, Member];
  collection.unreachable.add('c');
  const cut = clock.now();
  await advance(clock, 25_000, all);
  const stepped = firstView(c, (ms) => !ms.includes('c'), cut);
  const droppedByA = firstView(a, (ms) => !ms.includes('c'), cut);
  const droppedByB = firstView(b, (ms) => !ms.includes('c'), cut);
  assert.ok(stepped !== undefined && droppedByA !== undefined && droppedByB !== undefined);
  assert.ok(stepped - cut <= 10_000 + 2_400, `c stepped out ${stepped - cut} ms after the cut`);
  assert.ok(stepped < droppedByA && stepped < droppedByB, 'c was out before the others shared out its part');
  assert.ok(
    droppedByA - cut >= 13_000 && droppedByA - cut <= 15_000 + 2_400 * 2,
    `a dropped c after ${droppedByA - cut} ms`,
  );
  assert.deepEqual(a.group.members, ['a', 'b']);
  assert.deepEqual(c.group.members, ['a', 'b'], 'c, out, keeps its last view of the others');

  // Back again: the others count c in at their next round; c itself a lease duration later.
  collection.unreachable.delete('c');
  const back = clock.now();
  await advance(clock, 20_000, all);
  const seenByA = firstView(a, (ms) => ms.includes('c'), back) ?? Infinity;
  const selfIn = firstView(c, (ms) => ms.includes('c'), back) ?? Infinity;
  assert.ok(seenByA - back <= 2_400 * 2, `a counted c in ${seenByA - back} ms after it came back`);
  assert.ok(selfIn - back >= 15_000, `c counted itself in ${selfIn - back} ms after it came back`);
  for (const m of all) assert.deepEqual(m.group.members, ['a', 'b', 'c']);
  for (const m of all) m.controller.abort();
  await Promise.all(all.map((m) => m.done));
});

test('a member that leaves steps out, deletes its Lease, and the others share out its part at their next round', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const all = ['a', 'b'].map((id) => member(collection, clock, id));
  await advance(clock, 20_000, all);
  const [a, b] = all as [Member, Member];
  b.controller.abort();
  await b.done;
  const left = clock.now();
  assert.deepEqual(b.views.at(-1)?.members, ['a'], 'b reported itself out before it deleted its Lease');
  assert.equal(collection.leases.size, 1);
  await advance(clock, 5_000, [a]);
  const dropped = firstView(a, (ms) => !ms.includes('b'), left) ?? Infinity;
  assert.ok(dropped - left <= 2_400 + 250, `a dropped b ${dropped - left} ms after it left`);
  assert.deepEqual(a.group.members, ['a']);
  a.controller.abort();
  await a.done;
});

test('the Lease a member left behind is deleted by the others after four lease durations, and the member can rejoin', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const all = ['a', 'b', 'c'].map((id) => member(collection, clock, id));
  await advance(clock, 20_000, all);
  const [a, , c] = all as [Member, Member, Member];
  const cLease = c.group.leaseName;
  collection.unreachable.add('c');
  const cut = clock.now();
  await advance(clock, 55_000, all);
  assert.ok(collection.leases.has(cLease), 'kept while it may still be renewed (55 s < 4 x 15 s)');
  await advance(clock, 10_000, all);
  assert.ok(!collection.leases.has(cLease), `deleted ${clock.now() - cut} ms after the cut`);
  assert.deepEqual(a.group.members, ['a', 'b']);

  collection.unreachable.delete('c');
  await advance(clock, 20_000, all);
  assert.ok(collection.leases.has(cLease), 'c made its Lease again');
  for (const m of all) assert.deepEqual(m.group.members, ['a', 'b', 'c']);
  for (const m of all) m.controller.abort();
  await Promise.all(all.map((m) => m.done));
  assert.equal(collection.leases.size, 0);
});

test('a bad group or timing is refused naming the option', () => {
  const client = new LeaseCollection().clientFor('x');
  const base = { client, namespace: 'ns', identity: 'x' };
  assert.throws(
    () => new LeaseGroup({ ...base, group: 'Shards' }),
    /group: expected a DNS label of at most 46 characters/,
  );
  assert.throws(
    () => new LeaseGroup({ ...base, group: 'shards', identity: '' }),
    /identity: expected a non-empty name/,
  );
  assert.throws(
    () => new LeaseGroup({ ...base, group: 'shards', leaseDurationMs: 5_000, renewDeadlineMs: 5_000 }),
    /renewDeadlineMs \(5000\) must be less than leaseDurationMs \(5000\)/,
  );
});

test('a joining member counts itself in as soon as every other member settled a view that includes it, and not before', async () => {
  const clock = new FakeClock();
  const collection = new LeaseCollection();
  const settling = (identity: string): Member => {
    const m = member(collection, clock, identity);
    // A member whose work follows the group at once: it settles every view it is given.
    const views = m.views;
    const push = views.push.bind(views);
    views.push = (...items) => {
      for (const v of items) void m.group.settle(v.members);
      return push(...items);
    };
    return m;
  };
  const a = settling('a');
  const b = settling('b');
  await advance(clock, 20_000, [a, b]);
  assert.deepEqual(a.group.members, ['a', 'b']);
  const joined = clock.now();
  // c settles nothing itself; a and b acknowledge it.
  const c = member(collection, clock, 'c');
  let cIn: number | undefined;
  for (let t = 0; t < 15_000 && cIn === undefined; t += 50) {
    await clock.tick(50);
    if (c.group.members.includes('c')) {
      cIn = clock.now();
      for (const other of [a, b]) {
        const lease = [...collection.leases.values()].find((l) => l.spec?.holderIdentity === other.identity);
        const settled = lease?.metadata?.annotations?.[SETTLED_ANNOTATION] ?? '';
        assert.ok(
          settled.split(',').includes('c'),
          `${other.identity} had not settled a view with c: ${settled}`,
        );
      }
    }
  }
  assert.ok(cIn !== undefined, 'c counted itself in before a lease duration');
  assert.ok(cIn - joined <= 5_000, `c counted itself in ${cIn - joined} ms after joining`);
  for (const m of [a, b, c]) m.controller.abort();
  await Promise.all([a.done, b.done, c.done]);
});
