/**
 * Every change through a daemon crash. The receiver is down while ~200 changes are made; the
 * daemon is SIGKILLed in the middle of that window with everything still queued, and started
 * again: it resumes the watch from the resourceVersion every sink had confirmed, so the apiserver
 * replays each change, and every (uid, resourceVersion) arrives exactly once. The watcher spans
 * two namespaces, one busy and one quiet: two watches, each resumed where both had confirmed.
 *
 * Then the case a replay cannot cover: etcd compacted and the apiserver restarted while the daemon
 * is down (a control plane of the test's own), so the resume point has expired. The daemon lists,
 * delivers what differs from each sink's checkpoint, and reports the gap: a log line, a metric and
 * a gap notice to the sink that asked for them. The same compaction and restart while the daemon
 * runs makes its watch relist: a gap as well, reported the same way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { HttpReceiver } from '../harness/http-receiver.js';
import { deleteNamespace, freshNamespace, privateCluster } from '../harness/test-cluster.js';
import {
  daemonFixture,
  httpGet,
  jsonLines,
  ok,
  rvCompare,
  startRaven,
  tempDir,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  type KubeAnswer,
  type RavenProcess,
} from './daemon-process.js';

/** The scenario: the receiver is down this long ... */
const OUTAGE_MS = 45_000;
/** ... the daemon is killed this far into it, and started again this much later. */
const KILL_AT_MS = 15_000;
const RESTART_AT_MS = 22_000;
/** One change about this often: ~200 changes in the outage. */
const CHANGE_EVERY_MS = 220;

interface Change {
  uid: string;
  name: string;
  type: 'added' | 'modified' | 'deleted';
  /** Unknown for a deletion: the watch reports the deletion's own resourceVersion. */
  resourceVersion?: string;
}

interface GapRecord {
  type: 'gap';
  id: string;
  watcher: string;
  reason: string;
  fromResourceVersion?: string;
  toResourceVersion?: string;
  message: string;
}

interface StatusAnswer {
  details?: { uid?: string };
  metadata?: { uid?: string };
}

function stop(raven: RavenProcess): () => Promise<void> {
  return async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  };
}

test('a daemon killed while its receiver is down delivers every change exactly once after the restart', async (t) => {
  const { plane, ns, dir, hook } = await daemonFixture(t);
  const quiet = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, quiet));
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./state/checkpoint.db }
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}, ${quiet}], labelSelector: 'raven.test/crash' }
sinks:
  - name: hook
    type: webhook
    url: '${hook.url('/events')}'
    gapNotices: true
    delivery: { initialBackoffMs: 200, maxBackoffMs: 2000, maxAttempts: 100000 }
