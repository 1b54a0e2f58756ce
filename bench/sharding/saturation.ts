/**
 * Sharding as capacity: what each sharded `raven run` replica costs per change it owns when its
 * share arrives back to back, with N = 1, 2, 4 (and 8, server-side) replicas, the apiserver
 * filtering by shard selector or each replica filtering by hash before parsing.
 *
 * The changes come from the daemon benchmark's pre-serialised stand-in apiserver
 * (`../daemon/change-server.ts`: 1,000 realistic pods of ~7.6 KB, each change a new annotation
 * value, so every change has a one-entry diff and reaches the sink), as fast as each replica reads
 * them: a real apiserver on the same 2 cores would measure itself. It plays the server-side filter
 * of `ShardedListAndWatch` (or not), and sends everything else, the replicas' Leases, to a real
 * control plane, so the group's membership and hand-overs are the real ones. The checkpoint is a
 * real PostgreSQL with its durable defaults (fsync on), shared by the replicas as in production;
 * the sink is a stdout sink (JSON lines, counted by the suite).
 *
 * A run starts its replicas, waits until each watches its parts among all of them, synced and
 * quiet, releases one batch of changes as a warm-up, waits for it, then releases the measured
 * batch. Each replica's CPU (user + system, from /proc) is taken from the release until its sink
 * has written its last change, and divided by the changes it wrote: CPU per owned change. The
 * reference is one replica with sharding off, on the same checkpoint and stream. Every change must
 * be written exactly once over the replicas of a run, or the run fails.
 *
 * Beside it, `prefilter-micro.ts` measures the pre-parse filter alone: what a replica filtering by
 * hash spends on an event of another replica's part, against a JSON.parse of the same line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlPlane } from '../../test/harness/control-plane.js';
import { PostgresServer } from '../../test/harness/postgres-server.js';
import { freshNamespace, privateCluster } from '../../test/harness/test-cluster.js';
import { startChangeServer, type ChangeServer } from '../daemon/change-server.js';
import { runChild, type ChildOutcome } from '../lib/child.js';
import { fixed, machineLine, table } from '../lib/report.js';
import {
  failureLines,
  goalsTable,
  loadSummary,
  median,
  ratioSpread,
  roundRatios,
  runRounds,
  spread,
  type Rounds,
} from '../lib/rounds.js';
import { Replica } from './replica.js';
import type { Filtering } from './report.js';

export interface SaturationSuiteOptions {
  node: string;
  nodeVersion: string;
  raven: string;
  objects: number;
  /** Changes per batch: one warm-up batch, then the measured one. */
  changes: number;
  runs: number;
  /** The setups to run, by name (default all). */
  only?: string[];
  log: (line: string) => void;
}

interface Setup {
  name: string;
  filtering: Filtering;
  replicas: number;
  sharded: boolean;
}

/** One replica over the measured batch. */
interface ReplicaResult {
  identity: string;
  cpuMs: number;
  /** From the release until its sink wrote its last change. */
  ms: number;
  changes: number;
}

interface RunResult {
  /** From the release until every change was written. */
  ms: number;
  replicas: ReplicaResult[];
  /** PostgreSQL's committed transactions over the batch, per second. */
  commitsPerS: number;
}

interface PrefilterResult {
  events: number;
  /** CPU per event, in nanoseconds: JSON.parse of the line's text. */
  parseNs: number;
  /** The pre-parse filter on an event of another replica's part (the event dropped unparsed). */
  filterNs: number;
  /** decodeWatchLine on an event of the replica's own part (filter passed, then parsed). */
  ownNs: number;
  /** The filter on a foreign event of a cluster-scoped object (the same pods without a namespace). */
  clusterFilterNs: number;
  /** JSON.parse of the cluster-scoped line. */
  clusterParseNs: number;
}

