/**
 * The example ReplicaKeeper controller against a real control plane (a private one: the apiserver
 * is restarted): it converges after a keeper is created, after pods are deleted by hand, after a
 * surplus pod appears, after scaling up and down, and after an apiserver restart. Convergence is
 * polled with generous deadlines; the controller's own log of creations and deletions proves it
 * never overshot (a lagging cache must not cause extra pods).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { isRetryable } from '../../src/errors/classify.js';
import { jsonLogger } from '../../examples/replication-controller/json-logger.js';
import {
  installReplicaKeeperCrd,
  pods as podsRef,
  replicaKeepers,
  type ReplicaKeeper,
} from '../../examples/replication-controller/replica-keeper.js';
import { defaultLeaseName, runController } from '../../examples/replication-controller/run-controller.js';
import { freshNamespace, privateCluster } from '../harness/test-cluster.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface LogRecord {
  msg: string;
  [field: string]: unknown;
}

/** Retry a driver call through an apiserver restart. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt > 300 || !isRetryable(err)) throw err;
      await sleep(200);
    }
  }
}

function keeper(namespace: string, replicas: number): ReplicaKeeper {
  return {
    apiVersion: 'raven.example.com/v1',
    kind: 'ReplicaKeeper',
    metadata: { name: 'web', namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web', tier: 'demo' } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
}

test(
  'the replication controller converges through deletions, a surplus pod, scaling and an apiserver restart',
  // A safety net for a stuck run, far above the few minutes the test takes on a loaded machine.
  { timeout: 900_000 },
  async (t) => {
    // The library's timers never hold the process open; the test does, while it waits on them.
    const keepAlive = setInterval(() => undefined, 60_000);
    // Cleanups run last-registered first: the controller stops before the plane it talks to.
    const cleanups: (() => unknown)[] = [() => clearInterval(keepAlive)];
    t.after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });
    const plane = await privateCluster();
    cleanups.push(() => plane.stop());
    const ns = await freshNamespace(plane, 'rk');
    const driver = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
    const controllerClient = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
    cleanups.push(
      () => driver.destroy(),
      () => controllerClient.destroy(),
    );
    const keepers = new ResourceClient<ReplicaKeeper>(driver, replicaKeepers);
    const pods = new ResourceClient<Pod>(driver, podsRef);

    const records: LogRecord[] = [];
    const logger = jsonLogger({
      level: 'info',
      write: (line) => records.push(JSON.parse(line) as LogRecord),
    });
    const count = (msg: string): number => records.filter((r) => r.msg === msg).length;
    // The cluster can show a create or delete before the controller has logged it (it logs when
    // the call returns): wait for the log to catch up, then require the exact count.
    const expectCount = async (msg: string, n: number, why?: string): Promise<void> => {
      for (const giveUp = Date.now() + 120_000; count(msg) < n && Date.now() < giveUp;) await sleep(100);
      assert.equal(count(msg), n, why);
    };
    const stop = new AbortController();
    let runError: Error | undefined;
    const running = runController(
      {
        client: controllerClient,
        namespace: ns,
        identity: 'e2e-replica',
        leaseDurationMs: 6_000,
        renewDeadlineMs: 4_000,
        retryPeriodMs: 1_000,
        logger,
      },
      stop.signal,
    ).catch((err: unknown) => {
      runError = err instanceof Error ? err : new Error(String(err));
    });
    cleanups.push(async () => {
      stop.abort();
      await running;
    });

    await installReplicaKeeperCrd(driver);
    const created = await keepers.create(keeper(ns, 3));
    const uid = created.metadata?.uid ?? '';

    const owned = async (): Promise<Pod[]> => {
      const list = await pods.list({ namespace: ns });
      return list.items.filter(
        (p) =>
          p.metadata?.deletionTimestamp === undefined &&
          p.metadata?.ownerReferences?.some((r) => r.uid === uid && r.controller === true) === true,
      );
    };
    /** Wait until the keeper has exactly `n` pods and says so in its status for its current spec. */
    const converged = async (n: number, what: string): Promise<Pod[]> => {
      const deadline = Date.now() + 180_000;
      let last = '';
      for (;;) {
        if (runError !== undefined) assert.fail(`the controller failed: ${runError.message}`);
        try {
          const [now, k] = await Promise.all([owned(), keepers.get('web', { namespace: ns })]);
          const status = k.status;
          last = `${now.length} pods, status ${JSON.stringify(status)}, generation ${k.metadata?.generation}`;
          if (
            now.length === n &&
            status?.replicas === n &&
            status.observedGeneration === k.metadata?.generation
          )
            return now;
        } catch (err) {
          if (!isRetryable(err)) throw err;
          last = String(err);
        }
        if (Date.now() > deadline) {
          const tail = records.slice(-30).map((r) => JSON.stringify(r));
          assert.fail(`${what}: not converged to ${n} pods; last seen ${last}\n${tail.join('\n')}`);
        }
        await sleep(250);
      }
    };
    const scale = (replicas: number): Promise<ReplicaKeeper> =>
      retrying(() => keepers.patch('web', { spec: { replicas } }, { type: 'merge', namespace: ns }));

    const first = await converged(3, 'a new keeper with replicas 3');
    await expectCount('created pod', 3, 'exactly three pods were created');
    for (const p of first) {
      assert.match(p.metadata?.name ?? '', /^web-/, 'pods are named from generateName');
      assert.equal(p.metadata?.labels?.tier, 'demo', 'pods carry the template labels');
    }

    const victims = first.slice(0, 2).map((p) => p.metadata?.name ?? '');
    for (const name of victims) await pods.delete(name, { namespace: ns });
    const healed = await converged(3, 'after deleting two pods by hand');
    assert.equal(healed.filter((p) => victims.includes(p.metadata?.name ?? '')).length, 0);
    await expectCount('created pod', 5, 'each deleted pod was replaced exactly once');

    await pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-by-hand',
        namespace: ns,
        labels: { app: 'web' },
        ownerReferences: [
          { apiVersion: 'raven.example.com/v1', kind: 'ReplicaKeeper', name: 'web', uid, controller: true },
        ],
      },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    });
    await converged(3, 'after a surplus pod was added by hand');
    await expectCount('deleted pod', 1, 'one pod (the newest) was deleted');
    await expectCount('created pod', 5);

    await scale(5);
    await converged(5, 'scaled 3 -> 5');
    await expectCount('created pod', 7);
    await scale(2);
    await converged(2, 'scaled 5 -> 2');
    await expectCount('deleted pod', 4);
    await expectCount('created pod', 7);

    await plane.restartApiserver({ downMs: 1_000 });
    await scale(4);
    await converged(4, 'scaled 2 -> 4 after an apiserver restart');
    t.diagnostic(
      `leadership terms: ${count('started leading')}; pods created ${count('created pod')}, deleted ${count('deleted pod')}`,
    );

    stop.abort();
    await running;
    assert.equal(runError, undefined, 'the controller stopped cleanly');
    assert.ok(records.some((r) => r.msg === 'released the lease'));
    const lease = await driver.request<Lease>({
      method: 'GET',
      path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${defaultLeaseName}`,
    });
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'the lease was released on shutdown');
  },
);
