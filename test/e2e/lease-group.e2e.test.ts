/**
 * A lease group between OS processes on the real apiserver, with short timings (lease 6 s, renew
 * deadline 4 s, retry 1 s): three members come to see the same three names; a SIGKILLed member
 * drops out of the others' view once its Lease has not changed for a lease duration, and its
 * Lease, left behind, is deleted by the others after four; a member that joins is counted by everyone, itself last; a
 * member stopped with SIGTERM deletes its Lease and exits 0, and the others drop it.
 *
 * How long each change took is reported, not asserted: on a loaded machine process scheduling
 * adds seconds. The timing rules (a newcomer counts itself in only after the others have; a
 * member cut off steps out before the others drop it) are asserted on virtual time in
 * test/unit/controller/lease-group.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Lease, LeaseList } from 'kubernetes-types/coordination/v1.js';
import { repoRoot } from '../harness/binaries.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { Replica, type LogLine } from './replica-process.js';

const timings = ['--lease-duration-ms', '6000', '--renew-deadline-ms', '4000', '--retry-period-ms', '1000'];
const member = join(repoRoot, 'test', 'e2e', 'lease-group-member.ts');

test(
  'a lease group follows members that join, crash and leave, each holding a Lease of its own',
  { timeout: 900_000 },
  async (t) => {
    const plane = await sharedCluster();
    const ns = await freshNamespace(plane, 'lg');
    const replicas: Replica[] = [];
    t.after(async () => {
      for (const r of replicas) r.kill('SIGKILL');
      await Promise.all(replicas.map((r) => r.exited));
      await deleteNamespace(plane, ns);
    });
    const start = (identity: string): Replica => {
      const replica = new Replica(identity, member, [
        ...['--kubeconfig', plane.kubeconfig, '--namespace', ns, '--group', 'shards'],
        ...timings,
      ]);
      replicas.push(replica);
      return replica;
    };
    const sees = (names: string[]) => (line: LogLine) =>
      line.msg === 'members' && JSON.stringify(line.members) === JSON.stringify(names);
    /** Each of `replicas` has printed the view `names`, received after `after`; when the last did. */
    const converge = async (group: Replica[], names: string[], after: number): Promise<number> => {
      const lines = await Promise.all(
        group.map((r) =>
          r.line((l) => l.receivedAt >= after && sees(names)(l), `the members ${names.join(',')}`),
        ),
      );
      return Math.max(...lines.map((l) => l.receivedAt)) - after;
    };
    const leases = async (): Promise<Lease[]> => {
      const { status, body } = await plane.adminRequest(
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases?labelSelector=${encodeURIComponent('raven.dev/lease-group=shards')}`,
      );
      assert.equal(status, 200, body);
      return (JSON.parse(body) as LeaseList).items;
    };
    const holders = async (): Promise<string[]> =>
      (await leases()).map((l) => l.spec?.holderIdentity ?? '').sort();

    const began = Date.now();
    const [a, b, c] = ['a', 'b', 'c'].map(start) as [Replica, Replica, Replica];
    const formed = await converge([a, b, c], ['a', 'b', 'c'], began);
    assert.deepEqual(await holders(), ['a', 'b', 'c'], 'one Lease per member, labelled with the group');

    const killedAt = Date.now();
    c.kill('SIGKILL');
    await c.exited;
    const dropped = await converge([a, b], ['a', 'b'], killedAt);

    const joinedAt = Date.now();
    const d = start('d');
    const joined = await converge([a, b, d], ['a', 'b', 'd'], joinedAt);
    // d's own first view left d out: it counts itself in a lease duration after its Lease stood.
    const first = d.lines.find((l) => l.msg === 'members');
    assert.ok(
      first !== undefined && !(first.members ?? []).includes('d'),
      `d's first view: ${JSON.stringify(first)}`,
    );

    const stoppedAt = Date.now();
    a.kill('SIGTERM');
    assert.deepEqual(await a.exited, { code: 0, signal: null }, a.transcript());
    assert.ok(a.has('left'));
    const left = await converge([b, d], ['b', 'd'], stoppedAt);
    assert.ok(!(await holders()).includes('a'), 'a deleted its Lease on the way out');
    // The Lease c left behind goes once it has not changed for four lease durations.
    const deadline = Date.now() + 120_000;
    while ((await holders()).includes('c')) {
      if (Date.now() > deadline)
        assert.fail(`c's stale Lease was never deleted: ${(await holders()).join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const collected = Date.now() - killedAt;
    assert.deepEqual(await holders(), ['b', 'd']);
    t.diagnostic(
      `formed in ${formed} ms; a SIGKILLed member dropped after ${dropped} ms (lease 6 s); ` +
        `a newcomer counted by all after ${joined} ms; a stopped member dropped after ${left} ms; ` +
        `the killed member's Lease deleted ${collected} ms after the kill`,
    );
  },
);
