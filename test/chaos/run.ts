/**
 * One chaos run: the schedule of a seed, made on a real control plane, a real PostgreSQL checkpoint,
 * 1 to 4 `raven run` replicas and a webhook receiver, then judged by the checker.
 *
 * 1. Two namespaces to watch and one for the Leases; two watchers on ConfigMaps in both
 *    namespaces (`all`, and `selected` with the label selector `chaos/in=yes`); one webhook sink
 *    with gap notices, whose receiver records every request.
 * 2. The initial replicas start (single: 1, failover: 2 under leader election, sharded: 3) and
 *    the run waits until they watch everything; the checker's etcd watch starts there.
 * 3. The driver's operations and the fault lanes run at their times.
 * 4. Once the operations and faults are done, the run waits until the receiver has everything,
 *    or until it is quiet (the replicas watch everything, no request and no replica log line for
 *    QUIET_MS, no replica holding a backlog); a safety net
 *    stops the wait in any case. The wait never passes a run: the checker decides.
 * 5. The report: the checker's counts and findings, the fault timeline, the hand-over blind spots
 *    (test/chaos/blind-spot.ts) and the command that replays the seed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlPlane } from '../harness/control-plane.js';
import { HttpReceiver } from '../harness/http-receiver.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import { kubeconfigVia, privateCluster } from '../harness/test-cluster.js';
import { blindSpots, summarize, type ReplicaFault } from './blind-spot.js';
import {
  check,
  verdictLine,
  type Delivered,
  type Receipt,
  type Report,
  type WatcherScope,
} from './checker.js';
import { Driver } from './driver.js';
import { etcdRevision, EtcdHistory } from './etcd-history.js';
import { describe, FaultRunner, type TimelineEntry } from './faults.js';
import { ReplicaPool } from './replicas.js';
import {
  generateSchedule,
  SELECTOR,
  SELECTOR_LABEL,
  type FaultKind,
  type Mode,
  type Schedule,
} from './schedule.js';

/** Parts of the hash space when sharded: few, so that a hand-over moves several objects' parts. */
const BUCKETS = 16;
const LEASE = { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 };
/** Quiet for this long, with no backlog anywhere, ends the wait: longer than a lease's expiry. */
const QUIET_MS = 20_000;
/** Safety nets for a stuck run; they never decide a pass. */
const SETTLE_GIVE_UP_MS = 300_000;
const START_GIVE_UP_MS = 240_000;

export interface ChaosOptions {
  seed: number;
  mode: Mode;
  durationS: number;
  /** A control plane to use (else a private one is started and stopped). */
  plane?: ControlPlane;
  /** A PostgreSQL server to use (else one is started and stopped). */
  postgres?: PostgresServer;
  /** Where to write the JSON report. */
  reportFile?: string;
  exclude?: readonly FaultKind[];
  /**
   * Awaited once the initial replicas watch everything, before the schedule starts: runs that
   * share a control plane start their schedules together, so that none restarts the apiserver
   * while another is still starting.
   */
  ready?: () => Promise<void>;
  /**
   * The fault timelines of every run on the same control plane: this run adds its own, and
   * blames its blind spots on the others' apiserver restarts too (its replicas meet them, its
   * own timeline does not hold them).
   */
  sharedTimelines?: TimelineEntry[][];
  log?: (line: string) => void;
}

export interface HandOver {
  fault: string;
  kind: string;
  startedAt: number;
  /** Parts left unwatched after it, and the longest of those stretches. */
  parts: number;
  maxUnwatchedMs: number;
}

export interface ChaosReport {
  seed: number;
  mode: Mode;
  durationS: number;
  replay: string;
  verdict: string;
  check: Report;
  /** Every gap notice processed (first copy of each id). */
  gapNotices: Delivered[];
  /** Each event id a finding names: every copy received, who sent it, when, its origin. */
  findingReceipts: Record<string, { from?: string; at: number; origin?: string; tombstone?: boolean }[]>;
  /** Where each replica process's log was written, when a report file was asked for. */
  replicaLogs?: string;
  operations: Record<string, number>;
  timeline: (TimelineEntry & { description: string })[];
  handOvers: HandOver[];
  blindSpots: Record<'planned' | 'crash' | 'other', ReturnType<typeof summarize>>;
  seconds: { setup: number; operations: number; settle: number; total: number };
  /** How the wait at the end stopped. */
  settled: 'everything delivered' | 'quiet' | 'gave up';
  driverLateMs: number;
}

