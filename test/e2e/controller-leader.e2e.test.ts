/**
 * Leader election between OS processes: replicas of the example controller contend for one Lease
 * with short timings (lease 6 s, renew deadline 4 s, retry 1 s). Exactly one leads; a SIGKILLed
 * leader is replaced once its lease expires (the lease's history goes straight from the dead
 * leader to its successor: nobody released it); a leader stopped with SIGTERM releases the lease
 * and exits 0, and a standby takes the released lease. After each handover the new leader is shown
 * to reconcile.
 *
 * How long each handover took is measured and reported, not asserted: on a loaded machine process
 * scheduling adds seconds. The timing rules themselves (never before expiry, a released lease at
 * the next retry) are asserted on virtual time in test/unit/controller/leader-election.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { watch } from '../../src/watch/watcher.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import {
  installReplicaKeeperCrd,
  pods as podsRef,
  replicaKeepers,
  type ReplicaKeeper,
} from '../../examples/replication-controller/replica-keeper.js';
import { repoRoot } from '../harness/binaries.js';
import { giveUpMs, Replica } from './replica-process.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

const leaseDurationMs = 6_000;
const renewDeadlineMs = 4_000;
const retryPeriodMs = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test(
  'one replica leads; a killed leader is replaced once the lease expires, a stopped one at once',
  { timeout: 900_000 },
  async (t) => {
    const plane = await sharedCluster();
    const ns = await freshNamespace(plane, 'le');
    const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
    const replicas: Replica[] = [];
    t.after(async () => {
      for (const r of replicas) r.kill('SIGKILL');
      await Promise.all(replicas.map((r) => r.exited));
      await deleteNamespace(plane, ns);
      await client.destroy();
    });
    const start = (identity: string): Replica => {
      const replica = new Replica(identity, join(repoRoot, 'examples', 'replication-controller', 'main.ts'), [
        ...['--kubeconfig', plane.kubeconfig, '--namespace', ns, '--lease-name', 'keepers'],
        ...['--lease-duration-ms', String(leaseDurationMs), '--renew-deadline-ms', String(renewDeadlineMs)],
        ...['--retry-period-ms', String(retryPeriodMs)],
      ]);
      replicas.push(replica);
      return replica;
    };
    const holder = async (): Promise<string> => {
      const lease = await client.request<Lease>({
        method: 'GET',
        path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/keepers`,
      });
      return lease.spec?.holderIdentity ?? '';
    };
    // Every version of the lease, in order: who held it, and whether it was released in between.
    const history: string[] = [];
    const leaseWatch = watch<Lease>({
      transport: client,
      path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
      fieldSelector: 'metadata.name=keepers',
    });
    const recording = (async () => {
      for await (const event of leaseWatch) {
        if (event.type !== 'initial' && event.type !== 'added' && event.type !== 'modified') continue;
        const holder = event.object.spec?.holderIdentity ?? '';
        if (history.at(-1) !== holder) history.push(holder);
      }
    })();
    t.after(async () => {
      leaseWatch.close();
      await recording;
    });
    /** The holders after `from` took the lease, once the history shows `to` holding it. */
    const handover = async (from: string, to: string): Promise<string[]> => {
      const deadline = Date.now() + giveUpMs;
      while (history.at(-1) !== to) {
        if (Date.now() > deadline) assert.fail(`the lease never went to ${to}: ${history.join(' -> ')}`);
        await sleep(100);
      }
      return history.slice(history.lastIndexOf(from));
    };
    const keepers = new ResourceClient<ReplicaKeeper>(client, replicaKeepers);
    const pods = new ResourceClient<Pod>(client, podsRef);
    /** The active leader is reconciling: the keeper gets exactly `n` pods. */
    const reconciledTo = async (n: number): Promise<void> => {
      await keepers.patch('web', { spec: { replicas: n } }, { type: 'merge', namespace: ns });
      const deadline = Date.now() + giveUpMs;
      for (;;) {
        const list = await pods.list({ namespace: ns, labelSelector: 'app=web' });
        const active = list.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
        if (active.length === n) return;
        if (Date.now() > deadline) assert.fail(`the keeper has ${active.length} pods, not ${n}`);
        await sleep(200);
      }
    };

    const alpha = start('alpha');
    const beta = start('beta');
    await installReplicaKeeperCrd(client);
    await keepers.create({
      apiVersion: 'raven.example.com/v1',
      kind: 'ReplicaKeeper',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    });

    // Exactly one leads: the first to say so; the other has seen it as leader and stays a standby.
    const first = await Promise.race(
      [alpha, beta].map(async (r) => {
        await r.line((l) => l.msg === 'started leading', 'leadership');
        return r;
      }),
    );
    const standby = first === alpha ? beta : alpha;
    await standby.line(
      (l) => l.msg === 'new leader observed' && l.leader === first.identity,
      `sight of ${first.identity} as leader`,
    );
    assert.equal(await holder(), first.identity);
    await reconciledTo(2);
    assert.equal(standby.has('started leading'), false, `${standby.identity} must not lead as well`);
    assert.equal(await holder(), first.identity);

    // SIGKILL: no release; the standby must wait for the lease to expire on its own clock.
    const killedAt = Date.now();
    first.kill('SIGKILL');
    const tookOver = await standby.line((l) => l.msg === 'started leading', 'takeover after SIGKILL');
    const killHandoverMs = tookOver.receivedAt - killedAt;
    t.diagnostic(
      `handover after SIGKILL of the leader: ${killHandoverMs} ms (lease ${leaseDurationMs} ms, retry ${retryPeriodMs} ms)`,
    );
    assert.equal(await holder(), standby.identity);
    assert.deepEqual(
      await handover(first.identity, standby.identity),
      [first.identity, standby.identity],
      'a killed leader releases nothing: its successor took the lease by expiry',
    );
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
    await reconciledTo(3);

    // SIGTERM: the leader releases the lease; a standby takes it at its next retry.
    const leader = standby;
    const gamma = start('gamma');
    await gamma.line(
      (l) => l.msg === 'new leader observed' && l.leader === leader.identity,
      `sight of ${leader.identity} as leader`,
    );
    const stoppedAt = Date.now();
    leader.kill('SIGTERM');
    const next = await gamma.line((l) => l.msg === 'started leading', 'takeover after SIGTERM');
    const termHandoverMs = next.receivedAt - stoppedAt;
    t.diagnostic(`handover after SIGTERM of the leader: ${termHandoverMs} ms`);
    assert.deepEqual(await leader.exited, { code: 0, signal: null }, leader.transcript());
    assert.ok(
      leader.has('released the lease'),
      `the stopped leader released the lease\n${leader.transcript()}`,
    );
    assert.deepEqual(
      await handover(leader.identity, gamma.identity),
      [leader.identity, '', gamma.identity],
      'the stopped leader released the lease and the standby took the released lease',
    );
    assert.equal(await holder(), gamma.identity);
    await reconciledTo(1);

    gamma.kill('SIGTERM');
    assert.deepEqual(await gamma.exited, { code: 0, signal: null }, gamma.transcript());
    assert.equal(await holder(), '', 'released on shutdown');
  },
);
