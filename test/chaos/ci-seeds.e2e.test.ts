/**
 * The chaos checker's CI seeds (docs/chaos.md): three short schedules, one per mode (sharded,
 * under leader election, a single replica), made at the same time on one private control plane
 * (a run restarts its apiserver and compacts its etcd, which every run then meets too), one real
 * PostgreSQL (a schema per run) and each run's own `raven run` replicas, receiver and proxy, and
 * each judged by the checker: every change delivered once under one id, nothing else, the right
 * type, in order per object, and gap notices only where changes were really skipped. A failure
 * names the findings and the command that replays the seed. The waits in a run are safety nets;
 * none decides a pass.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane } from '../harness/control-plane.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { privateCluster } from '../harness/test-cluster.js';
import type { TimelineEntry } from './faults.js';
import { runChaos, type ChaosReport } from './run.js';
import type { Mode } from './schedule.js';

/**
 * The CI seeds: each schedule has a hand-over, a SIGKILL and names deleted and made again. Only
 * the failover seed has faults of the whole control plane (a compaction, with the apiserver
 * restarted), so that no two runs restart the one apiserver at once.
 */
const SEEDS: { mode: Mode; seed: number; durationS: number }[] = [
  { mode: 'sharded', seed: 8, durationS: 30 },
  { mode: 'failover', seed: 3, durationS: 30 },
  { mode: 'single', seed: 20, durationS: 30 },
];

/** Resolves once every run is ready to start its schedule (or has failed before it). */
let arrived = 0;
let allReady: () => void = () => undefined;
const everyRunReady = new Promise<void>((resolve) => (allReady = resolve));
function arrive(): Promise<void> {
  if (++arrived === SEEDS.length) allReady();
  return everyRunReady;
}

let plane: ControlPlane | undefined;
let postgres: PostgresServer | undefined;
before(async () => {
  [plane, postgres] = await Promise.all([privateCluster(), PostgresServer.start()]);
});
after(async () => {
  await Promise.all([plane?.stop(), postgres?.stop()]);
});

function summary(report: ChaosReport): string {
  const c = report.check;
  const examples = [
    ...c.missing,
    ...c.twice,
    ...c.phantoms,
    ...c.wrongType,
    ...c.outOfOrder,
    ...c.needlessGapNotices,
    ...c.incompleteHistory,
  ]
    .slice(0, 10)
    .map(
      (f) =>
        `  ${f.watcher} ${f.namespace ?? ''}/${f.name ?? ''} ${f.uid ?? ''}@${f.resourceVersion ?? ''}: ${f.detail}`,
    );
  return [
    report.verdict,
    ...examples,
    `report: ${report.replicaLogs?.replace(/\.logs$/, '.json') ?? '-'} (replica logs: ${report.replicaLogs ?? '-'})`,
    `replay: ${report.replay}`,
  ].join('\n');
}

/** Each run's fault timeline: a blind spot is blamed on another run's apiserver restart too. */
const timelines: TimelineEntry[][] = [];

describe('the chaos CI seeds, made at the same time', { concurrency: SEEDS.length }, () => {
  for (const { mode, seed, durationS } of SEEDS) {
    test(`chaos seed ${seed} in ${mode} mode for ${durationS} s: every change once, nothing else, gaps only when skipped`, async (t) => {
      assert.ok(plane && postgres, 'the control plane and PostgreSQL started');
      let waited = false;
      const ready = (): Promise<void> => {
        waited = true;
        return arrive();
      };
      const report = await runChaos({
        ready,
        mode,
        seed,
        durationS,
        plane,
        postgres,
        sharedTimelines: timelines,
        // The report and each replica's log, for a failure to be read after the run.
        reportFile: join(tmpdir(), `raven-chaos-ci-${mode}-${seed}-${process.pid}.json`),
        log: (line) => t.diagnostic(line),
      }).finally(() => {
        if (!waited) void arrive(); // failed before its schedule: the others need not wait for it
      });
      t.diagnostic(
        `${report.verdict}; ${report.seconds.total} s in all (${report.seconds.setup} s setup, ${report.seconds.operations} s operations, ${report.seconds.settle} s settle: ${report.settled}); ` +
          `blind spots ${JSON.stringify(report.blindSpots)}`,
      );
      assert.equal(report.check.verdict, 'PASS', summary(report));
    });
  }
});