export function replayCommand(mode: Mode, seed: number, durationS: number): string {
  return `npm run chaos -- --mode ${mode} --seed ${seed} --duration ${durationS}`;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`chaos: ${line}\n`));
  const began = Date.now();
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const schedule = generateSchedule(options);
    const plane = options.plane ?? (await privateCluster());
    if (options.plane === undefined) cleanup.push(() => plane.stop());
    let postgres = options.postgres;
    if (postgres === undefined) {
      const started = await PostgresServer.start();
      cleanup.push(() => started.stop());
      postgres = started;
    }
    await postgres.query('CREATE DATABASE raven').catch(() => undefined); // there already
    const dir = await mkdtemp(join(tmpdir(), 'raven-chaos-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const receiver = await HttpReceiver.start();
    cleanup.push(() => receiver.close());
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: plane.state.ports.apiserver });
    cleanup.push(() => proxy.close());
    await createNamespaces(plane, schedule);
    if (options.plane !== undefined)
      cleanup.push(() =>
        Promise.all(
          [...schedule.namespaces, schedule.controlNamespace].map((ns) =>
            plane.adminRequest('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined),
          ),
        ),
      );
    const watchers: WatcherScope[] = [
      { name: 'all', namespaces: schedule.namespaces },
      {
        name: 'selected',
        namespaces: schedule.namespaces,
        selector: { label: SELECTOR_LABEL, value: 'yes' },
      },
    ];
    const config = join(dir, 'raven.yaml');
    await writeFile(config, configYaml(schedule, postgres.url('raven'), receiver.url('/events')));
    const replicas = new ReplicaPool(config, await kubeconfigVia(plane, proxy, dir), log);
    cleanup.push(() => replicas.stopAll('SIGKILL'));
    for (const id of schedule.initialReplicas) replicas.start(id);
    await waitUntil(
      'the initial replicas watch everything',
      () => {
        const crashed = replicas.crashed();
        if (crashed.length > 0)
          throw new Error(`replica ${crashed.join(', ')} exited during start-up:\n${replicas.tails()}`);
        return watchingAll(replicas, schedule.mode, watchers.length);
      },
      START_GIVE_UP_MS,
      () => replicas.tails(),
    );

    await options.ready?.();
    const history = EtcdHistory.start(plane.state.etcdUrl, await etcdRevision(plane.state.etcdUrl));
    cleanup.push(() => {
      history.close();
      return Promise.resolve();
    });
    const setupDone = Date.now();
    log(
      `seed ${schedule.seed}, ${schedule.mode}: ${schedule.ops.length} operations and ${schedule.faults.length} faults over ${schedule.durationMs / 1000} s`,
    );
    const driver = new Driver(plane, log);
    const faults = new FaultRunner({ plane, postgres, receiver, proxy, replicas, log });
    options.sharedTimelines?.push(faults.timeline);
    await Promise.all([driver.run(schedule.ops, setupDone), faults.run(schedule.faults, setupDone)]);
    const operationsDone = Date.now();
    // The etcd watch reports revisions of ConfigMaps only: a ConfigMap written now, where no watcher
    // looks, marks the point the history must reach.
    // Made again while the apiserver restarts (another run on the same control plane may restart it).
    let mark = { status: 0, body: '' };
    await waitUntil(
      "the history's mark written",
      async () => {
        mark = await plane
          .adminRequest('POST', `/api/v1/namespaces/${schedule.controlNamespace}/configmaps`, {
            metadata: { generateName: 'history-mark-' },
          })
          .catch((err: unknown) => ({ status: 0, body: String(err) }));
        if (mark.status !== 0 && mark.status < 500 && mark.status !== 201)
          throw new Error(`writing the history's mark: ${mark.status} ${mark.body}`);
        return mark.status === 201;
      },
      START_GIVE_UP_MS,
      () => `the last answer: ${mark.status} ${mark.body}`,
    );
    await history.caughtUp(
      BigInt((JSON.parse(mark.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion),
    );

    const judge = (): Report =>
      check({
        watchers,
        history: history.changes,
        writes: driver.writes,
        receipts: receipts(receiver),
        ...(history.error === undefined ? {} : { historyError: history.error.message }),
        // Every run's on the control plane (the shared timelines hold this run's too).
        compactions: (options.sharedTimelines ?? [faults.timeline])
          .flat()
          .flatMap((e) => (e.compactedAt === undefined ? [] : [e.compactedAt])),
      });
    let settled: ChaosReport['settled'] = 'gave up';
    for (const giveUp = Date.now() + SETTLE_GIVE_UP_MS; Date.now() < giveUp;) {
      await delay(1000);
      const lastRequest = receiver.requests.at(-1)?.at ?? 0;
      if (judge().counts.missing === 0 && Date.now() - lastRequest > 3000) {
        settled = 'everything delivered';
        break;
      }
      // A replica that just logged (synced after resuming, met a 410, is relisting) may still
      // deliver: quiet counts from its last line too.
      if (
        Date.now() - Math.max(lastRequest, operationsDone, replicas.lastLogAt()) > QUIET_MS &&
        watchingAll(replicas, schedule.mode, watchers.length) &&
        (await backlog(replicas)) === 0
      ) {
        settled = 'quiet';
        break;
      }
    }
    const end = Date.now();
    const report = judge();
    const line = verdictLine(report);

    // What can leave a part unwatched: a replica stopping or joining, a stall that costs the
    // replicas their Leases, or the apiserver away (restarted, with or without a compaction: no
    // one can watch, and Leases lapse), whichever run on the control plane made it. The other
    // faults cost a relist at most, not the work on a part.
    const apiserverAway = (e: TimelineEntry): boolean =>
      e.fault.kind === 'apiserver-restart' || e.fault.kind === 'compaction';
    const others = (options.sharedTimelines ?? []).filter((t) => t !== faults.timeline).flat();
    const blamed = [
      ...faults.timeline.filter(
        (e) => e.fault.lane === 'replicas' || e.fault.kind === 'stall' || apiserverAway(e),
      ),
      ...others.filter(apiserverAway),
    ].sort((a, b) => a.startedAt - b.startedAt);
    const faultsForBlame: ReplicaFault[] = blamed.map((e) => ({
      kind: blameKind(e),
      at: e.startedAt,
      ...(e.fault.kind === 'stop' ? { replica: e.fault.replica } : {}),
      ...(e.fault.kind === 'compaction-while-down' ? { replica: '*' } : {}),
    }));
    const spots = blindSpots(replicas.logs(), schedule.mode, {
      watchers: watchers.length,
      parts: BUCKETS,
      from: setupDone,
      to: end,
      faults: faultsForBlame,
    });
    const handOvers: HandOver[] = blamed.map((e, index) => {
      const mine = spots.filter((s) => s.fault === index);
      return {
        fault: describe(e.fault),
        kind: blameKind(e),
        startedAt: e.startedAt,
        parts: new Set(mine.map((s) => s.part)).size,
        maxUnwatchedMs: Math.max(0, ...mine.map((s) => s.ms)),
      };
    });
    const of = (kinds: string[]): number[] =>
      spots.filter((s) => kinds.includes(faultsForBlame[s.fault]?.kind ?? 'none')).map((s) => s.ms);
    const result: ChaosReport = {
      seed: schedule.seed,
      mode: schedule.mode,
      durationS: options.durationS,
      replay: replayCommand(schedule.mode, schedule.seed, options.durationS),
      verdict: line,
      check: report,
      gapNotices: gapNotices(receiver),
      findingReceipts: findingReceipts(report, receipts(receiver)),
      operations: countBy(schedule.ops.map((o) => o.item.kind)),
      timeline: faults.timeline.map((e) => ({ ...e, description: describe(e.fault) })),
      handOvers,
      blindSpots: {
        planned: summarize(of(['SIGTERM', 'join'])),
        crash: summarize(of(['SIGKILL'])),
        other: summarize(
          spots
            .filter((s) => !['SIGTERM', 'join', 'SIGKILL'].includes(faultsForBlame[s.fault]?.kind ?? 'none'))
            .map((s) => s.ms),
        ),
      },
      seconds: {
        setup: (setupDone - began) / 1000,
        operations: (operationsDone - setupDone) / 1000,
        settle: (end - operationsDone) / 1000,
        total: (Date.now() - began) / 1000,
      },
      settled,
      driverLateMs: driver.lateMs,
    };
    if (options.reportFile !== undefined) {
      result.replicaLogs = `${options.reportFile.replace(/\.json$/, '')}.logs`;
      await replicas.writeLogs(result.replicaLogs);
      await writeFile(options.reportFile, JSON.stringify(result, null, 2));
    }
    return result;
  } finally {
    for (const step of cleanup.reverse())
      await step().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  }
}

function blameKind(e: TimelineEntry): string {
  if (e.fault.kind === 'stop') return e.fault.signal;
  return e.fault.kind;
}

function countBy(items: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[item] = (out[item] ?? 0) + 1;
  return out;
}

function receipts(receiver: HttpReceiver): Receipt[] {
  return receiver.requests
    .filter((r) => typeof r.json === 'object' && r.json !== null)
    .map((r) => ({
      id: String(r.headers['x-raven-event-id']),
      body: r.json as Delivered,
      at: r.at,
      from: String(r.headers['x-replica']),
    }));
}

function findingReceipts(report: Report, all: readonly Receipt[]): ChaosReport['findingReceipts'] {
  const ids = new Set(
    [
      ...report.missing,
      ...report.twice,
      ...report.phantoms,
      ...report.wrongType,
      ...report.outOfOrder,
    ].flatMap((f) => f.ids ?? []),
  );
  const out: ChaosReport['findingReceipts'] = {};
  for (const r of all)
    if (ids.has(r.id))
      (out[r.id] ??= []).push({
        ...(r.from === undefined ? {} : { from: r.from }),
        at: r.at,
        ...(r.body.origin === undefined ? {} : { origin: r.body.origin }),
        ...(r.body.tombstone === undefined ? {} : { tombstone: r.body.tombstone }),
      });
  return out;
}

function gapNotices(receiver: HttpReceiver): Delivered[] {
  const seen = new Set<string>();
  return receipts(receiver)
    .filter((r) => r.body.type === 'gap' && !seen.has(r.id) && seen.add(r.id))
    .map((r) => r.body);
}

async function createNamespaces(plane: ControlPlane, schedule: Schedule): Promise<void> {
  for (const ns of [...schedule.namespaces, schedule.controlNamespace]) {
    const created = await plane.adminRequest('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    if (created.status !== 201)
      throw new Error(`creating namespace ${ns}: ${created.status} ${created.body}`);
  }
  // The controller-manager adds kube-root-ca.crt to each namespace: before the watchers start, so
  // that it is part of their first list and not a change of the run.
  for (const ns of schedule.namespaces)
    await waitUntil(
      `kube-root-ca.crt in ${ns}`,
      async () =>
        (await plane.adminRequest('GET', `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`)).status ===
        200,
      START_GIVE_UP_MS,
    );
}

function configYaml(schedule: Schedule, postgresUrl: string, url: string): string {
  const lease = `
  leaseDurationSeconds: ${LEASE.leaseDurationSeconds}
  renewDeadlineSeconds: ${LEASE.renewDeadlineSeconds}
  retryPeriodSeconds: ${LEASE.retryPeriodSeconds}`;
  const coordination =
    schedule.mode === 'failover'
      ? `leaderElection:
  enabled: true
  namespace: ${schedule.controlNamespace}
  name: raven
  identity: \${RAVEN_IDENTITY}${lease}`
      : schedule.mode === 'sharded'
        ? `sharding:
  enabled: true
  namespace: ${schedule.controlNamespace}
  group: shards
  identity: \${RAVEN_IDENTITY}
  buckets: ${BUCKETS}${lease}`
        : '';
  const ns = schedule.namespaces.join(', ');
  return `server: { port: 0 }
checkpoint: { type: postgres, url: '${postgresUrl}', schema: chaos_${schedule.mode}_${schedule.seed} }
${coordination}
watchers:
  - { name: all, resource: configmaps, namespaces: [${ns}] }
  - { name: selected, resource: configmaps, namespaces: [${ns}], labelSelector: '${SELECTOR}' }
sinks:
  - name: hook
    type: webhook
    url: '${url}'
    headers: { x-replica: '\${RAVEN_IDENTITY}' }
    gapNotices: true
    timeoutSeconds: 5
    delivery: { concurrency: 16, initialBackoffMs: 100, maxBackoffMs: 1000, maxAttempts: 100000 }
`;
}

/** Whether the running replicas watch every part, each with all its watchers synced. */
function watchingAll(replicas: ReplicaPool, mode: Mode, watchers: number): boolean {
  const running = replicas.running();
  const logsOf = (id: string): readonly { msg: string; [k: string]: unknown }[] =>
    replicas.process(id)?.logs ?? [];
  const syncedAfter = (lines: readonly { msg: string }[], index: number): boolean =>
    index >= 0 && lines.slice(index).filter((l) => l.msg === 'synced').length >= watchers;
  if (mode === 'single') return running.every((id) => syncedAfter(logsOf(id), 0));
  if (mode === 'failover')
    return running.some((id) => {
      const lines = logsOf(id);
      const at = lines.findLastIndex((l) => l.msg === 'started leading');
      return syncedAfter(lines, at) && !lines.slice(at).some((l) => l.msg === 'stopped leading');
    });
  const want = running.join(',');
  return running.every((id) => {
    const lines = logsOf(id);
    const at = lines.findLastIndex((l) => l.msg === 'watching this replica’s parts of the hash space');
    const line = lines[at];
    return line !== undefined && (line.members as string[]).join(',') === want && syncedAfter(lines, at);
  });
}

/** Events held by every running replica's webhook sink (0 when none could be asked). */
async function backlog(replicas: ReplicaPool): Promise<number> {
  let total = 0;
  for (const url of replicas.metricsUrls()) {
    const text = await fetch(url)
      .then((r) => r.text())
      .catch(() => '');
    const m = /^raven_delivery_backlog\{[^}]*sink="hook"[^}]*\} (\d+)/m.exec(text);
    total += Number(m?.[1] ?? 0);
  }
  return total;
}

async function waitUntil(
  what: string,
  pred: () => boolean | Promise<boolean>,
  timeoutMs: number,
  show: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${show()}`);
    await delay(200);
  }
}
