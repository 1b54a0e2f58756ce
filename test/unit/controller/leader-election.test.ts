import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { LeaderElector, microTime, type LeaseClient } from '../../../src/controller/leader-election.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { LeaseCollection } from './lease-collection.js';

/** The collection, seen as the one Lease the candidates contend for. */
class LeaseServer extends LeaseCollection {
  get lease(): Lease | undefined {
    return this.leases.get('lock');
  }
}

interface Candidate {
  elector: LeaderElector;
  controller: AbortController;
  done: Promise<void>;
  log: { event: string; at: number; epoch?: number }[];
}

function candidate(server: LeaseServer, clock: FakeClock, identity: string): Candidate {
  const log: Candidate['log'] = [];
  const elector = new LeaderElector({
    client: server.clientFor(identity),
    namespace: 'ns',
    name: 'lock',
    identity,
    clock,
    random: () => 0.5,
    onStartedLeading: async (signal, term) => {
      log.push({ event: 'start', at: clock.now(), epoch: term.epoch });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    onStoppedLeading: () => log.push({ event: 'stop', at: clock.now() }),
  });
  const controller = new AbortController();
  return { elector, controller, done: elector.run(controller.signal), log };
}

test('of two candidates exactly one leads, and both know who', async () => {
  const clock = new FakeClock();
  const server = new LeaseServer();
  const a = candidate(server, clock, 'a');
  const b = candidate(server, clock, 'b');
  await clock.tick(30_000);
  assert.equal([a, b].filter((c) => c.elector.isLeader).length, 1);
  const leader = a.elector.isLeader ? 'a' : 'b';
  assert.equal(server.lease?.spec?.holderIdentity, leader);
  assert.equal(a.elector.leader, leader);
  assert.equal(b.elector.leader, leader);
  a.controller.abort();
  b.controller.abort();
  await clock.tick(10_000);
  await Promise.all([a.done, b.done]);
});

test('a leader that cannot renew stops before another candidate can take over', async () => {
  const clock = new FakeClock();
  const server = new LeaseServer();
  const a = candidate(server, clock, 'a');
  await clock.tick(1_000);
  assert.equal(a.elector.isLeader, true);
  const b = candidate(server, clock, 'b');
  await clock.tick(10_000);
  assert.equal(b.elector.isLeader, false);
  const cutAt = clock.now();
  server.unreachable.add('a');
  await clock.tick(30_000);
  const stopped = a.log.find((e) => e.event === 'stop');
  const started = b.log.find((e) => e.event === 'start');
  assert.ok(stopped && started, 'a stopped and b started');
  assert.ok(
    stopped.at - cutAt <= 10_000 + 2_000,
    `a stopped ${stopped.at - cutAt} ms after losing the server (renew deadline 10 s)`,
  );
  assert.ok(stopped.at < started.at, `a stopped (${stopped.at}) before b started (${started.at})`);
  assert.equal(server.lease?.spec?.holderIdentity, 'b');
  assert.equal(server.lease.spec.leaseTransitions, 1);
  // Each term's epoch is the Lease's transitions when it began: the successor's is higher.
  assert.equal(a.log.find((e) => e.event === 'start')?.epoch, 0);
  assert.equal(started.epoch, 1);
  a.controller.abort();
  b.controller.abort();
  await clock.tick(10_000);
  await Promise.all([a.done, b.done]);
});

test('a release one version behind the lease (a renewal that reached the server as it was cut short) reads it again and releases', async () => {
  const clock = new FakeClock();
  const server = new LeaseServer();
  const a = candidate(server, clock, 'a');
  await clock.tick(1_000);
  assert.equal(server.lease?.spec?.holderIdentity, 'a');
  // The lease moved on without the elector seeing it: still a's, a newer version.
  const current = server.leases.get('lock');
  assert.ok(current !== undefined);
  const renewed = `${current.metadata?.resourceVersion ?? ''}-renewed`;
  server.leases.set('lock', { ...current, metadata: { ...current.metadata, resourceVersion: renewed } });
  a.controller.abort();
  await clock.tick(100);
  await a.done;
  assert.equal(server.leases.get('lock')?.spec?.holderIdentity, '', 'released despite the conflict');
});

test('a graceful stop releases the lease and the successor takes over at its next retry', async () => {
  const clock = new FakeClock();
  const server = new LeaseServer();
  const a = candidate(server, clock, 'a');
  await clock.tick(1_000);
  const b = candidate(server, clock, 'b');
  await clock.tick(5_000);
  const stopAt = clock.now();
  a.controller.abort();
  await clock.tick(100);
  await a.done;
  assert.equal(server.lease?.spec?.holderIdentity, '', 'released');
  await clock.tick(3_000);
  const started = b.log.find((e) => e.event === 'start');
  assert.ok(started, 'b took over');
  assert.ok(
    started.at - stopAt <= 2_000 * 1.2 + 100,
    `within one retry period, not a lease duration (${started.at - stopAt} ms)`,
  );
  b.controller.abort();
  await clock.tick(10_000);
  await b.done;
});

test('a stop that comes while the lease is being taken starts no work, and the lease is given back', async () => {
  const clock = new FakeClock();
  const server = new LeaseServer();
  const controller = new AbortController();
  const inner = server.clientFor('a');
  // The stop arrives after the apiserver granted the lease, before the answer is read: the
  // request cannot be cancelled any more, so the candidate holds a lease it must not use.
  const client: LeaseClient = {
    request: async <T>(options: { method: string; path: string; body?: unknown }): Promise<T> => {
      const answer = await inner.request<T>(options);
      if (options.method === 'POST') controller.abort(new Error('interrupted'));
      return answer;
    },
  };
  let started = 0;
  const elector = new LeaderElector({
    client,
    namespace: 'ns',
    name: 'lock',
    identity: 'a',
    clock,
    random: () => 0.5,
    onStartedLeading: () => {
      started++;
    },
  });
  const done = elector.run(controller.signal);
  await clock.tick(100);
  await done;
  assert.equal(started, 0, 'no work started under a signal that had aborted');
  assert.equal(elector.isLeader, false);
  assert.equal(server.lease?.spec?.holderIdentity, '', 'released');
});

test('a lease held by a live leader is not taken even when the candidate clock is far ahead', async () => {
  const clock = new FakeClock();
  const server = new LeaseServer();
  const a = candidate(server, clock, 'a');
  await clock.tick(1_000);
  // The renewTime written by a different machine says nothing to b: b measures on its own clock.
  const lease = server.lease;
  assert.ok(lease?.spec);
  lease.spec.renewTime = microTime(0);
  const b = candidate(server, clock, 'b');
  await clock.tick(60_000);
  assert.equal(a.elector.isLeader, true);
  assert.equal(b.elector.isLeader, false);
  a.controller.abort();
  b.controller.abort();
  await clock.tick(10_000);
  await Promise.all([a.done, b.done]);
});

test('inconsistent timings are refused with a message naming both settings', () => {
  assert.throws(
    () =>
      new LeaderElector({
        client: new LeaseServer().clientFor('x'),
        namespace: 'n',
        name: 'l',
        identity: 'x',
        leaseDurationMs: 10_000,
        renewDeadlineMs: 10_000,
        onStartedLeading: () => undefined,
      }),
    /renewDeadlineMs \(10000\) must be less than leaseDurationMs \(10000\)/,
  );
});

test('MicroTime has six fractional digits', () => {
  assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z');
});
