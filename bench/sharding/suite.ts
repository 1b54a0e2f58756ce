/**
 * Sharded replicas: 1, 2 and 4 `raven run` replicas with `sharding.enabled` split the ConfigMaps
 * of one namespace and watch the same churn; reported is what each replica costs over the churn
 * (CPU, bytes read, heap), with the apiserver filtering by shard selector (a control plane with
 * `ShardedListAndWatch` on, the harness's default) and with each replica filtering by hash before
 * parsing (a control plane with the gate off).
 *
 * Started for the suite and stopped at its end, also when a run fails or on Ctrl-C: PostgreSQL
 * (the replicas' shared checkpoint, a fresh schema for every run) and the two private control
 * planes, each with the ConfigMaps created once. A run starts its replicas, waits until each
 * watches its parts among all of them, has synced and has gone quiet, measures over the churn
 * only, checks every change was written exactly once, and stops them. Every wait is bounded: a
 * safety net for a stuck replica, never a measure.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlPlane } from '../../test/harness/control-plane.js';
import { PostgresServer } from '../../test/harness/postgres-server.js';
import { freshNamespace, privateCluster } from '../../test/harness/test-cluster.js';
import type { ChildOutcome } from '../lib/child.js';
import { loadRaven, ravenClient } from '../lib/raven.js';
import { fixed, machineLine } from '../lib/report.js';
import { runRounds } from '../lib/rounds.js';
import { churn, IN_FLIGHT, meanSize, populate, type Client } from './churn.js';
import { Replica } from './replica.js';
import {
  configName,
  IDLE_S,
  shardingMarkdown,
  UNSHARDED,
  wakeUpsPerChange,
  type Filtering,
  type ReplicaMeasure,
  type RunResult,
} from './report.js';

export interface ShardingSuiteOptions {
  /** The node binary the replicas run under. */
  node: string;
  nodeVersion: string;
  /** Where the Raven under test comes from, for the report. */
  raven: string;
  objects: number;
  changes: number;
  runs: number;
  /** The ways of filtering to run: `server`, `client` (default both). */
  only?: string[];
  /** The sharded replica counts to run (default 1, 2 and 4); with a list, no unsharded reference. */
  replicas?: number[];
  /** Patches in flight during the churns (default {@link IN_FLIGHT}): fewer spread the changes out. */
  inFlight?: number;
  log: (line: string) => void;
}

const REPLICA_COUNTS = [1, 2, 4] as const;
const MODES: readonly Filtering[] = ['server', 'client'];

/** From their start until every replica watches its parts among all of them, synced. */
const SETTLE_MS = 180_000;
/** From the first patch until the sinks have written every change. */
const DELIVER_MS = 600_000;
/** After the last change, how long a repeated delivery is looked for. */
const REPEATS_MS = 1_000;
/**
 * Quiet: no replica used more than 50 ms of CPU in the last 500 ms (10% of a core), so that what
 * follows its sync (the checkpoint's baseline, the first lease renewals) stays out of the window.
 * Waited for at most 30 s; on a machine too busy for that the run goes on and says so.
 */
const QUIET = { stepMs: 500, cpuMs: 50, atMostMs: 30_000 };

interface Lab {
  filtering: Filtering;
  plane: ControlPlane;
  namespace: string;
  client: Client;
  /** The next `data.revision` no patch has written yet. */
  revision: number;
}

interface Context {
  options: ShardingSuiteOptions;
  postgresUrl: string;
}

/** One configuration of the suite: `replicas` sharded replicas, or the unsharded reference. */
interface Setup {
  name: string;
  filtering: Filtering;
  replicas: number;
  sharded: boolean;
}

