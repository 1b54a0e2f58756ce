/**
 * The webhook receiver is down for a minute while objects keep changing, then comes back on the
 * same port: every change is delivered, in order per object; duplicates are allowed (at least
 * once), counted and reported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import {
  httpGet,
  ok,
  rvCompare,
  startRaven,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  daemonFixture,
} from './daemon-process.js';

/** The issue asks for "a minute". */
const OUTAGE_MS = 60_000;
/** One change every this often during the outage, round-robin over the objects. */
const CHANGE_EVERY_MS = 500;

interface Expected {
  name: string;
  type: 'added' | 'modified' | 'deleted';
  /** Unknown for a deletion: the watch reports the deletion's own resourceVersion. */
  resourceVersion?: string;
}

test('a receiver down for a minute loses nothing and keeps the order per object', async (t) => {
  const { plane, ns, dir, hook } = await daemonFixture(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./state/checkpoint.db }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${ns}], labelSelector: 'raven.test/outage' }
sinks:
  - name: hook
    type: webhook
    url: '${hook.url('/events')}'
    delivery: { initialBackoffMs: 200, maxBackoffMs: 5000, maxAttempts: 1000, deadLetterPath: ./dead.jsonl }
`,
  );
  const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  const url = await waitReady(raven);

  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const expected: Expected[] = [];
  const create = async (name: string): Promise<void> => {
    const created = await ok(
      plane.adminRequest('POST', api, {
        metadata: { name, labels: { 'raven.test/outage': 'true' } },
        data: { n: '0' },
      }),
    );
    expected.push({ name, type: 'added', resourceVersion: created.metadata.resourceVersion });
  };
  const names = ['obj-0', 'obj-1', 'obj-2', 'obj-3'];
  for (const name of names) await create(name);
  const received = (): DeliveredEvent[] => hook.requests.map((r) => r.json as DeliveredEvent);
  await until('the first objects delivered', () => received().length >= names.length, {
    show: () => raven.stderr(),
  });

  await hook.down();
  const downAt = Date.now();
  let n = 0;
  let live = [...names];
  while (Date.now() - downAt < OUTAGE_MS) {
    n++;
    if (n === 40) {
      await create('obj-4');
      live.push('obj-4');
    } else if (n === 80) {
      await ok(plane.adminRequest('DELETE', `${api}/obj-1`));
      expected.push({ name: 'obj-1', type: 'deleted' });
      live = live.filter((name) => name !== 'obj-1');
    } else {
      const name = live[n % live.length] ?? 'obj-0';
      const patched = await ok(plane.adminRequest('PATCH', `${api}/${name}`, { data: { n: `${n}` } }));
      expected.push({ name, type: 'modified', resourceVersion: patched.metadata.resourceVersion });
    }
    await delay(CHANGE_EVERY_MS);
  }
  assert.equal(
    hook.requests.length,
    names.length,
    'nothing reached the receiver while it was down (connections were refused)',
  );
  const during = (await httpGet(`${url}/metrics`)).body;
  await hook.up();
  const upAt = Date.now();

  const delivered = (e: Expected): boolean =>
    received().some(
      (r) =>
        r.name === e.name &&
        r.type === e.type &&
        (e.resourceVersion === undefined || r.resourceVersion === e.resourceVersion),
    );
  await until('every change delivered after the receiver came back', () => expected.every(delivered), {
    timeoutMs: 120_000,
    show: () => `missing: ${JSON.stringify(expected.filter((e) => !delivered(e)))}\nlogs:\n${raven.stderr()}`,
  });
  const caughtUpMs = Date.now() - upAt;
  // Give late duplicates a moment to show up before counting.
  await delay(2000);

  // Order per object: resourceVersions never go back in arrival order; a repeat is the same event again.
  const perObject = new Map<string, DeliveredEvent[]>();
  for (const event of received()) perObject.set(event.name, [...(perObject.get(event.name) ?? []), event]);
  let duplicates = 0;
  for (const [name, events] of perObject) {
    for (let i = 1; i < events.length; i++) {
      const [prev, cur] = [events[i - 1], events[i]];
      assert.ok(prev && cur);
      const order = rvCompare(prev.resourceVersion, cur.resourceVersion);
      assert.ok(
        order < 0 || (order === 0 && prev.id === cur.id),
        `${name}: ${cur.id} arrived after ${prev.id}`,
      );
      if (order === 0) duplicates++;
    }
  }
  const ids = received().map((e) => e.id);
  assert.equal(new Set(ids).size + duplicates, ids.length, 'every duplicate is an immediate repeat');
  assert.equal(
    received().filter((e) => !expected.some((x) => x.name === e.name && x.type === e.type)).length,
    0,
    'nothing unexpected arrived',
  );
  assert.equal(raven.logs.filter((l) => l.msg.includes('dead-letter')).length, 0, 'nothing was given up on');
  const retried = /raven_deliveries_total\{sink="hook",outcome="retried"\} (\d+)/.exec(during)?.[1];
  assert.ok(Number(retried) > 0, 'deliveries were retried during the outage');
  t.diagnostic(
    `outage ${OUTAGE_MS / 1000} s: ${expected.length} changes, ${received().length} deliveries, ` +
      `${duplicates} duplicates, ${retried ?? '?'} retries during the outage, ` +
      `all delivered ${(caughtUpMs / 1000).toFixed(1)} s after the receiver came back`,
  );

  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
});
