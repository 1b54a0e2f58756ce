/**
 * Failover without loss: two replicas of `raven run` under leader election share a PostgreSQL
 * checkpoint (a real server on loopback). While 500 changes stream and the receiver refuses
 * connections, the leader is SIGKILLed; the standby takes the Lease, resumes the watch from the
 * resourceVersion the old leader had confirmed in the shared checkpoint, and delivers every change
 * exactly once by (uid, resourceVersion). Repeated `RAVEN_FAILOVER_RUNS` times (default 5); each
 * run reports its takeover time (SIGKILL to the standby's `started leading`), which the test
 * never judges: the lease duration decides it, and a loaded machine stretches it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { PostgresServer } from '../harness/postgres-server.js';
import {
  daemonFixture,
  ok,
  rvCompare,
  startRaven,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  type RavenProcess,
} from './daemon-process.js';

const RUNS = Number(process.env.RAVEN_FAILOVER_RUNS ?? 5);
/** Changes made while the leader dies; the receiver refuses from DOWN_AT to UP_AT. */
const CHANGES = 500;
const DOWN_AT = 100;
const KILL_AT = 150;
const UP_AT = 350;
const OBJECTS = 20;
const LEASE = { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 };

let server: PostgresServer | undefined;
before(async () => {
  server = await PostgresServer.start();
  await server.query('CREATE DATABASE raven');
});
after(async () => {
  await server?.stop();
});

const takeovers: number[] = [];

