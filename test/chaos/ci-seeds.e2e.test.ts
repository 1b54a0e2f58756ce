/**
 * The chaos checker's CI seeds (docs/chaos.md): two short schedules, one sharded and one under
 * leader election, each made on a private control plane (the runs restart its apiserver and
 * compact its etcd), a real PostgreSQL checkpoint and `raven run` replicas, and judged by the
 * checker: every change delivered once under one id, nothing else, the right type, in order per
 * object, and gap notices only where changes were really skipped. A failure names the findings
 * and the command that replays the seed. The waits in a run are safety nets; none decides a pass.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ControlPlane } from '../harness/control-plane.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { privateCluster } from '../harness/test-cluster.js';
import { runChaos, type ChaosReport } from './run.js';
import type { Mode } from './schedule.js';

/** The CI seeds: chosen so that each schedule has a hand-over and a name deleted and made again. */
const SEEDS: { mode: Mode; seed: number; durationS: number }[] = [
  { mode: 'sharded', seed: 8, durationS: 30 },
  { mode: 'failover', seed: 3, durationS: 30 },
];

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
  return [report.verdict, ...examples, `replay: ${report.replay}`].join('\n');
}

for (const { mode, seed, durationS } of SEEDS) {
  test(`chaos seed ${seed} in ${mode} mode for ${durationS} s: every change once, nothing else, gaps only when skipped`, async (t) => {
    assert.ok(plane && postgres, 'the control plane and PostgreSQL started');
    const report = await runChaos({
      mode,
      seed,
      durationS,
      plane,
      postgres,
      log: (line) => t.diagnostic(line),
    });
    t.diagnostic(
      `${report.verdict}; ${report.seconds.total} s in all (${report.seconds.setup} s setup, ${report.seconds.operations} s operations, ${report.seconds.settle} s settle: ${report.settled}); ` +
        `blind spots ${JSON.stringify(report.blindSpots)}`,
    );
    assert.equal(report.check.verdict, 'PASS', summary(report));
  });
}