const UNSHARDED = 'unsharded';
const SETUPS: readonly Setup[] = [
  { name: UNSHARDED, filtering: 'server', replicas: 1, sharded: false },
  ...[1, 2, 4, 8].map((n) => ({
    name: `server-${n}`,
    filtering: 'server' as const,
    replicas: n,
    sharded: true,
  })),
  ...[1, 2, 4].map((n) => ({
    name: `client-${n}`,
    filtering: 'client' as const,
    replicas: n,
    sharded: true,
  })),
];

/** Safety nets, never measures: settling, and one batch being written. */
const SETTLE_MS = 240_000;
const BATCH_MS = 600_000;
/** After the last change, how long a repeated delivery is looked for. */
const REPEATS_MS = 1_000;
const QUIET = { stepMs: 500, cpuMs: 50, atMostMs: 30_000 };
/** How often the replicas' lines and CPU are read during a batch. */
const SAMPLE_MS = 20;

function configYaml(postgresUrl: string, namespace: string, tag: string, sharded: boolean): string {
  const sharding = `sharding:
  enabled: true
  namespace: ${namespace}
  group: sat-${tag}
  identity: \${RAVEN_IDENTITY}
  leaseDurationSeconds: 6
  renewDeadlineSeconds: 4
  retryPeriodSeconds: 1
`;
  return `logLevel: info
server: { port: 0 }
checkpoint: { type: postgres, url: '${postgresUrl}', schema: sat_${tag.replaceAll('-', '_')} }
${sharded ? sharding : ''}watchers:
  - { name: pods, resource: pods }
sinks:
  - { name: out, type: stdout, format: json }
`;
}

function kubeconfig(url: string, token: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster: { server: "${url}" }
users:
- name: bench
  user: { token: ${token} }
contexts:
- name: bench
  context: { cluster: bench, user: bench, namespace: default }
current-context: bench
`;
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ⏎ ').slice(0, 1200);

async function waitFor(what: string, done: () => boolean, timeoutMs: number, replicas: readonly Replica[]) {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    const dead = replicas.find((r) => r.exitedYet);
    if (dead !== undefined)
      throw new Error(`${dead.identity} exited before ${what}: ${oneLine(dead.stderrTail())}`);
    if (performance.now() > deadline)
      throw new Error(
        `no ${what} within ${timeoutMs / 1000} s; ${replicas.map((r) => `${r.identity}: ${oneLine(r.stderrTail(400))}`).join(' | ')}`,
      );
    await delay(100);
  }
}

async function quiet(replicas: readonly Replica[]): Promise<boolean> {
  const deadline = performance.now() + QUIET.atMostMs;
  let last = await Promise.all(replicas.map((r) => r.usage()));
  while (performance.now() < deadline) {
    await delay(QUIET.stepMs);
    const now = await Promise.all(replicas.map((r) => r.usage()));
    const busy = now.some((u, i) => u.cpuMs - (last[i]?.cpuMs ?? 0) > QUIET.cpuMs);
    last = now;
    if (!busy) return true;
  }
  return false;
}

async function commits(postgres: PostgresServer): Promise<number> {
  const rows = await postgres.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = 'raven'`);
  return Number((rows as { xact_commit: string }[])[0]?.xact_commit ?? Number.NaN);
}

/**
 * Release one batch and follow it: each replica's CPU and time at the last sample where its
 * count grew, until the replicas together wrote `changes` lines.
 */