function configYaml(postgresUrl: string, namespace: string, tag: string, sharded: boolean): string {
  const sharding = `sharding:
  enabled: true
  namespace: ${namespace}
  group: bench-${tag}
  identity: \${RAVEN_IDENTITY}
  buckets: 128
  leaseDurationSeconds: 6
  renewDeadlineSeconds: 4
  retryPeriodSeconds: 1
`;
  return `logLevel: info
server: { port: 0 }
checkpoint: { type: postgres, url: '${postgresUrl}', schema: bench_${tag.replaceAll('-', '_')} }
${sharded ? sharding : ''}watchers:
  - { name: cms, resource: configmaps, namespaces: [${namespace}] }
sinks:
  - { name: out, type: stdout, format: json }
`;
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ⏎ ').slice(0, 1200);

/** Poll `done` until it holds; throws when a replica exits or after `timeoutMs`. */
async function waitFor(
  what: string,
  done: () => boolean,
  timeoutMs: number,
  replicas: readonly Replica[],
  progress: () => string = () => '',
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (done()) return;
    const dead = replicas.find((r) => r.exitedYet);
    if (dead !== undefined)
      throw new Error(`${dead.identity} exited before ${what}: ${oneLine(dead.stderrTail())}`);
    if (performance.now() > deadline) {
      const tails = replicas.map((r) => `${r.identity}: ${oneLine(r.stderrTail(400))}`).join(' | ');
      throw new Error(`no ${what} within ${timeoutMs / 1000} s ${progress()}; ${tails}`);
    }
    await delay(100);
  }
}

/** Wait for every replica to go quiet (see QUIET); false when the machine never let it. */
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

/** Until every replica watches its parts among all of them (or, unsharded, has synced), then quiet. */
async function settle(
  lab: Lab,
  setup: Setup,
  replicas: readonly Replica[],
  log: (line: string) => void,
): Promise<void> {
  const identities = replicas.map((r) => r.identity);
  await waitFor(
    setup.sharded ? `${setup.replicas} replicas each watching its parts among all, synced` : 'synced',
    // A sharded replica has also said how it filters (see saturation.ts).
    () =>
      replicas.every((r) =>
        setup.sharded ? r.watchingAmong(identities) && r.filtering() !== undefined : r.synced(),
      ),
    SETTLE_MS,
    replicas,
  );
  const wrong = setup.sharded ? replicas.filter((r) => r.filtering() !== lab.filtering) : [];
  if (wrong.length > 0)
    throw new Error(
      `expected ${lab.filtering}-side filtering: ${wrong.map((r) => `${r.identity} ${r.filtering() ?? 'never said'}`).join(', ')}`,
    );
  if (!(await quiet(replicas))) log(`sharding: ${setup.name}: replicas never went quiet; measuring anyway`);
}

/** Each replica's CPU per second over {@link IDLE_S} seconds without changes. */
async function idleCpu(replicas: readonly Replica[]): Promise<number[]> {
  const before = await Promise.all(replicas.map((r) => r.usage()));
  const started = performance.now();
  await delay(IDLE_S * 1000);
  const after = await Promise.all(replicas.map((r) => r.usage()));
  const seconds = (performance.now() - started) / 1000;
  return after.map((u, i) => (u.cpuMs - (before[i]?.cpuMs ?? 0)) / seconds);
}

