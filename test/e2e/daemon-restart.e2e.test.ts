/**
 * SIGKILL mid-stream, then a restart with the same SQLite checkpoint: the watch resumes from the
 * resourceVersion every sink had confirmed, so what changed while the daemon was down (a creation,
 * a modification with its diff, a deletion with its final state) arrives as the watch events they
 * were, once each, and so does every change the kill cut off; no flood of `added` for objects that
 * did not change; then live changes continue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ok,
  startRaven,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  type KubeAnswer,
  daemonFixture,
} from './daemon-process.js';

const STABLE = 20;

test('after SIGKILL a restart resumes the watch: every change made while down arrives once, then live changes', async (t) => {
  const { plane, ns, dir, hook } = await daemonFixture(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./raven.db }
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}], labelSelector: 'raven.test/restart', initial: none }
sinks:
  - { name: hook, type: webhook, url: '${hook.url('/events')}', delivery: { initialBackoffMs: 200 } }
`,
  );
  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const create = (name: string, data: Record<string, string>): Promise<KubeAnswer> =>
    ok(
      plane.adminRequest('POST', api, { metadata: { name, labels: { 'raven.test/restart': 'true' } }, data }),
    );
  const patch = (name: string, data: Record<string, string>): Promise<KubeAnswer> =>
    ok(plane.adminRequest('PATCH', `${api}/${name}`, { data }));
  const received = (): DeliveredEvent[] => hook.requests.map((r) => r.json as DeliveredEvent);

  for (let i = 0; i < STABLE; i++) await create(`stable-${i}`, { i: `${i}` });
  await create('change-me', { v: '0' });
  await create('delete-me', { v: '0' });

  // First run: no checkpoint, `initial: none`: a baseline, nothing delivered.
  const first = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    first.kill('SIGKILL');
    await first.exited;
  });
  await waitReady(first);
  await patch('change-me', { v: '1' });
  await create('burst', { n: '0' });
  await until('live changes delivered', () => received().length >= 2, { show: () => first.stderr() });
  assert.deepEqual(
    received().map((e) => `${e.origin} ${e.type} ${e.name}`),
    ['live modified change-me', 'live added burst'],
    'the first run reports no existing object (initial: none)',
  );
  // The checkpoint is written once a second: let it catch up with what was delivered so far.
  await delay(2500);

  // Mid-stream: the daemon is killed while changes to `burst` are arriving.
  const burstVersions: string[] = [];
  for (let n = 1; n <= 10; n++) {
    burstVersions.push((await patch('burst', { n: `${n}` })).metadata.resourceVersion);
    if (n === 5) first.kill('SIGKILL');
  }
  assert.equal((await first.exited).signal, 'SIGKILL');
  const beforeRestart = received().length;

  // While it is down: one creation, one modification, one deletion.
  const created = await create('new-one', { a: 'b' });
  const modified = await patch('change-me', { v: '2' });
  await ok(plane.adminRequest('DELETE', `${api}/delete-me`));

  const second = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    second.kill('SIGKILL');
    await second.exited;
  });
  await waitReady(second);
  const line = await second.waitForLog('resuming the watch from the confirmed resourceVersion');
  const afterRestart = (): DeliveredEvent[] => received().slice(beforeRestart);
  await until(
    'the changes made while down delivered',
    () => ['new-one', 'change-me', 'delete-me'].every((name) => afterRestart().some((e) => e.name === name)),
    { show: () => `${JSON.stringify(received().map((e) => e.id))}\n${second.stderr()}` },
  );

  // Then live changes continue.
  const liveAfter = await patch('stable-0', { i: 'changed' });
  await until(
    'a live change after the restart',
    () => received().some((e) => e.resourceVersion === liveAfter.metadata.resourceVersion),
    { show: () => second.stderr() },
  );
  // Anything late (a duplicate) would arrive now.
  await delay(1500);

  const once = (name: string): DeliveredEvent => {
    const found = afterRestart().filter((e) => e.name === name);
    assert.equal(found.length, 1, `${name}: delivered once, got ${JSON.stringify(found.map((e) => e.id))}`);
    const [event] = found;
    assert.ok(event);
    assert.equal(event.origin, 'live', 'replayed by the apiserver as the watch event it was');
    return event;
  };
  const added = once('new-one');
  assert.equal(added.type, 'added');
  assert.equal(added.resourceVersion, created.metadata.resourceVersion);
  const change = once('change-me');
  assert.equal(change.type, 'modified');
  assert.equal(change.resourceVersion, modified.metadata.resourceVersion);
  assert.deepEqual(change.diff, [{ path: 'data.v', op: 'replace', old: '1', new: '2' }]);
  const deleted = once('delete-me');
  assert.equal(deleted.type, 'deleted');
  assert.equal(deleted.tombstone, false, 'the deletion itself, with the final state, not an inference');

  // No flood: the unchanged objects never appear, except the one changed live after the restart.
  const stable = received().filter((e) => e.name.startsWith('stable-'));
  assert.deepEqual(
    stable.map((e) => `${e.origin} ${e.type} ${e.name}`),
    ['live modified stable-0'],
  );
  // `burst`: every version arrived, none coalesced, in order; the kill may repeat what was
  // confirmed in the last checkpoint interval before it (at least once), nothing else repeats.
  const burst = received().filter((e) => e.name === 'burst' && e.type === 'modified');
  assert.deepEqual([...new Set(burst.map((e) => e.resourceVersion))], burstVersions);
  const ids = received().map((e) => e.id);
  const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
  assert.ok(
    repeated.every((id) => burst.some((e) => e.id === id)),
    `only changes the kill cut off may repeat: ${JSON.stringify(repeated)}`,
  );
  assert.equal(
    received().filter((e) => e.origin === 'restart').length,
    0,
    'nothing was compared: all replayed',
  );
  t.diagnostic(
    `restart: resumed from resourceVersion ${String(line.resourceVersion)} with ${String(line.objects)} objects ` +
      `known; ${afterRestart().length} deliveries after the restart, ${repeated.length} repeated ` +
      `(confirmed in the checkpoint interval before the SIGKILL)`,
  );

  second.kill('SIGTERM');
  assert.deepEqual(await second.exited, { code: 0, signal: null });
});
