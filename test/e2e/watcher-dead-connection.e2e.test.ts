/**
 * A half-open connection under a quiet watch, against the real apiserver: the connection is held
 * by a proxy (bytes kept, sockets open) while nothing changes, so no event or bookmark could reveal
 * it. The watcher keeps its default inactivity deadline (75 s, tied to the apiserver's bookmark
 * interval); the HTTP/2 PING health check must find the dead connection first, and the watch must
 * then resume on a new one and deliver a change made meanwhile.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { watch } from '../../src/watch/watcher.js';
import type { WatcherEvent } from '../../src/watch/watcher-events.js';
import { freshNamespace, kubeconfigVia, sharedCluster } from '../harness/test-cluster.js';
import { TcpProxy } from '../harness/tcp-proxy.js';

test(
  'a half-open connection under a quiet watch is found by HTTP/2 PINGs before the inactivity deadline, and the watch resumes',
  { timeout: 240_000 },
  async (t) => {
    const plane = await sharedCluster();
    const dir = await mkdtemp(join(tmpdir(), 'raven-e2e-'));
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: plane.state.ports.apiserver });
    const ns = await freshNamespace(plane);
    const client = new KubeClient(await loadConfig({ kubeconfig: await kubeconfigVia(plane, proxy, dir) }));
    const controller = new AbortController();
    t.after(async () => {
      controller.abort();
      await client.destroy();
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    });
    const events: WatcherEvent[] = [];
    let wake: () => void = () => undefined;
    const watcher = watch({
      transport: client,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      signal: controller.signal,
    });
    const consumed = (async () => {
      for await (const event of watcher) {
        events.push(event);
        wake();
      }
    })();
    const until = async (what: string, pred: () => boolean): Promise<void> => {
      // A safety net far beyond any expected wait; the conditions decide.
      const deadline = Date.now() + 200_000;
      while (!pred()) {
        if (Date.now() > deadline)
          assert.fail(`${what}: not seen; events ${JSON.stringify(events.map((e) => e.type))}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
      }
    };
    await until('synced', () => events.some((e) => e.type === 'synced'));
    // After a list, 'synced' comes before the watch request is open: a change seen as 'added'
    // shows the watch stream is live, so the stall below holds the watch's own connection.
    await plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'made-before-stall' },
      data: { k: 'v' },
    });
    await until('the change made before the stall', () =>
      events.some((e) => e.type === 'added' && e.object.metadata?.name === 'made-before-stall'),
    );
    const connectionsBefore = proxy.connections;

    proxy.stall({ newConnections: 'flow' });
    const stalledAt = Date.now();
    await plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'made-while-stalled' },
      data: { k: 'v' },
    });
    await until('the dead connection reported', () => events.some((e) => e.type === 'error'));
    const foundAfterS = (Date.now() - stalledAt) / 1000;
    const error = events.find((e) => e.type === 'error');
    assert.ok(error?.type === 'error');
    // The PING health check found it, not the 75 s inactivity deadline.
    assert.match(error.error.message, /PINGs unanswered|read nothing/);
    await until('the change made while stalled', () =>
      events.some((e) => e.type === 'added' && e.object.metadata?.name === 'made-while-stalled'),
    );
    assert.ok(proxy.connections > connectionsBefore, 'resumed on a new connection');
    assert.equal(watcher.status().relists, 0, 'resumed from the last resourceVersion, not relisted');
    t.diagnostic(`dead connection found after ${foundAfterS.toFixed(1)} s`);
    controller.abort();
    await consumed;
  },
);