/** The churn, measured on each replica from just before the first patch until all is written. */
async function measureChurn(
  lab: Lab,
  replicas: readonly Replica[],
  options: ShardingSuiteOptions,
): Promise<{ ms: number; replicas: Omit<ReplicaMeasure, 'idleCpuMsPerS'>[] }> {
  const before = await Promise.all(replicas.map((r) => r.usage()));
  const linesBefore = replicas.map((r) => r.lines);
  const written = (): number => replicas.reduce((sum, r, i) => sum + r.lines - (linesBefore[i] ?? 0), 0);
  const started = performance.now();
  const first = lab.revision;
  lab.revision += options.changes; // taken even if the churn fails: a revision is never written twice
  await churn(lab.client, lab.namespace, options.objects, options.changes, first, options.inFlight);
  await waitFor(
    `${options.changes} changes written`,
    () => written() >= options.changes,
    DELIVER_MS,
    replicas,
    () => `(${written()} written)`,
  );
  const ms = performance.now() - started;
  const after = await Promise.all(replicas.map((r) => r.usage()));
  const heap = await Promise.all(replicas.map((r) => r.heapUsedBytes()));
  const rss = await Promise.all(replicas.map((r) => r.peakRssBytes()));
  await delay(REPEATS_MS);
  if (written() !== options.changes)
    throw new Error(`the sinks wrote ${written()} lines for ${options.changes} changes`);
  return {
    ms,
    replicas: replicas.map((r, i) => ({
      identity: r.identity,
      cpuMs: (after[i]?.cpuMs ?? 0) - (before[i]?.cpuMs ?? 0),
      readBytes: (after[i]?.readBytes ?? 0) - (before[i]?.readBytes ?? 0),
      wakeUps: (after[i]?.wakeUps ?? 0) - (before[i]?.wakeUps ?? 0),
      heapBytes: heap[i] ?? 0,
      peakRssBytes: rss[i] ?? 0,
      changes: r.lines - (linesBefore[i] ?? 0),
    })),
  };
}

async function runOne(lab: Lab, setup: Setup, round: number, ctx: Context): Promise<ChildOutcome<RunResult>> {
  const { options } = ctx;
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-sharding-'));
  const config = join(dir, 'raven.yaml');
  await writeFile(
    config,
    configYaml(ctx.postgresUrl, lab.namespace, `${setup.name}-r${round}`, setup.sharded),
  );
  const replicas = Array.from({ length: setup.replicas }, (_, i) =>
    Replica.start(options.node, config, `replica-${i}`, lab.plane.kubeconfig),
  );
  const phases: string[] = [];
  let phase = performance.now();
  const lap = (what: string): void => {
    phases.push(`${what} ${fixed((performance.now() - phase) / 1000, 1)} s`);
    phase = performance.now();
  };
  try {
    await settle(lab, setup, replicas, options.log);
    lap('settled');
    const idle = await idleCpu(replicas);
    lap('idle');
    // The warm-up: the same churn, checked but not measured; then quiet again.
    await measureChurn(lab, replicas, options);
    if (!(await quiet(replicas)))
      options.log(`sharding: ${setup.name}: replicas never went quiet after the warm-up; measuring anyway`);
    lap('warmed up');
    const churned = await measureChurn(lab, replicas, options);
    lap('churn');
    const value = {
      ...churned,
      replicas: churned.replicas.map((r, i) => ({ ...r, idleCpuMsPerS: idle[i] ?? Number.NaN })),
    };
    return { ok: true, value };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    lap('stopped');
    options.log(`sharding: ${setup.name} round ${round + 1}: ${phases.join(', ')}`);
    await rm(dir, { recursive: true, force: true });
  }
}

/** A control plane for one way of filtering, with the namespace and its ConfigMaps. */
async function startLab(filtering: Filtering, options: ShardingSuiteOptions): Promise<Lab> {
  options.log(`sharding: starting the ${filtering}-side control plane`);
  const plane = await (filtering === 'server'
    ? privateCluster()
    : privateCluster({ featureGates: { ShardedListAndWatch: false } }));
  let client: Client | undefined;
  try {
    const namespace = await freshNamespace(plane, 'sharding');
    client = await ravenClient(await loadRaven(), plane.kubeconfig);
    const began = performance.now();
    await populate(client, namespace, options.objects);
    options.log(
      `sharding: ${options.objects} ConfigMaps in ${namespace} (${filtering}-side) in ${fixed((performance.now() - began) / 1000)} s`,
    );
    return { filtering, plane, namespace, client, revision: 1 };
  } catch (err) {
    await client?.close();
    await plane.stop();
    throw err;
  }
}