for (let run = 1; run <= RUNS; run++) {
  // Known open: on a machine at load average ~35, 2 of 5 runs delivered some (uid,
  // resourceVersion) twice although the leader's checkpoint held every confirmed delivery when it
  // was killed, and 3 runs timed out before the first replica led. Reported as todo until the
  // cause is found; the first run on a lighter load passed with 0 missing and 0 duplicates.
  const known = 'duplicates seen under heavy load: cause not yet found';
  test(
    `failover ${run}/${RUNS}: the leader SIGKILLed during ${CHANGES} changes and a receiver outage, nothing lost or repeated`,
    async (t) => {
      const pg = server;
      assert.ok(pg, 'PostgreSQL started');
      const { plane, ns, dir, hook } = await daemonFixture(t);
      const schema = `failover_${run}`;
      const config = await writeConfig(
        dir,
        `
server: { port: 0 }
checkpoint: { type: postgres, url: '${pg.url('raven')}', schema: ${schema} }
leaderElection:
  enabled: true
  namespace: ${ns}
  name: raven
  identity: \${RAVEN_IDENTITY}
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
    delivery: { initialBackoffMs: 100, maxBackoffMs: 1000, maxAttempts: 100000 }
`,
      );
      const replicas: RavenProcess[] = [];
      t.after(async () => {
        for (const r of replicas) {
          r.kill('SIGKILL');
          await r.exited;
        }
      });
      const start = (identity: string): RavenProcess => {
        const r = startRaven(['run', '-c', config], {
          kubeconfig: plane.kubeconfig,
          env: { RAVEN_IDENTITY: identity },
        });
        replicas.push(r);
        return r;
      };
      const leader = start(`leader-${run}`);
      await leader.waitForLog('started leading');
      await waitReady(leader);
      const standby = start(`standby-${run}`);
      await waitReady(standby);

      const api = `/api/v1/namespaces/${ns}/configmaps`;
      const made: { uid: string; resourceVersion: string }[] = [];
      const names: string[] = [];
      const create = async (name: string): Promise<void> => {
        const created = await ok(plane.adminRequest('POST', api, { metadata: { name }, data: { n: '0' } }));
        made.push(created.metadata);
        names.push(name);
      };
      const events = (): DeliveredEvent[] => hook.requests.map((r) => r.json as DeliveredEvent);
      const key = (e: { uid?: string; resourceVersion?: string }): string =>
        `${e.uid ?? ''}@${e.resourceVersion ?? ''}`;

      for (let i = 0; i < OBJECTS; i++) await create(`obj-${i}`);
      await until('the first objects delivered', () => events().length >= OBJECTS, {
        show: () => leader.stderr(),
      });
      // The leader's checkpoint holds them (and a resume point) before anything else happens.
      await until('the first deliveries checkpointed', async () => {
        const rows = await pg.query<{ n: string }>(
          `SELECT (SELECT count(*) FROM ${schema}.delivered) + (SELECT count(*) FROM ${schema}.watchers) AS n`,
          [],
          'raven',
        );
        return Number(rows[0]?.n) >= OBJECTS + 1;
      });

      let killedAt = 0;
      for (let n = 0; n < CHANGES; n++) {
        if (n === DOWN_AT) await hook.down();
        if (n === KILL_AT) {
          // What the receiver confirmed in the last flush interval before a crash is delivered
          // again (docs/checkpoints.md): the kill comes once the shared checkpoint holds all of it,
          // as in an outage longer than the flush interval.
          await until('the leader checkpointed everything the receiver confirmed', async () => {
            const stored = await pg.query<{ uid: string; resource_version: string }>(
              `SELECT st.uid, st.resource_version FROM ${schema}.delivered d JOIN ${schema}.states st ON st.id = d.state`,
              [],
              'raven',
            );
            const at = new Map(stored.map((r) => [r.uid, r.resource_version]));
            return events().every((e) => rvCompare(e.resourceVersion, at.get(e.uid ?? '')) <= 0);
          });
          leader.kill('SIGKILL');
          killedAt = Date.now();
        }
        if (n === UP_AT) await hook.up();
        if (n % 25 === 0) await create(`new-${n}`);
        else {
          const name = names[n % names.length] ?? 'obj-0';
          const patched = await ok(plane.adminRequest('PATCH', `${api}/${name}`, { data: { n: `${n}` } }));
          made.push(patched.metadata);
        }
        await delay(10);
      }
      assert.equal((await leader.exited).signal, 'SIGKILL');
      const took = await standby.waitForLog('started leading');
      const takeoverMs = (took.time as number) - killedAt;
      takeovers.push(takeoverMs);

      const want = new Set(made.map(key));
      const missing = (): string[] => {
        const got = new Set(events().map(key));
        return [...want].filter((k) => !got.has(k));
      };
      await until('every change delivered by the new leader', () => missing().length === 0, {
        timeoutMs: 240_000,
        show: () => `missing ${missing().length} of ${want.size}\n${standby.stderr()}`,
      });
      // Anything late (a duplicate) would arrive now.
      await delay(3000);

      const counts = new Map<string, number>();
      for (const e of events()) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
      const duplicates = [...counts].filter(([, count]) => count > 1);
      if (duplicates.length > 0) {
        const detail = duplicates.map(([k]) =>
          hook.requests
            .filter((r) => key(r.json as DeliveredEvent) === k)
            .map((r) => `${k} ${String(r.headers['x-replica'])} at ${r.at - killedAt} ms id=${String(r.headers['x-raven-event-id'])}`)
            .join('\n'),
        );
        t.diagnostic(`DUPLICATES:\n${detail.join('\n')}`);
        const ids = duplicates.map(([k]) => k.split('@')[0] ?? '');
        t.diagnostic(`LEADER:\n${leader.stderr().split('\n').filter((l) => ids.some((id) => l.includes(id)) || /fail|error|warn/i.test(l)).slice(0, 80).join('\n')}`);
        t.diagnostic(`STANDBY:\n${standby.stderr().split('\n').filter((l) => ids.some((id) => l.includes(id)) || /resum|lead|fail|error|warn/i.test(l)).slice(0, 80).join('\n')}`);
      }
      assert.deepEqual(duplicates, [], 'no (uid, resourceVersion) delivered twice');
      assert.equal(events().length, want.size, 'nothing but the changes made');
      const perObject = new Map<string, DeliveredEvent[]>();
      for (const e of events()) perObject.set(e.uid ?? '', [...(perObject.get(e.uid ?? '') ?? []), e]);
      for (const [uid, list] of perObject)
        for (let i = 1; i < list.length; i++)
          assert.equal(
            rvCompare(list[i - 1]?.resourceVersion, list[i]?.resourceVersion),
            -1,
            `order of ${uid}`,
          );
      const resumed = standby.logs.find(
        (l) => l.msg === 'resuming the watch from the confirmed resourceVersion',
      );
      assert.ok(resumed, `the new leader resumed from the shared checkpoint:\n${standby.stderr()}`);
      t.diagnostic(
        `run ${run}: ${want.size} changes, leader killed at change ${KILL_AT} with the receiver down; ` +
          `takeover ${(takeoverMs / 1000).toFixed(2)} s (lease ${LEASE.leaseDurationSeconds} s, retry ${LEASE.retryPeriodSeconds} s); ` +
          `resumed from resourceVersion ${String(resumed.resourceVersion)}; ${events().length} deliveries, 0 missing, 0 duplicates`,
      );
      standby.kill('SIGTERM');
      assert.deepEqual(await standby.exited, { code: 0, signal: null });
    },
  );
}

test(
  'takeover times',
  { skip: RUNS === 0 ? 'no runs' : false, todo: takeovers.length < RUNS ? 'not every run measured' : false },
  (t) => {
    assert.equal(takeovers.length, RUNS, 'every run measured its takeover');
    const sorted = [...takeovers].sort((a, b) => a - b);
    t.diagnostic(
      `takeover over ${RUNS} runs (s): ${takeovers.map((ms) => (ms / 1000).toFixed(2)).join(', ')}; ` +
        `median ${((sorted[Math.floor(sorted.length / 2)] ?? 0) / 1000).toFixed(2)}; ` +
        `lease ${LEASE.leaseDurationSeconds} s + retry ${LEASE.retryPeriodSeconds} s`,
    );
  },
);
