/**
 * Sharded replicas: three `raven run` processes with `sharding.enabled` share a PostgreSQL
 * checkpoint (a real server on loopback) and split a namespace of 3,000 ConfigMaps by the hash of
 * their uids. While the objects change, one replica is SIGKILLed (the others take its parts over
 * once its Lease has expired) and a fourth joins (taking a share from each). Done twice: on the
 * shared control plane, where the apiserver filters by the shard selector (`ShardedListAndWatch`
 * on; each replica's watcher saw its selector echoed in the list's `metadata.shardInfo`), and on
 * a control plane with the gate off, where each replica filters by the same hash before parsing.
 *
 * What is checked, at a webhook receiver that deduplicates on `x-raven-event-id` (as
 * docs/scaling.md tells receivers to): every change (each creation and modification by uid and
 * resourceVersion, each deletion by uid) is processed exactly once, nothing else is; every
 * delivery a replica made is of an object in a part of the hash space it owned; the killed
 * replica's parts were resumed from the shared checkpoint. Requests received twice are counted
 * and reported with their cause (the sender never got the answer; the killed replica had not
 * recorded it). No wait decides a pass: each is a safety net for a stuck replica.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { bucketOf } from '../../src/watch/shard/assign-hash-space.js';
import { fnv1a64 } from '../../src/watch/shard/fnv1a64.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { HttpReceiver, type ReceivedRequest } from '../harness/http-receiver.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { deleteNamespace, freshNamespace, privateCluster, sharedCluster } from '../harness/test-cluster.js';
import {
  eventIdOf,
  ok,
  processedOnce,
  startRaven,
  tempDir,
  until,
  writeConfig,
  type DeliveredEvent,
  type RavenProcess,
} from './daemon-process.js';

const OBJECTS = Number(process.env.RAVEN_SHARDING_OBJECTS ?? 3000);
/** Modifications (and every 10th a deletion) in each phase of the churn. */
const CHURN = 300;
const BUCKETS = 128;
const LEASE = { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 };
const MESSAGE = {
  watching: 'watching this replica’s parts of the hash space',
  server: 'the server filters by the shard selector',
  client: /does not echo the shard selector/,
};

let server: PostgresServer | undefined;
before(async () => {
  server = await PostgresServer.start();
  await server.query('CREATE DATABASE raven');
});
after(async () => {
  await server?.stop();
});

test(`3 sharded replicas on ${OBJECTS} objects, the server filtering: one killed, one added, every change once`, async (t) => {
  const plane = await sharedCluster();
  await shardedRun(t, plane, 'server', 'sharded_server', true);
});

test(`the same with the feature gate off: each replica filters by hash before parsing`, async (t) => {
  const plane = await privateCluster({ featureGates: { ShardedListAndWatch: false } });
  t.after(() => plane.stop());
  await shardedRun(t, plane, 'client', 'sharded_client', false);
});

async function shardedRun(
  t: TestContext,
  plane: ControlPlane,
  filtering: 'server' | 'client',
  schema: string,
  shared: boolean,
): Promise<void> {
  const pg = server;
  assert.ok(pg, 'PostgreSQL started');
  const ns = await freshNamespace(plane);
  // A private control plane goes with everything in it.
  if (shared) t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  const hook = await HttpReceiver.start();
  t.after(() => hook.close());
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { type: postgres, url: '${pg.url('raven')}', schema: ${schema} }
sharding:
  enabled: true
  namespace: ${ns}
  group: shards
  identity: \${RAVEN_IDENTITY}
  buckets: ${BUCKETS}
  leaseDurationSeconds: ${LEASE.leaseDurationSeconds}
  renewDeadlineSeconds: ${LEASE.renewDeadlineSeconds}
  retryPeriodSeconds: ${LEASE.retryPeriodSeconds}
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}] }
sinks:
  - name: hook
    type: webhook
    url: '${hook.url('/events')}'
    headers: { x-replica: '\${RAVEN_IDENTITY}' }
    delivery: { concurrency: 16, initialBackoffMs: 100, maxBackoffMs: 1000, maxAttempts: 100000 }
