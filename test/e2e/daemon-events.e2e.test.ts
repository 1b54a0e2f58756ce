/**
 * `raven run` with an events watcher against the real apiserver: Events created through the API
 * (both APIs) and updated with series/count come out as occurrences, each update delivered;
 * each is enriched with its Pod's labels, annotations and owner (through the ReplicaSet to the
 * Deployment) from the shared cache; an Event older than `maxEventAgeSeconds` is recorded but not
 * delivered; after a restart, the update made while Raven was down is delivered once and nothing
 * delivered before comes again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import {
  httpGet,
  jsonLines,
  ok,
  startRaven,
  tempDir,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  type KubeAnswer,
} from './daemon-process.js';

interface Occurrence {
  type: string;
  reason: string;
  message: string;
  count: number;
  previousCount: number;
  component: string;
  involvedObject: {
    kind: string;
    name: string;
    namespace?: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    owner?: { kind: string; name: string };
    found: boolean;
  };
}

type EventLine = DeliveredEvent & { occurrence?: Occurrence };

const micro = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const seconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

test('an events watcher delivers every count update as an enriched occurrence, once, across a restart', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  const api = `/api/v1/namespaces/${ns}`;
  const apps = `/apis/apps/v1/namespaces/${ns}`;
  const eventsApi = `/apis/events.k8s.io/v1/namespaces/${ns}`;

  // A Deployment's Pod, made by the controllers: Pod → ReplicaSet → Deployment (never scheduled).
  const deploy = await ok(
    plane.adminRequest('POST', `${apps}/deployments`, {
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: {
            labels: { app: 'web', tier: 'front' },
            annotations: { 'team.example.com/owner': 'payments' },
          },
          spec: { containers: [{ name: 'web', image: 'nginx' }] },
        },
      },
    }),
  );
  let pod: KubeAnswer | undefined;
  await until('the Deployment has its Pod', async () => {
    const list = await ok<{ items: KubeAnswer[] }>(
      plane.adminRequest('GET', `${api}/pods?labelSelector=app%3Dweb`),
    );
    pod = list.items[0];
    return pod !== undefined;
  });
  assert.ok(pod);

  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./state.db }
watchers:
  - { name: events, type: events, namespaces: [${ns}], maxEventAgeSeconds: 600 }
sinks:
  - { name: archive, type: file, path: ./out/events.jsonl }
`,
  );
  const archive = join(dir, 'out', 'events.jsonl');
  const received = async (): Promise<EventLine[]> =>
    jsonLines<EventLine>((await readFile(archive, 'utf8').catch(() => '')).split('\n'));
  const start = () => {
    const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
    t.after(async () => {
      raven.kill('SIGKILL');
      await raven.exited;
    });
    return raven;
  };
  let raven = start();
  const health = await waitReady(raven);

  const regarding = {
    apiVersion: 'v1',
    kind: 'Pod',
    name: pod.metadata.name,
    namespace: ns,
    uid: pod.metadata.uid,
  };
  const now = Date.now();
  // events.k8s.io/v1: a new Event, then its series counted up twice.
  await ok(
    plane.adminRequest('POST', `${eventsApi}/events`, {
      metadata: { name: 'web-backoff' },
      eventTime: micro(now),
      reportingController: 'kubelet',
      reportingInstance: 'node-a',
      action: 'Restarting',
      reason: 'BackOff',
      type: 'Warning',
      note: 'Back-off restarting failed container web',
      regarding,
    }),
  );
  for (const count of [2, 3]) {
    await ok(
      plane.adminRequest(
        'PATCH',
        `${eventsApi}/events/web-backoff`,
        { series: { count, lastObservedTime: micro(Date.now()) } },
        'application/merge-patch+json',
      ),
    );
  }
  // core v1: count updates the way a kubelet's event recorder makes them.
  await ok(
    plane.adminRequest('POST', `${api}/events`, {
      metadata: { name: 'web-pulled' },
      involvedObject: regarding,
      reason: 'Pulled',
      type: 'Normal',
      message: 'Container image "nginx" already present on machine',
      source: { component: 'kubelet', host: 'node-a' },
      count: 1,
      firstTimestamp: seconds(now),
      lastTimestamp: seconds(now),
    }),
  );
  await ok(
    plane.adminRequest(
      'PATCH',
      `${api}/events/web-pulled`,
      { count: 2, lastTimestamp: seconds(Date.now()) },
      'application/merge-patch+json',
    ),
  );
  // Two hours old when Raven sees it: past maxEventAgeSeconds.
  await ok(
    plane.adminRequest('POST', `${api}/events`, {
      metadata: { name: 'ancient' },
      involvedObject: regarding,
      reason: 'Scheduled',
      type: 'Normal',
      message: 'long ago',
      source: { component: 'default-scheduler' },
      count: 1,
      firstTimestamp: seconds(now - 7_200_000),
      lastTimestamp: seconds(now - 7_200_000),
    }),
  );

  const occurrences = async (name: string) =>
    (await received()).filter((e) => e.name === name).map((e) => e.occurrence?.count);
  await until(
    'the five occurrences are archived',
    async () =>
      (await occurrences('web-backoff')).length === 3 && (await occurrences('web-pulled')).length === 2,
    { show: () => raven.stderr() },
  );
  await until('the old Event is recorded as filtered', async () => {
    const metrics = (await httpGet(`${health}/metrics`)).body;
    return /raven_events_filtered_total\{[^}]*watcher="events"[^}]*\} [1-9]/.test(metrics);
  });
  assert.deepEqual(await occurrences('web-backoff'), [1, 2, 3], 'every series update is an occurrence');
  assert.deepEqual(await occurrences('web-pulled'), [1, 2], 'every count update is an occurrence');
  assert.deepEqual(
    await occurrences('ancient'),
    [],
    'an Event older than maxEventAgeSeconds is not delivered',
  );

  const [first] = (await received()).filter((e) => e.name === 'web-backoff');
  assert.ok(first?.occurrence);
  assert.equal(first.occurrence.reason, 'BackOff');
  assert.equal(first.occurrence.type, 'Warning');
  assert.equal(first.occurrence.message, 'Back-off restarting failed container web');
  assert.equal(first.occurrence.component, 'kubelet');
  assert.deepEqual(first.occurrence.involvedObject, {
    ...first.occurrence.involvedObject,
    kind: 'Pod',
    name: pod.metadata.name,
    namespace: ns,
    labels: { app: 'web', tier: 'front', 'pod-template-hash': pod.metadata.name.split('-')[1] ?? '' },
    annotations: { 'team.example.com/owner': 'payments' },
    owner: { kind: 'Deployment', name: 'web', uid: deploy.metadata.uid },
    found: true,
  });
  const pulled = (await received()).find((e) => e.name === 'web-pulled' && e.occurrence?.count === 2);
  assert.equal(pulled?.occurrence?.previousCount, 1);
  assert.equal(pulled.occurrence.component, 'kubelet');

  // Down: one more occurrence meanwhile; up again: it comes once, nothing earlier comes again.
  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
  await ok(
    plane.adminRequest(
      'PATCH',
      `${eventsApi}/events/web-backoff`,
      { series: { count: 4, lastObservedTime: micro(Date.now()) } },
      'application/merge-patch+json',
    ),
  );
  raven = start();
  await waitReady(raven);
  await until(
    'the occurrence made while down is archived',
    async () => (await occurrences('web-backoff')).includes(4),
    {
      show: () => raven.stderr(),
    },
  );
  assert.deepEqual(await occurrences('web-backoff'), [1, 2, 3, 4], 'no occurrence delivered twice');
  assert.deepEqual(await occurrences('web-pulled'), [1, 2]);
  assert.deepEqual(await occurrences('ancient'), [], 'the restart does not replay the old Event');
  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
});