async function batch(
  server: ChangeServer,
  replicas: readonly Replica[],
  changes: number,
  postgres: PostgresServer,
): Promise<RunResult> {
  const linesBefore = replicas.map((r) => r.lines);
  const written = (): number => replicas.reduce((sum, r, i) => sum + r.lines - (linesBefore[i] ?? 0), 0);
  const cpuBefore = await Promise.all(replicas.map((r) => r.usage()));
  const commitsBefore = await commits(postgres);
  const started = performance.now();
  server.release();
  const last = replicas.map((r, i) => ({
    lines: 0,
    cpuMs: cpuBefore[i]?.cpuMs ?? 0,
    at: started,
    identity: r.identity,
  }));
  const deadline = started + BATCH_MS;
  for (;;) {
    await delay(SAMPLE_MS);
    const counts = replicas.map((r, i) => r.lines - (linesBefore[i] ?? 0));
    const grew = counts.map((n, i) => n > (last[i]?.lines ?? 0));
    const usage = await Promise.all(
      replicas.map((r, i) => (grew[i] === true ? r.usage() : Promise.resolve(undefined))),
    );
    const at = performance.now();
    counts.forEach((n, i) => {
      const u = usage[i];
      const entry = last[i];
      if (u !== undefined && entry !== undefined) Object.assign(entry, { lines: n, cpuMs: u.cpuMs, at });
    });
    if (counts.reduce((a, b) => a + b, 0) >= changes) break;
    const dead = replicas.find((r) => r.exitedYet);
    if (dead !== undefined) throw new Error(`${dead.identity} exited: ${oneLine(dead.stderrTail())}`);
    if (at > deadline)
      throw new Error(`${written()} of ${changes} changes written within ${BATCH_MS / 1000} s`);
  }
  const ms = performance.now() - started;
  const commitsPerS = ((await commits(postgres)) - commitsBefore) / (ms / 1000);
  await delay(REPEATS_MS);
  if (written() !== changes) throw new Error(`the sink wrote ${written()} lines for ${changes} changes`);
  return {
    ms,
    commitsPerS,
    replicas: last.map((l, i) => ({
      identity: l.identity,
      cpuMs: l.cpuMs - (cpuBefore[i]?.cpuMs ?? 0),
      ms: l.at - started,
      changes: l.lines,
    })),
  };
}

interface Lab {
  plane: ControlPlane;
  namespace: string;
  postgres: PostgresServer;
  options: SaturationSuiteOptions;
}