async function stopLab(lab: Lab): Promise<void> {
  await lab.client.close();
  await lab.plane.stop();
}

export async function runShardingSuite(options: ShardingSuiteOptions): Promise<{ markdown: string }> {
  const modes = MODES.filter((m) => options.only === undefined || options.only.includes(m));
  if (modes.length === 0)
    throw new Error(`--only: expected server, client or both, got ${options.only?.join(',')}`);
  const positive = (n: number): boolean => Number.isInteger(n) && n > 0;
  if (options.replicas !== undefined && (options.replicas.length === 0 || !options.replicas.every(positive)))
    throw new Error(
      `--replicas: expected replica counts such as 1,2,4 (positive whole numbers), got ${options.replicas.join(',')}`,
    );
  if (options.inFlight !== undefined && !positive(options.inFlight))
    throw new Error(`--in-flight: expected a positive whole number of patches, got ${options.inFlight}`);
  const labs = new Map<Filtering, Lab>();
  let postgres: PostgresServer | undefined;
  const stopOnSignal = (): void => process.exit(130); // the harness's exit handlers stop what it started
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  try {
    const started = await Promise.allSettled([
      PostgresServer.start({ durable: true }).then(async (server) => {
        postgres = server;
        await server.query('CREATE DATABASE raven');
      }),
      ...modes.map(async (m) => labs.set(m, await startLab(m, options))),
    ]);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    const ctx: Context = { options, postgresUrl: postgres?.url('raven') ?? '' };
    const firstLab = labs.values().next().value;
    const meanObjectBytes =
      firstLab === undefined ? Number.NaN : await meanSize(firstLab.client, firstLab.namespace);
    const counts = options.replicas ?? REPLICA_COUNTS;
    const setups: Setup[] = [
      // The reference: one replica without sharding, on either plane (the gate plays no part).
      ...(options.replicas === undefined
        ? [{ name: UNSHARDED, filtering: modes[0] ?? 'server', replicas: 1, sharded: false }]
        : []),
      ...modes.flatMap((filtering) =>
        counts.map((n) => ({
          name: configName(filtering, n),
          filtering,
          replicas: n,
          sharded: true,
        })),
      ),
    ];
    const began = performance.now();
    const rounds = await runRounds(
      setups,
      options.runs,
      async (c, round) => {
        const lab = labs.get(c.filtering);
        return lab === undefined ? { ok: false, error: 'no control plane' } : runOne(lab, c, round, ctx);
      },
      (c, round, outcome) => {
        const minutes = fixed((performance.now() - began) / 60_000, 1);
        const what = outcome.ok
          ? `CPU per replica ${outcome.value.replicas.map((r) => fixed(r.cpuMs / 1000, 2)).join(', ')} s; read ${outcome.value.replicas.map((r) => fixed(r.readBytes / 2 ** 20, 1)).join(', ')} MiB; wake-ups per change ${outcome.value.replicas.map((r) => fixed(wakeUpsPerChange(r), 2)).join(', ')}; churn ${fixed(outcome.value.ms / 1000, 1)} s`
          : `failed: ${outcome.error}`;
        options.log(`sharding: [${minutes} min] round ${round + 1}/${options.runs} ${c.name}: ${what}`);
      },
    );
    return {
      markdown: shardingMarkdown(rounds, {
        // Taken at the end, so the load average is the one the runs shared.
        machine: machineLine(options.nodeVersion).replace(/; @kubernetes.*$/, ''),
        raven: options.raven,
        objects: options.objects,
        meanObjectBytes,
        changes: options.changes,
        inFlight: options.inFlight ?? IN_FLIGHT,
        runs: options.runs,
        replicaCounts: counts,
        modes,
      }),
    };
  } finally {
    process.off('SIGINT', stopOnSignal).off('SIGTERM', stopOnSignal);
    for (const lab of labs.values()) await stopLab(lab);
    await postgres?.stop();
  }
}