`,
  );
  const replicas = new Map<string, RavenProcess>();
  t.after(async () => {
    for (const r of replicas.values()) {
      r.kill('SIGKILL');
      await r.exited;
    }
  });
  const start = (identity: string): RavenProcess => {
    const r = startRaven(['run', '-c', config], {
      kubeconfig: plane.kubeconfig,
      env: { RAVEN_IDENTITY: identity },
    });
    replicas.set(identity, r);
    return r;
  };
  const replica = (identity: string): RavenProcess => {
    const r = replicas.get(identity);
    assert.ok(r, identity);
    return r;
  };
  /** The parts `identity` was given each time it started watching, with the members then. */
  const assignments = (identity: string): { members: string[]; parts: number[] }[] =>
    replica(identity)
      .logs.filter((l) => l.msg === MESSAGE.watching)
      .map((l) => ({ members: l.members as string[], parts: l.parts as number[] }));
  /** Wait until every one of `identities` watches its parts among exactly those members, synced. */
  const settled = async (identities: string[]): Promise<void> => {
    const want = [...identities].sort().join(',');
    await until(
      `replicas ${want} watching their parts`,
      () =>
        identities.every((id) => {
          const r = replica(id);
          const last = r.logs.findLastIndex((l) => l.msg === MESSAGE.watching);
          const line = r.logs[last];
          return (
            line !== undefined &&
            (line.members as string[]).join(',') === want &&
            r.logs.slice(last).some((l) => l.msg === 'synced')
          );
        }),
      {
        timeoutMs: 180_000,
        show: () => identities.map((id) => `${id}:\n${replica(id).stderr().slice(-3000)}`).join('\n'),
      },
    );
  };

  for (const id of ['r0', 'r1', 'r2']) start(id);
  await settled(['r0', 'r1', 'r2']);

  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const want = new Set<string>();
  const live: string[] = [];
  const uids = new Map<string, string>();
  const change = async (method: 'POST' | 'PATCH' | 'DELETE', name: string, body?: unknown): Promise<void> => {
    const path = method === 'POST' ? api : `${api}/${name}`;
    const answer = await ok(plane.adminRequest(method, path, body));
    if (method === 'DELETE') {
      // The answer to a deletion is a Status: the uid is the one the object was made with.
      want.add(`${uids.get(name) ?? name}@deleted`);
      return;
    }
    const m = answer.metadata as { uid: string; resourceVersion: string };
    uids.set(name, m.uid);
    want.add(`${m.uid}@${m.resourceVersion}`);
  };
  // Creations, eight at a time.
  for (let i = 0; i < OBJECTS; i += 8) {
    const batch = Array.from({ length: Math.min(8, OBJECTS - i) }, (_, j) => `cm-${i + j}`);
    await Promise.all(batch.map((name) => change('POST', name, { metadata: { name }, data: { n: '0' } })));
    live.push(...batch);
  }
  let step = 0;
  const churn = async (): Promise<void> => {
    for (let n = 0; n < CHURN; n++, step++) {
      const index = (step * 7919) % live.length;
      const name = live[index] ?? 'cm-0';
      if (n % 10 === 9) {
        live.splice(index, 1);
        await change('DELETE', name);
      } else await change('PATCH', name, { data: { n: String(step) } });
      await delay(5);
    }
  };
  await churn();
  // A replica dies while the changes go on; the others take its parts once its Lease expires.
  const killed = replica('r1');
  killed.kill('SIGKILL');
  const killedAt = Date.now();
  await killed.exited;
  await churn();
  await settled(['r0', 'r2']);
  await churn();
  // A replica joins while the changes go on; it takes a share of each of the others' parts.
  start('r3');
  await churn();
  await settled(['r0', 'r2', 'r3']);
  await churn();

  const idOf = eventIdOf;
  const keyOf = (e: DeliveredEvent): string =>
    `${e.uid ?? ''}@${e.type === 'deleted' ? 'deleted' : (e.resourceVersion ?? '')}`;
  const processed = (): ReceivedRequest[] => processedOnce(hook.requests);
  const missing = (): string[] => {
    const got = new Set(processed().map((r) => keyOf(r.json as DeliveredEvent)));
    return [...want].filter((k) => !got.has(k));
  };
  await until('every change delivered', () => missing().length === 0, {
    timeoutMs: 300_000,
    show: () => {
      const lost = missing();
      return (
        `missing ${lost.length} of ${want.size}: ` +
        lost
          .slice(0, 10)
          .map((k) => {
            const part = bucketOf(fnv1a64(k.split('@')[0] ?? ''), BUCKETS);
            const owners = [...replicas.keys()].map(
              (id) =>
                `${id} [${assignments(id)
                  .map((a) => (a.parts.includes(part) ? 'y' : 'n'))
                  .join('')}]`,
            );
            return `${k} (part ${part}; owned at each assignment: ${owners.join(' ')})`;
          })
          .join(', ') +
        '\n' +
        [...replicas].map(([id, r]) => `${id}:\n${r.stderr()}`).join('\n')
      );
    },
  });
  // Anything late (a repeat) would arrive now.
  await delay(3000);

  const counts = new Map<string, number>();
  for (const r of processed()) {
    const k = keyOf(r.json as DeliveredEvent);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  assert.deepEqual(
    [...counts].filter(([, n]) => n > 1),
    [],
    'no change processed twice (one event id per change)',
  );
  assert.deepEqual(
    [...counts.keys()].filter((k) => !want.has(k)),
    [],
    'nothing but the changes made',
  );

  // Each replica delivered only objects of the parts it was given.
  const partOf = (uid: string): number => bucketOf(fnv1a64(uid), BUCKETS);
  const delivered = new Map<string, number>();
  for (const r of hook.requests) {
    const from = String(r.headers['x-replica']);
    delivered.set(from, (delivered.get(from) ?? 0) + 1);
    const owned = new Set(assignments(from).flatMap((a) => a.parts));
    const e = r.json as DeliveredEvent;
    assert.ok(
      owned.has(partOf(e.uid ?? '')),
      `${from} delivered ${e.name} of part ${partOf(e.uid ?? '')}, never its`,
    );
  }
  for (const id of ['r0', 'r1', 'r2', 'r3']) assert.ok((delivered.get(id) ?? 0) > 0, `${id} delivered`);
  // The parts of the last assignment cover the hash space once.
  const last = ['r0', 'r2', 'r3'].flatMap((id) => assignments(id).at(-1)?.parts ?? []);
  assert.deepEqual(
    [...last].sort((a, b) => a - b),
    [...Array(BUCKETS).keys()],
  );

  // How each replica filtered: as the server's answer to its probe showed.
  for (const id of ['r0', 'r2', 'r3']) {
    const logs = replica(id).logs;
    if (filtering === 'server') {
      assert.ok(
        logs.some((l) => l.msg === MESSAGE.server),
        `${id} had the server filter`,
      );
      assert.ok(!logs.some((l) => MESSAGE.client.test(l.msg)), `${id} never filtered itself`);
    } else {
      assert.ok(
        logs.some((l) => MESSAGE.client.test(l.msg)),
        `${id} filtered by hash before parsing`,
      );
      assert.ok(!logs.some((l) => l.msg === MESSAGE.server), `${id} was never told the server filters`);
    }
    assert.ok(
      logs.some((l) => l.msg === 'resuming the watch from the confirmed resourceVersion'),
      `${id} resumed its parts from the shared checkpoint`,
    );
  }

  // Repeats, with their causes: the answer never reached the sender, or the killed replica had
  // not recorded the delivery when it died.
  const why = { unanswered: 0, killed: 0, other: 0 };
  const firstOf = new Map<string, ReceivedRequest>();
  for (const r of hook.requests) {
    const first = firstOf.get(idOf(r));
    if (first === undefined) firstOf.set(idOf(r), r);
    else if (!first.answered) why.unanswered++;
    else if (String(first.headers['x-replica']) === 'r1' && first.at <= killedAt) why.killed++;
    else why.other++;
  }
  t.diagnostic(
    `${filtering} filtering: ${want.size} changes of ${OBJECTS} objects; ${processed().length} processed, 0 missing, 0 twice; ` +
      `deliveries per replica ${JSON.stringify(Object.fromEntries(delivered))}; ` +
      `${hook.requests.length - processed().length} requests received twice (${why.unanswered} unanswered, ` +
      `${why.killed} from the killed replica before it died, ${why.other} at a hand-over)`,
  );
  for (const id of ['r0', 'r2', 'r3']) {
    const r = replica(id);
    r.kill('SIGTERM');
    assert.deepEqual(
      await r.exited,
      { code: 0, signal: null },
      `${id} stopped cleanly:\n${r.stderr().slice(-2000)}`,
    );
  }
}