async function runOne(lab: Lab, setup: Setup, round: number): Promise<ChildOutcome<RunResult>> {
  const { options } = lab;
  const server = await startChangeServer({
    objects: options.objects,
    changes: options.changes,
    held: true,
    batches: 2,
    everyWatch: true,
    shardSelector: setup.filtering === 'server',
    forward: { server: lab.plane.state.server, caFile: lab.plane.state.pki.caCert },
  });
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-saturation-'));
  const config = join(dir, 'raven.yaml');
  await writeFile(
    config,
    configYaml(lab.postgres.url('raven'), lab.namespace, `${setup.name}-r${round}`, setup.sharded),
  );
  await writeFile(join(dir, 'kubeconfig'), kubeconfig(server.url, lab.plane.state.token));
  const replicas = Array.from({ length: setup.replicas }, (_, i) =>
    Replica.start(options.node, config, `replica-${i}`, join(dir, 'kubeconfig')),
  );
  try {
    const identities = replicas.map((r) => r.identity);
    await waitFor(
      setup.sharded
        ? `${setup.replicas} replicas each watching its parts among all, synced, and saying how it filters`
        : 'synced',
      // A sharded replica has also said how it filters: a watcher replaced while it was still asking
      // the server says nothing, and its successor's answer may come after another's 'synced'.
      () =>
        replicas.every((r) =>
          setup.sharded ? r.watchingAmong(identities) && r.filtering() !== undefined : r.synced(),
        ),
      SETTLE_MS,
      replicas,
    );
    const wrong = setup.sharded ? replicas.filter((r) => r.filtering() !== setup.filtering) : [];
    if (wrong.length > 0)
      throw new Error(
        `expected ${setup.filtering}-side filtering: ${wrong.map((r) => `${r.identity} ${r.filtering() ?? 'never said'}`).join(', ')}`,
      );
    if (!(await quiet(replicas)))
      options.log(`saturation: ${setup.name}: replicas never went quiet; measuring anyway`);
    await batch(server, replicas, options.changes, lab.postgres); // the warm-up
    if (!(await quiet(replicas)))
      options.log(`saturation: ${setup.name}: replicas never went quiet after the warm-up; measuring anyway`);
    return { ok: true, value: await batch(server, replicas, options.changes, lab.postgres) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** CPU per owned change of a run's replicas (µs): the median replica, and the busiest. */
const perChange = (m: ReplicaResult): number => (m.cpuMs * 1000) / Math.max(1, m.changes);
const medianPerChange = (r: RunResult): number => median(r.replicas.map(perChange));
const ratePerReplica = (r: RunResult): number => median(r.replicas.map((m) => (m.changes * 1000) / m.ms));
const aggregateRate = (r: RunResult): number => (r.replicas.reduce((s, m) => s + m.changes, 0) * 1000) / r.ms;

function okRuns(rounds: Rounds<RunResult>, name: string): RunResult[] {
  return (rounds.runs.get(name) ?? []).filter((r): r is RunResult => r !== undefined);
}

function markdown(
  rounds: Rounds<RunResult>,
  setups: readonly Setup[],
  prefilter: ChildOutcome<PrefilterResult>[],
  options: SaturationSuiteOptions,
): string {
  const rows = setups.map((s) => {
    const runs = okRuns(rounds, s.name);
    return [
      `\`${s.name}\``,
      String(s.replicas),
      spread(runs.map(medianPerChange)),
      spread(runs.map((r) => Math.max(...r.replicas.map(perChange)))),
      ratioSpread(roundRatios(rounds, s.name, UNSHARDED, medianPerChange)),
      ratioSpread(roundRatios(rounds, s.name, `${s.filtering}-1`, medianPerChange)),
      spread(runs.map((r) => median(r.replicas.map((m) => m.changes)))),
      spread(runs.map(ratePerReplica)),
      spread(runs.map(aggregateRate)),
      spread(runs.map((r) => r.commitsPerS)),
      String(runs.length),
    ];
  });
  const pre = prefilter.flatMap((o) => (o.ok ? [o.value] : []));
  const preRatios = pre.map((p) => p.filterNs / p.parseNs);
  const goals = goalsTable([
    ...[2, 4, 8].map((n) => ({
      label: `server-side, ${n} replicas: CPU per owned change ÷ one unsharded replica's`,
      ratios: roundRatios(rounds, `server-${n}`, UNSHARDED, medianPerChange),
      target: '≤ 1.10x',
      met: (m: number) => m <= 1.1,
    })),
    ...[2, 4].map((n) => ({
      label: `client-side, ${n} replicas: CPU per owned change ÷ one unsharded replica's`,
      ratios: roundRatios(rounds, `client-${n}`, UNSHARDED, medianPerChange),
      target: '≤ 1.10x',
      met: (m: number) => m <= 1.1,
    })),
    {
      label: 'pre-parse filter per foreign event ÷ JSON.parse of it',
      ratios: preRatios,
      target: '≤ 0.05x',
      met: (m: number) => m <= 0.05,
    },
    {
      label: 'the same, the object cluster-scoped (no namespace)',
      ratios: pre.map((p) => p.clusterFilterNs / p.clusterParseNs),
      target: '≤ 0.05x',
      met: (m: number) => m <= 0.05,
    },
  ]);
  const preRows = pre.map((p, i) => [
    String(i + 1),
    fixed(p.parseNs / 1000, 1),
    fixed(p.filterNs / 1000, 2),
    fixed(p.ownNs / 1000, 1),
    `${fixed((p.filterNs / p.parseNs) * 100, 1)} %`,
    fixed(p.clusterFilterNs / 1000, 2),
    `${fixed((p.clusterFilterNs / p.clusterParseNs) * 100, 1)} %`,
  ]);
  return [
    '# Sharding as capacity: CPU per owned change at saturation',
    '',
    `Measured ${machineLine(options.nodeVersion).replace(/; @kubernetes.*$/, '')}. ${loadSummary(rounds.load)}. Raven: ${options.raven}.`,
    '',
    `\`raven run\` replicas (stdout sink, counted; PostgreSQL checkpoint, fsync on) watch ${options.objects} realistic pods (~7.6 KB) on the daemon benchmark's pre-serialised stand-in apiserver, which streams each replica its share back to back (server-side: only the replica's parts, as \`ShardedListAndWatch\` does; client-side: everything, filtered by the replica before parsing) and forwards the Leases to a real control plane. Per run: a warm-up batch of ${options.changes} changes, then the measured batch of ${options.changes}; each replica's CPU from the release until its sink wrote its last change, divided by the changes it wrote. Per-replica figures are the median replica of a run; then medians (range) of ${options.runs} interleaved rounds; ratios per round. Aggregate changes/s is every replica's changes over the time until the last was written (2 cores, shared with PostgreSQL, the control plane and the stand-in server).`,
    '',
    table(
      [
        'setup',
        'replicas',
        'CPU µs per owned change',
        'busiest replica',
        '÷ unsharded',
        '÷ 1 replica, same filtering',
        'changes per replica',
        'changes/s per replica',
        'changes/s, all replicas',
        'PostgreSQL commits/s',
        'runs',
      ],
      rows,
    ),
    '',
    goals,
    '',
    `The pre-parse filter alone (\`prefilter-micro.ts\`, its own process, ${pre[0]?.events ?? 0} events of those pods, CPU per event; median of 10 passes each): JSON.parse of the line's text, the filter on an event of another part (peeked, hashed, dropped unparsed), an event of the replica's own part through the same decoder (peeked, then parsed without managedFields), and a foreign event of a cluster-scoped object (the same pods with no namespace), against the parse of its own line. The filter reads what a watcher filtering by shard reads on its live watch: the type, the uid and the resourceVersion, from the line's bytes, and stops there.`,
    '',
    table(
      [
        'run',
        'JSON.parse µs',
        'foreign event, filtered µs',
        'own event, decoded µs',
        'filter ÷ parse',
        'cluster-scoped foreign event µs',
        'cluster-scoped filter ÷ parse',
      ],
      preRows,
    ),
    ...failureLines(rounds),
    ...prefilter.flatMap((o) => (o.ok ? [] : [`\nprefilter-micro failed: ${o.error}`])),
  ].join('\n');
}

export async function runSaturationSuite(options: SaturationSuiteOptions): Promise<{ markdown: string }> {
  const setups = SETUPS.filter(
    (s) => options.only === undefined || options.only.includes(s.name) || s.name === UNSHARDED,
  );
  const stopOnSignal = (): void => process.exit(130);
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  let plane: ControlPlane | undefined;
  let postgres: PostgresServer | undefined;
  try {
    const [p, pg] = await Promise.all([
      privateCluster(),
      PostgresServer.start({ durable: true }).then(async (server) => {
        await server.query('CREATE DATABASE raven');
        return server;
      }),
    ]);
    plane = p;
    postgres = pg;
    const lab: Lab = { plane, namespace: await freshNamespace(plane, 'saturation'), postgres, options };
    const began = performance.now();
    const rounds = await runRounds(
      setups,
      options.runs,
      (s, round) => runOne(lab, s, round),
      (s, round, outcome) => {
        const minutes = fixed((performance.now() - began) / 60_000, 1);
        const what = outcome.ok
          ? `µs per owned change ${outcome.value.replicas.map((m) => fixed(perChange(m))).join(', ')}; changes ${outcome.value.replicas.map((m) => m.changes).join(', ')}; ${fixed(aggregateRate(outcome.value))} changes/s in all`
          : `failed: ${outcome.error}`;
        options.log(`saturation: [${minutes} min] round ${round + 1}/${options.runs} ${s.name}: ${what}`);
      },
    );
    const prefilter: ChildOutcome<PrefilterResult>[] = [];
    for (let i = 0; i < options.runs; i++)
      prefilter.push(
        await runChild<PrefilterResult>({
          node: options.node,
          script: 'bench/sharding/prefilter-micro.ts',
          args: [String(options.objects)],
          timeoutMs: 300_000,
        }),
      );
    return { markdown: markdown(rounds, setups, prefilter, options) };
  } finally {
    process.off('SIGINT', stopOnSignal).off('SIGTERM', stopOnSignal);
    await plane?.stop();
    await postgres?.stop();
  }
}
