/**
 * The outage scenario every streaming sink's end-to-end test runs against its real server: the
 * daemon watches ConfigMaps; the server goes down for 30 s while objects keep changing and comes
 * back on the same port; the daemon is then killed (SIGKILL: its checkpoint may lag what the
 * server already has) and started again. Afterwards the server holds every change exactly once,
 * in order per object. A sink whose server cannot recognise a change it already holds (SMTP)
 * is stopped with SIGTERM instead (`graceful`): it finishes and checkpoints what is in flight, and
 * nothing may come twice; after a crash it would repeat what was unconfirmed, as documented.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  daemonFixture,
  httpGet,
  ok,
  rvCompare,
  startRaven,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  type RavenProcess,
} from './daemon-process.js';

/** The issue asks for 30 s. */
const OUTAGE_MS = 30_000;
/** One change every this often during the outage, round-robin over the objects. */
const CHANGE_EVERY_MS = 500;

export interface StreamingTarget {
  /** The sink's YAML mapping, without `name` and `delivery` (e.g. `type: postgres, connectionString: ...`). */
  sink: string;
  /** Stop the server (connections refused) and start it again on the same port with its data. */
  down: () => Promise<void>;
  up: () => Promise<void>;
  /** Every change the server holds for the sink, in the order it stored them. */
  stored: () => Promise<DeliveredEvent[]>;
  /** Stop the daemon with SIGTERM instead of SIGKILL (for sinks whose writes are not idempotent). */
  graceful?: boolean;
}

interface Expected {
  name: string;
  type: 'added' | 'modified' | 'deleted';
  resourceVersion?: string;
}

export async function outageScenario(
  t: TestContext,
  sinkName: string,
  target: StreamingTarget,
): Promise<void> {
  const { plane, ns, dir } = await daemonFixture(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./state/checkpoint.db }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${ns}], labelSelector: 'raven.test/stream' }
sinks:
  - name: ${sinkName}
    ${target.sink}
    delivery: { initialBackoffMs: 200, maxBackoffMs: 2000, maxAttempts: 1000, deadLetterPath: ./dead.jsonl }
`,
  );
  const ravens: RavenProcess[] = [];
  const start = async (): Promise<{ raven: RavenProcess; url: string }> => {
    const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
    ravens.push(raven);
    return { raven, url: await waitReady(raven) };
  };
  t.after(async () => {
    for (const raven of ravens) {
      raven.kill('SIGKILL');
      await raven.exited;
    }
  });
  let { raven, url } = await start();

  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const expected: Expected[] = [];
  const create = async (name: string): Promise<void> => {
    const created = await ok(
      plane.adminRequest('POST', api, {
        metadata: { name, labels: { 'raven.test/stream': 'true' } },
        data: { n: '0' },
      }),
    );
    expected.push({ name, type: 'added', resourceVersion: created.metadata.resourceVersion });
  };
  const patch = async (name: string, n: number): Promise<void> => {
    const patched = await ok(plane.adminRequest('PATCH', `${api}/${name}`, { data: { n: `${n}` } }));
    expected.push({ name, type: 'modified', resourceVersion: patched.metadata.resourceVersion });
  };
  const names = ['obj-0', 'obj-1', 'obj-2', 'obj-3'];
  for (const name of names) await create(name);
  let stored: DeliveredEvent[] = [];
  const refresh = async (): Promise<DeliveredEvent[]> => (stored = await target.stored());
  await until('the first objects stored', async () => (await refresh()).length >= names.length, {
    show: () => raven.stderr(),
  });

  await target.down();
  const downAt = Date.now();
  let n = 0;
  let live = [...names];
  while (Date.now() - downAt < OUTAGE_MS) {
    n++;
    if (n === 20) {
      await create('obj-4');
      live.push('obj-4');
    } else if (n === 40) {
      await ok(plane.adminRequest('DELETE', `${api}/obj-1`));
      expected.push({ name: 'obj-1', type: 'deleted' });
      live = live.filter((name) => name !== 'obj-1');
    } else {
      await patch(live[n % live.length] ?? 'obj-0', n);
    }
    await delay(CHANGE_EVERY_MS);
  }
  const during = (await httpGet(`${url}/metrics`)).body;
  await target.up();

  // Crash once the server has taken some of the backlog: the checkpoint may lag what it holds.
  const before = stored.length;
  await until('the daemon writes again after the outage', async () => (await refresh()).length > before, {
    show: () => raven.stderr(),
  });
  if (target.graceful === true) {
    raven.kill('SIGTERM');
    assert.deepEqual(await raven.exited, { code: 0, signal: null }, raven.stderr());
  } else {
    raven.kill('SIGKILL');
    await raven.exited;
  }
  for (const name of live.slice(0, 2)) await patch(name, ++n);
  ({ raven, url } = await start());

  const has = (e: Expected): boolean =>
    stored.some(
      (r) =>
        r.name === e.name &&
        r.type === e.type &&
        (e.resourceVersion === undefined || r.resourceVersion === e.resourceVersion),
    );
  await until(
    'every change stored after the server and the daemon restarted',
    async () => {
      await refresh();
      return expected.every(has);
    },
    { show: () => `missing: ${JSON.stringify(expected.filter((e) => !has(e)))}\nlogs:\n${raven.stderr()}` },
  );
  // The restarted daemon has caught up when its backlog is empty; then count.
  await until('the restarted daemon has nothing left to deliver', async () => {
    const metrics = (await httpGet(`${url}/metrics`)).body;
    return new RegExp(`raven_delivery_backlog\\{sink="${sinkName}"\\} 0\\b`).test(metrics);
  });
  await refresh();

  const keys = stored.map((e) => `${e.uid ?? ''}:${e.resourceVersion ?? ''}:${e.type}`);
  assert.equal(new Set(keys).size, keys.length, `nothing stored twice: ${keys.join(' ')}`);
  assert.equal(stored.length, expected.length, 'nothing stored that was not expected');
  const perObject = new Map<string, DeliveredEvent[]>();
  for (const event of stored) perObject.set(event.name, [...(perObject.get(event.name) ?? []), event]);
  for (const [name, events] of perObject)
    for (let i = 1; i < events.length; i++) {
      const [prev, cur] = [events[i - 1], events[i]];
      assert.ok(prev && cur);
      assert.ok(
        rvCompare(prev.resourceVersion, cur.resourceVersion) < 0 || cur.type === 'deleted',
        `${name}: ${cur.id} stored after ${prev.id}`,
      );
    }
  for (const r of ravens)
    assert.equal(r.logs.filter((l) => l.msg.includes('dead-letter')).length, 0, 'nothing was given up on');
  const retried = new RegExp(`raven_deliveries_total\\{sink="${sinkName}",outcome="retried"\\} (\\d+)`).exec(
    during,
  )?.[1];
  assert.ok(Number(retried) > 0, 'deliveries were retried during the outage');
  t.diagnostic(
    `outage ${OUTAGE_MS / 1000} s, then a daemon ${target.graceful === true ? 'restart' : 'crash'}: ${expected.length} changes, ${stored.length} stored, ` +
      `${retried ?? '?'} retries during the outage`,
  );
  raven.kill('SIGTERM');
  await raven.exited;
}
