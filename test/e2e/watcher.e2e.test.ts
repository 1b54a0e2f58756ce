/**
 * The watcher against a real apiserver under fire: while a driver creates, updates and deletes
 * hundreds of pods, connections are cut through a proxy, the apiserver is restarted, the stream is
 * stalled and etcd compacted so that the watcher must relist on 410. At the end its view must equal
 * a fresh list, every deletion must have been delivered exactly once, and no update may repeat a
 * resourceVersion already delivered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { watch } from '../../src/watch/watcher.js';
import type { WatcherEvent, KubeObject } from '../../src/watch/watcher-events.js';
import { privateCluster, freshNamespace, kubeconfigVia } from '../harness/test-cluster.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import { isNotFound, isRetryable } from '../../src/errors/classify.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Retry a driver call through apiserver restarts. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt > 100 || !isRetryable(err)) throw err;
      await sleep(200);
    }
  }
}

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

test(
  'the watcher view equals a fresh list after restarts, cuts, stalls and a compaction',
  { timeout: 300_000 },
  async (t) => {
    const plane = await privateCluster();
    const dir = await mkdtemp(join(tmpdir(), 'raven-e2e-'));
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: plane.state.ports.apiserver });
    t.after(async () => {
      await proxy.close();
      await plane.stop();
      await rm(dir, { recursive: true, force: true });
    });
    const ns = await freshNamespace(plane);
    const driver = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
    const watched = new KubeClient(await loadConfig({ kubeconfig: await kubeconfigVia(plane, proxy, dir) }));
    t.after(async () => {
      await driver.destroy();
      await watched.destroy();
    });
    const podsPath = `/api/v1/namespaces/${ns}/pods`;

    const controller = new AbortController();
    const watcher = watch({
      transport: watched,
      path: podsPath,
      inactivityTimeoutMs: 4_000,
      backoff: { initialMs: 200, maxMs: 2_000 },
      signal: controller.signal,
    });
    const view = new Map<string, KubeObject>();
    const deletions = new Map<string, number>();
    const delivered = new Map<string, string>();
    const repeats: string[] = [];
    const counts: Record<string, number> = {};
    let synced!: () => void;
    const firstSync = new Promise<void>((resolve) => (synced = resolve));
    const consumed = (async () => {
      for await (const event of watcher as AsyncIterable<WatcherEvent>) {
        counts[event.type] = (counts[event.type] ?? 0) + 1;
        if (event.type === 'synced') synced();
        if (
          event.type === 'error' ||
          event.type === 'bookmark' ||
          event.type === 'synced' ||
          event.type === 'listing'
        )
          continue;
        const meta = event.object.metadata ?? {};
        const id = `${meta.name ?? ''}/${meta.uid ?? ''}`;
        if (event.type === 'deleted') {
          view.delete(meta.name ?? '');
          deletions.set(id, (deletions.get(id) ?? 0) + 1);
          continue;
        }
        const rv = meta.resourceVersion ?? '';
        if (delivered.get(id) === rv) repeats.push(`${event.type} ${id}@${rv}`);
        delivered.set(id, rv);
        view.set(meta.name ?? '', event.object);
      }
    })();

    const podBody = (name: string): object => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'e2e', round: '0' } },
      spec: { containers: [{ name: 'c', image: 'registry.invalid/none:1' }] },
    });
    const create = (name: string): Promise<unknown> =>
      retrying(() => driver.request({ method: 'POST', path: podsPath, body: podBody(name) })).catch(
        (err: unknown) => {
          if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
        },
      );
    const update = (name: string, round: number): Promise<unknown> =>
      retrying(() =>
        driver.request({
          method: 'PATCH',
          path: `${podsPath}/${name}`,
          contentType: 'application/merge-patch+json',
          body: { metadata: { labels: { round: String(round) } } },
        }),
      );
    const remove = async (name: string): Promise<void> => {
      try {
        await retrying(() =>
          driver.request({ method: 'DELETE', path: `${podsPath}/${name}`, query: { gracePeriodSeconds: 0 } }),
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    };
    let fresh: { metadata: { resourceVersion: string }; items: KubeObject[] } = {
      metadata: { resourceVersion: '' },
      items: [],
    };
    const same = (): boolean =>
      fresh.items.length === view.size &&
      fresh.items.every(
        (item) =>
          view.get(item.metadata?.name ?? '')?.metadata?.resourceVersion === item.metadata?.resourceVersion,
      );
    /** Until the view equals a fresh list (a generous safety net; the assertions decide). */
    const caughtUp = async (): Promise<void> => {
      for (let i = 0; i < 240; i++) {
        fresh = await retrying(() => driver.request({ method: 'GET', path: podsPath }));
        if (same()) return;
        await sleep(500);
      }
    };
    const names = (from: number, to: number): string[] =>
      Array.from({ length: to - from }, (_, i) => `p-${from + i}`);
    const deleted = new Set<string>();

    // The faults below are meant for a watcher that is watching: a streaming initial list cut
    // every 150 ms may never complete, and one that completes only after the compaction has
    // nothing to relist.
    await firstSync;

    // Phase 1: create 200 pods while connections are cut every 150 ms, each cut on a watch stream
    // that opened since the cut before (on a loaded machine a stream can take longer than 150 ms
    // to open: cut blindly, none might open between cuts, and no resume would be tested), and at
    // least three cuts whatever the pace of the changes.
    let cutting = true as boolean;
    let cuts = 0;
    const cutter = (async () => {
      let cutAt = -1; // the stream count at the last cut
      // A safety net only: a watcher that never resumed would leave fewer than three cuts, failing below.
      const giveUpAt = Date.now() + 240_000;
      while ((cutting || cuts < 3) && Date.now() < giveUpAt) {
        await sleep(150);
        const { reconnects, phase } = watcher.status();
        if (phase !== 'watching' || reconnects === cutAt) continue;
        cutAt = reconnects;
        proxy.cut();
        cuts++;
      }
    })();
    await pool(names(0, 200), 8, create);
    // Phase 2: restart the apiserver; updates resume right after.
    await plane.restartApiserver();
    await pool(names(0, 150), 8, (n) => update(n, 1));
    for (const n of names(150, 200)) deleted.add(n);
    await pool(names(150, 200), 8, remove);
    cutting = false;
    await cutter;
    // Each cut resumed: as many streams opened after the first as there were cuts (a generous
    // safety net; the watcher's resumes decide).
    for (let i = 0; i < 240 && watcher.status().reconnects < cuts; i++) await sleep(500);

    // Phase 3: stall the watcher's connection (half-open) while more changes happen, then compact
    // etcd and restart the apiserver so the old resourceVersion is gone: the watcher must relist.
    // It is first let catch up, so that it is watching from a resourceVersion the compaction removes.
    await caughtUp();
    proxy.stall();
    await pool(names(200, 260), 8, create);
    await pool(names(0, 60), 8, (n) => update(n, 2));
    for (const n of names(60, 100)) deleted.add(n);
    await pool(names(60, 100), 8, remove);
    await sleep(5_000);
    await plane.compactEtcd();
    await plane.restartApiserver();
    proxy.resume();

    // Phase 4: a last round of changes with the watcher back.
    await pool(names(100, 130), 8, (n) => update(n, 3));
    for (const n of names(200, 220)) deleted.add(n);
    await pool(names(200, 220), 8, remove);

    // Wait until the watcher has caught up with a fresh list.
    await caughtUp();
    controller.abort();
    await consumed;
    const status = watcher.status();
    t.diagnostic(
      `events ${JSON.stringify(counts)}; relists ${status.relists}, reconnects ${status.reconnects}`,
    );

    assert.equal(fresh.items.length, 260 - deleted.size);
    assert.ok(same(), `watcher view (${view.size}) equals a fresh list (${fresh.items.length})`);
    assert.ok(status.relists >= 1, 'the compaction forced at least one relist');
    assert.ok(status.reconnects >= cuts && cuts >= 3, `${cuts} cuts, ${status.reconnects} resumed streams`);
    assert.deepEqual(repeats, [], 'no event repeated a resourceVersion already delivered');
    for (const [id, count] of deletions) assert.equal(count, 1, `deletion of ${id} delivered once`);
    // A pod created and deleted entirely while the watcher could not see (between a disconnect and
    // a relist) was never delivered, so it has no deletion to deliver. Every pod that was delivered
    // and then deleted must have its deletion delivered, and only deleted pods may be.
    const deletedNames = new Set([...deletions.keys()].map((id) => id.split('/')[0] ?? ''));
    const seenNames = new Set([...delivered.keys()].map((id) => id.split('/')[0] ?? ''));
    for (const name of deletedNames) assert.ok(deleted.has(name), `${name} was reported deleted but was not`);
    const missing = [...deleted].filter((name) => seenNames.has(name) && !deletedNames.has(name));
    assert.deepEqual(missing, [], 'every delivered pod that was deleted had its deletion delivered');
    t.diagnostic(
      `deleted ${deleted.size} pods; ${deletedNames.size} deletions delivered, ${deleted.size - deletedNames.size} never seen`,
    );
  },
);
