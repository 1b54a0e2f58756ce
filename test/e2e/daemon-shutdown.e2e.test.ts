/**
 * Signals: SIGTERM stops watching and drains what is queued to a slow receiver (within
 * `shutdown.drainTimeoutSeconds`), writes the checkpoint and exits 0; a second signal exits at
 * once with a non-zero code, without waiting for the drain.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { HttpReceiver } from '../harness/http-receiver.js';
import {
  httpGet,
  ok,
  startRaven,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  type RavenProcess,
  daemonFixture,
} from './daemon-process.js';

const OBJECTS = 6;

async function setup(
  t: TestContext,
  options: { slowMs?: number; failing?: boolean; drainTimeoutSeconds: number },
): Promise<{ raven: RavenProcess; hook: HttpReceiver; names: string[] }> {
  const { plane, ns, dir, hook } = await daemonFixture(t);
  hook.slow(options.slowMs ?? 0);
  if (options.failing === true) hook.fallback = { status: 503 };
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./raven.db }
shutdown: { drainTimeoutSeconds: ${options.drainTimeoutSeconds} }
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}], labelSelector: 'raven.test/drain' }
sinks:
  - { name: hook, type: webhook, url: '${hook.url('/events')}', delivery: { concurrency: 1, maxAttempts: 1000, initialBackoffMs: 200, maxBackoffMs: 1000 } }
`,
  );
  const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  const url = await waitReady(raven);
  const names: string[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    names.push(`cm-${i}`);
    await ok(
      plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: `cm-${i}`, labels: { 'raven.test/drain': 'true' } },
      }),
    );
  }
  // Every change must have reached the daemon before the signal (stopping ends the watch: a change
  // still on its way would be found at the next start, not drained now).
  await until(
    'every change seen by the daemon',
    async () =>
      (await httpGet(`${url}/metrics`)).body.includes(
        `raven_events_total{watcher="cms",type="added"} ${OBJECTS}`,
      ),
    { show: () => raven.stderr() },
  );
  // The receiver has the first event; with one delivery at a time, the rest are queued behind it.
  await until('the first delivery under way', () => hook.requests.length >= 1, {
    show: () => raven.stderr(),
  });
  return { raven, hook, names };
}

test('SIGTERM delivers what is queued to a slow receiver, logs the drain and exits 0', async (t) => {
  const { raven, hook, names } = await setup(t, { slowMs: 700, drainTimeoutSeconds: 60 });
  raven.kill('SIGTERM');
  const exit = await raven.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, raven.stderr());
  const delivered = hook.requests.map((r) => (r.json as DeliveredEvent).name);
  assert.deepEqual(delivered.sort(), names, 'every queued event was delivered before the exit');
  const draining = raven.logs.find((l) => l.msg === 'draining: delivering what is queued');
  assert.ok(draining, `the drain is logged:\n${raven.stderr()}`);
  assert.ok(Number(draining.events) > 0, 'events were still queued at the signal');
  assert.equal(draining.drainTimeoutSeconds, 60);
  assert.ok(raven.logs.some((l) => l.msg === 'drained'));
  assert.ok(raven.logs.some((l) => l.msg === 'stopped'));
  assert.equal(raven.logs.filter((l) => l.msg.includes('not delivered before the drain deadline')).length, 0);
  t.diagnostic(`drained ${String(draining.events)} queued events after SIGTERM`);
});

test('a second signal exits at once, without waiting for the drain', async (t) => {
  // The receiver keeps answering 503 and the drain may take 10 minutes: only the second signal ends it.
  const { raven } = await setup(t, { failing: true, drainTimeoutSeconds: 600 });
  raven.kill('SIGTERM');
  await raven.waitForLog('draining: delivering what is queued');
  assert.equal(raven.exitedYet(), false, 'still draining after the first signal');
  raven.kill('SIGTERM');
  // Generous: "at once" means long before the drain deadline, not within a measured time.
  await until('the exit after the second signal', () => raven.exitedYet(), { timeoutMs: 30_000 });
  const exit = await raven.exited;
  assert.equal(exit.signal, null);
  assert.notEqual(exit.code, 0, 'a forced exit is not a clean one');
  assert.equal(exit.code, 130);
  assert.equal(
    raven.logs.some((l) => l.msg === 'drained'),
    false,
    'it did not wait for the drain',
  );
});

test('a drain that ends early ends the process: nothing waits out the drain deadline', async (t) => {
  // A drain deadline of an hour; the receiver answers at once, so the drain takes moments. The
  // process must exit when it has (a timer left for the deadline kept it alive for the hour).
  const { raven } = await setup(t, { drainTimeoutSeconds: 3600 });
  raven.kill('SIGTERM');
  await raven.waitForLog('stopped');
  // Generous: long past the milliseconds an exit takes, far short of the drain deadline.
  await until('the exit after a finished drain', () => raven.exitedYet(), {
    timeoutMs: 120_000,
    show: () => raven.stderr(),
  });
  assert.deepEqual(await raven.exited, { code: 0, signal: null }, raven.stderr());
});