`,
  );
  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const quietApi = `/api/v1/namespaces/${quiet}/configmaps`;
  const changes: Change[] = [];
  const create = async (name: string, where = api): Promise<void> => {
    const created = await ok(
      plane.adminRequest('POST', where, {
        metadata: { name, labels: { 'raven.test/crash': 'true' } },
        data: { n: '0' },
      }),
    );
    changes.push({
      uid: created.metadata.uid,
      name,
      type: 'added',
      resourceVersion: created.metadata.resourceVersion,
    });
  };
  const uidOf = new Map<string, string>();
  const received = (): (DeliveredEvent | GapRecord)[] =>
    hook.requests.map((r) => r.json as DeliveredEvent | GapRecord);
  const events = (): DeliveredEvent[] => received().filter((e): e is DeliveredEvent => e.type !== 'gap');

  const first = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(stop(first));
  await waitReady(first);
  const live = ['obj-0', 'obj-1', 'obj-2', 'obj-3', 'obj-4'];
  for (const name of live) await create(name);
  await create('quiet-0', quietApi);
  for (const c of changes) uidOf.set(c.name, c.uid);
  await until('the first objects delivered', () => events().length >= changes.length, {
    show: () => first.stderr(),
  });

  await hook.down();
  const downAt = Date.now();
  let second: RavenProcess | undefined;
  let n = 0;
  while (Date.now() - downAt < OUTAGE_MS) {
    const at = Date.now() - downAt;
    if (at >= KILL_AT_MS && !first.exitedYet()) first.kill('SIGKILL');
    if (at >= RESTART_AT_MS && second === undefined) {
      assert.equal((await first.exited).signal, 'SIGKILL');
      second = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
      t.after(stop(second));
    }
    n++;
    if (n % 23 === 0) {
      // Now and then in the quiet namespace.
      const patched = await ok(plane.adminRequest('PATCH', `${quietApi}/quiet-0`, { data: { n: `${n}` } }));
      changes.push({
        uid: patched.metadata.uid,
        name: 'quiet-0',
        type: 'modified',
        resourceVersion: patched.metadata.resourceVersion,
      });
    } else if (n % 50 === 0) {
      // A creation and a deletion now and then, also while the daemon is down.
      const name = `new-${n}`;
      await create(name);
      uidOf.set(name, changes.at(-1)?.uid ?? '');
      live.push(name);
      const gone = live.shift() ?? '';
      const answer = await ok<StatusAnswer>(plane.adminRequest('DELETE', `${api}/${gone}`));
      const uid = answer.details?.uid ?? answer.metadata?.uid ?? uidOf.get(gone) ?? '';
      changes.push({ uid, name: gone, type: 'deleted' });
    } else {
      const name = live[n % live.length] ?? 'obj-0';
      const patched = await ok(plane.adminRequest('PATCH', `${api}/${name}`, { data: { n: `${n}` } }));
      changes.push({
        uid: patched.metadata.uid,
        name,
        type: 'modified',
        resourceVersion: patched.metadata.resourceVersion,
      });
    }
    await delay(CHANGE_EVERY_MS);
  }
  assert.ok(second, 'the daemon was restarted during the outage');
  const restarted = second;
  const resumed = await restarted.waitForLog('resuming the watch from the confirmed resourceVersion');
  await hook.up();

  const key = (e: { uid?: string; resourceVersion?: string }): string =>
    `${e.uid ?? ''}@${e.resourceVersion ?? ''}`;
  const delivered = (c: Change): boolean =>
    events().some(
      (e) =>
        e.uid === c.uid &&
        e.type === c.type &&
        (c.resourceVersion === undefined || e.resourceVersion === c.resourceVersion),
    );
  await until('every change delivered after the receiver came back', () => changes.every(delivered), {
    timeoutMs: 180_000,
    show: () =>
      `missing ${changes.filter((c) => !delivered(c)).length} of ${changes.length}: ` +
      `${JSON.stringify(changes.filter((c) => !delivered(c)).slice(0, 10))}\n${restarted.stderr()}`,
  });
  // Anything late (a duplicate) would arrive now.
  await delay(3000);

  const counts = new Map<string, number>();
  for (const e of events()) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
  const duplicates = [...counts].filter(([, count]) => count > 1);
  assert.deepEqual(duplicates, [], 'no (uid, resourceVersion) delivered twice');
  assert.equal(events().length, changes.length, 'nothing but the changes made');
  // In order per object: resourceVersions only grow.
  const perObject = new Map<string, DeliveredEvent[]>();
  for (const e of events()) perObject.set(e.uid ?? '', [...(perObject.get(e.uid ?? '') ?? []), e]);
  for (const [uid, list] of perObject)
    for (let i = 1; i < list.length; i++)
      assert.equal(rvCompare(list[i - 1]?.resourceVersion, list[i]?.resourceVersion), -1, `order of ${uid}`);
  assert.deepEqual(
    received().filter((e) => e.type === 'gap'),
    [],
    'a replay leaves no gap',
  );
  const url = await waitReady(restarted);
  const metrics = (await httpGet(`${url}/metrics`)).body;
  assert.doesNotMatch(metrics, /^raven_gaps_total\{/m);
  const replayed = events().filter(
    (e) => rvCompare(e.resourceVersion, resumed.resourceVersion as string) > 0,
  );
  t.diagnostic(
    `${changes.length} changes (${changes.filter((c) => c.type !== 'modified').length} creations and deletions), ` +
      `receiver down ${OUTAGE_MS / 1000} s, daemon killed at ${KILL_AT_MS / 1000} s and restarted at ` +
      `${RESTART_AT_MS / 1000} s; resumed from resourceVersion ${String(resumed.resourceVersion)} ` +
      `(${String(resumed.objects)} objects known); ${replayed.length} changes replayed, ` +
      `${events().length} deliveries, ${duplicates.length} duplicates, 0 missing`,
  );
  restarted.kill('SIGTERM');
  assert.deepEqual(await restarted.exited, { code: 0, signal: null });
});

test('an expired resume point is reported as a gap with the end state delivered, and a relist while running that found nothing changed is not', async (t) => {
  const plane = await privateCluster();
  const hook = await HttpReceiver.start();
  const daemons: RavenProcess[] = [];
  // One hook, in order: the daemons, the receiver, then the control plane they talk to.
  t.after(async () => {
    for (const daemon of daemons) await stop(daemon)();
    await hook.close();
    await plane.stop();
  });
  const ns = await freshNamespace(plane);
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./checkpoint.db }
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}] }
sinks:
  - { name: hook, type: webhook, url: '${hook.url('/events')}', gapNotices: true, delivery: { initialBackoffMs: 200 } }
  - { name: archive, type: file, path: ./events.jsonl }
`,
  );
  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const create = (name: string): Promise<KubeAnswer> =>
    ok(plane.adminRequest('POST', api, { metadata: { name }, data: { v: '0' } }));
  const patch = (name: string, v: string): Promise<KubeAnswer> =>
    ok(plane.adminRequest('PATCH', `${api}/${name}`, { data: { v } }));
  const received = (): (DeliveredEvent | GapRecord)[] =>
    hook.requests.map((r) => r.json as DeliveredEvent | GapRecord);

  const first = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  daemons.push(first);
  await waitReady(first);
  for (const name of ['keep', 'change', 'remove']) await create(name);
  await patch('change', '1');
  await until('the first changes delivered', () => received().length >= 4, { show: () => first.stderr() });
  // A clean stop writes the checkpoint, the confirmed resourceVersion with it.
  first.kill('SIGTERM');
  assert.deepEqual(await first.exited, { code: 0, signal: null });
  const before = received().length;

  // While it is down: changes, then the history they were part of is compacted away.
  await patch('change', '2');
  const changed = await patch('change', '3');
  await ok(plane.adminRequest('DELETE', `${api}/remove`));
  const added = await create('added');
  await plane.compactEtcd();
  await plane.restartApiserver();

  const second = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  daemons.push(second);
  const url = await waitReady(second);
  await second.waitForLog('resuming the watch from the confirmed resourceVersion');
  const gapLine = await second.waitForLog('gap: intermediate changes may be missing', 1, 120_000);
  assert.equal(gapLine.level, 40, 'logged at warn');
  assert.equal(gapLine.reason, 'resume-expired');
  assert.deepEqual(gapLine.sinks, ['hook', 'archive']);

  const after = (): (DeliveredEvent | GapRecord)[] => received().slice(before);
  await until(
    'the end state and the gap notice delivered',
    () =>
      after().some((e) => e.type === 'gap') &&
      after().some((e) => e.type === 'modified' && e.resourceVersion === changed.metadata.resourceVersion) &&
      after().some((e) => e.type === 'deleted' && e.name === 'remove') &&
      after().some((e) => e.type === 'added' && e.resourceVersion === added.metadata.resourceVersion),
    { timeoutMs: 120_000, show: () => `${JSON.stringify(after())}\n${second.stderr()}` },
  );
  const gap = after().find((e): e is GapRecord => e.type === 'gap');
  assert.ok(gap);
  assert.equal(gap.reason, 'resume-expired');
  assert.equal(gap.watcher, 'cms');
  assert.equal(gap.fromResourceVersion, gapLine.fromResourceVersion);
  assert.equal(gap.toResourceVersion, gapLine.toResourceVersion);
  assert.equal(rvCompare(gap.fromResourceVersion, changed.metadata.resourceVersion), -1);

  // The end state: what changed while down arrives as one change per object, from each sink's
  // own last state; the intermediate state `2` is the hole the notice reports.
  const changes = after().filter((e): e is DeliveredEvent => e.type !== 'gap');
  assert.deepEqual(changes.map((e) => `${e.origin} ${e.type} ${e.name}`).sort(), [
    'restart added added',
    'restart deleted remove',
    'restart modified change',
  ]);
  const modified = changes.find((e) => e.name === 'change');
  assert.deepEqual(modified?.diff, [{ path: 'data.v', op: 'replace', old: '1', new: '3' }]);

  let metrics = '';
  await until(
    'the gap counted for both sinks',
    async () => (metrics = (await httpGet(`${url}/metrics`)).body).includes('raven_gaps_total{'),
    { show: () => metrics },
  );
  assert.match(metrics, /^raven_gaps_total\{watcher="cms",sink="hook",reason="resume-expired"\} 1$/m);
  assert.match(metrics, /^raven_gaps_total\{watcher="cms",sink="archive",reason="resume-expired"\} 1$/m);

  // The archive has the same end state and no notice: it did not ask for them.
  await until(
    'the archive caught up',
    async () => {
      const lines = jsonLines(
        (await readFile(join(dir, 'events.jsonl'), 'utf8').catch(() => '')).split('\n'),
      );
      // Every object's change, not only the first: sinks deliver different objects in any order.
      return ['added', 'change', 'remove'].every((name) =>
        lines.some((e) => e.name === name && e.origin === 'restart'),
      );
    },
    { show: () => second.stderr() },
  );
  const archived = jsonLines<DeliveredEvent | GapRecord>(
    (await readFile(join(dir, 'events.jsonl'), 'utf8')).split('\n'),
  );
  assert.equal(archived.filter((e) => e.type === 'gap').length, 0);
  assert.deepEqual(
    archived
      .filter((e): e is DeliveredEvent => e.type !== 'gap' && e.origin === 'restart')
      .map((e) => `${e.type} ${e.name}`)
      .sort(),
    ['added added', 'deleted remove', 'modified change'],
  );

  // And live changes go on from the relist.
  const liveAfter = await patch('keep', 'live');
  await until(
    'a live change after the gap',
    () =>
      received().some((e) => e.type !== 'gap' && e.resourceVersion === liveAfter.metadata.resourceVersion),
    { show: () => second.stderr() },
  );
  t.diagnostic(
    `resume point ${gap.fromResourceVersion ?? '?'} expired (compacted; apiserver restarted): ` +
      `${changes.length} changes delivered as the end state, gap notice "${gap.message}"`,
  );

  // While the daemon runs: its watch loses its place (history compacted, apiserver restarted)
  // and relists. Nothing changed meanwhile, so nothing was missed: no gap, one info line.
  await plane.compactEtcd();
  await plane.restartApiserver();
  await second.waitForLog(/nothing changed meanwhile, nothing missed/, 1, 120_000);
  const afterRelist = await patch('keep', 'after-relist');
  await until(
    'live changes after the relist',
    () =>
      received().some((e) => e.type !== 'gap' && e.resourceVersion === afterRelist.metadata.resourceVersion),
    { timeoutMs: 120_000, show: () => second.stderr() },
  );
  assert.equal(
    received().filter((e) => e.type === 'gap' && e.reason === 'relist').length,
    0,
    'no gap notice for a relist that found every object as it was',
  );
  metrics = (await httpGet(`${url}/metrics`)).body;
  assert.doesNotMatch(metrics, /^raven_gaps_total\{[^}]*reason="relist"\}/m);
  second.kill('SIGTERM');
  assert.deepEqual(await second.exited, { code: 0, signal: null });
});
