/**
 * What the sharding benchmark measured, as Markdown: one table per way of filtering, a row per
 * replica count. Per-replica figures are medians over the replicas of a run (the busiest one is
 * shown beside), then medians over the rounds; ratios are taken within a round, against the
 * single replica that filtered the same way in that round.
 */
import { fixed, ratio, table } from '../lib/report.js';
import { failureLines, loadSummary, median, ratioSpread, type Rounds } from '../lib/rounds.js';

export type Filtering = 'server' | 'client';

/** One replica over the churn window. */
export interface ReplicaMeasure {
  identity: string;
  cpuMs: number;
  readBytes: number;
  /** The event loop's wake-ups over the window (voluntary context switches of the main thread). */
  wakeUps: number;
  /** At the end of the window. */
  heapBytes: number;
  /** Over the replica's whole life. */
  peakRssBytes: number;
  /** Changes its sink wrote. */
  changes: number;
  /** CPU per second of wall time while settled and without changes, before the churns. */
  idleCpuMsPerS: number;
}

export interface RunResult {
  ms: number;
  replicas: ReplicaMeasure[];
}

export interface ReportContext {
  machine: string;
  raven: string;
  objects: number;
  meanObjectBytes: number;
  changes: number;
  /** Patches in flight during the churns. */
  inFlight: number;
  runs: number;
  replicaCounts: readonly number[];
  modes: readonly Filtering[];
}

/** The reference: one replica with sharding off, on the same checkpoint and churn. */
export const UNSHARDED = 'unsharded';

export const configName = (filtering: Filtering, replicas: number): string => `${filtering}-${replicas}`;

/** How long the idle CPU is measured, before the churns. */
export const IDLE_S = 10;

const MiB = 2 ** 20;
const of = (r: RunResult, pick: (m: ReplicaMeasure) => number): number[] => r.replicas.map(pick);
/** A replica's event-loop wake-ups over the window, per change its sink wrote. */
export const wakeUpsPerChange = (m: Pick<ReplicaMeasure, 'wakeUps' | 'changes'>): number =>
  m.wakeUps / Math.max(1, m.changes);
const cpuS = (r: RunResult): number => median(of(r, (m) => m.cpuMs)) / 1000;
const cpuMaxS = (r: RunResult): number => Math.max(...of(r, (m) => m.cpuMs)) / 1000;
const readMiB = (r: RunResult): number => median(of(r, (m) => m.readBytes)) / MiB;

/** `f` of the runs of `names` in each round where all of them succeeded. */
function perRound<R>(rounds: Rounds<R>, names: readonly string[], f: (runs: R[]) => number): number[] {
  const columns = names.map((name) => rounds.runs.get(name) ?? []);
  const out: number[] = [];
  const count = Math.min(...columns.map((c) => c.length));
  for (let i = 0; i < count; i++) {
    const runs = columns.map((c) => c[i]);
    if (runs.every((r): r is R => r !== undefined)) out.push(f(runs));
  }
  return out;
}

const ok = (rounds: Rounds<RunResult>, name: string): RunResult[] =>
  (rounds.runs.get(name) ?? []).filter((r): r is RunResult => r !== undefined);

const med = (rounds: Rounds<RunResult>, name: string, pick: (r: RunResult) => number): number =>
  median(ok(rounds, name).map(pick));

/** `0.12 s (0.08–0.15 s)`: the median and range, the unit after each. */
function spreadOf(xs: readonly number[], digits: number, unit = ''): string {
  if (xs.length === 0) return 'n/a';
  const f = (n: number): string => n.toFixed(digits);
  return `${f(median(xs))}${unit} (${f(Math.min(...xs))}–${f(Math.max(...xs))}${unit})`;
}

/** The cells every table shares, after its own. */
function common(rounds: Rounds<RunResult>, name: string, single: string): string[] {
  const runs = ok(rounds, name);
  const failed = rounds.failures.get(name)?.length ?? 0;
  return [
    ratioSpread(
      perRound(rounds, [name, single], ([a, b]) => readMiB(a as RunResult) / readMiB(b as RunResult)),
    ),
    fixed(med(rounds, name, readMiB), 1),
    fixed(
      med(rounds, name, (r) => median(of(r, (m) => m.heapBytes)) / MiB),
      1,
    ),
    fixed(
      med(rounds, name, (r) => median(of(r, (m) => m.peakRssBytes)) / MiB),
      0,
    ),
    runs.length === 0
      ? 'n/a'
      : `${fixed(med(rounds, name, (r) => Math.min(...of(r, (m) => m.changes))))}–${fixed(
          med(rounds, name, (r) => Math.max(...of(r, (m) => m.changes))),
        )}`,
    fixed(
      med(rounds, name, (r) => median(of(r, wakeUpsPerChange))),
      2,
    ),
    fixed(
      med(rounds, name, (r) => r.ms / 1000),
      0,
    ),
    fixed(
      med(rounds, name, (r) => median(of(r, (m) => m.idleCpuMsPerS))),
      1,
    ),
    failed === 0 ? String(runs.length) : `${runs.length} (${failed} failed)`,
  ];
}

const COMMON_HEADER = [
  'read ÷ single',
  'read MiB per replica',
  'heap MiB',
  'peak RSS MiB',
  'changes per replica',
  'wake-ups per change',
  'churn s',
  'idle CPU ms/s',
  'runs',
];

const cpuCell = (rounds: Rounds<RunResult>, name: string): string =>
  ok(rounds, name).length === 0
    ? 'n/a'
    : `${fixed(med(rounds, name, cpuS), 2)} (max ${fixed(med(rounds, name, cpuMaxS), 2)})`;

const cpuRatios = (rounds: Rounds<RunResult>, name: string, single: string): number[] =>
  perRound(rounds, [name, single], ([a, b]) => cpuS(a as RunResult) / cpuS(b as RunResult));

const unshardedCell = (rounds: Rounds<RunResult>, name: string): string =>
  ratioSpread(cpuRatios(rounds, name, UNSHARDED));

const verdict = (measured: number, goal: number): string =>
  !Number.isFinite(measured) || !Number.isFinite(goal) ? 'n/a' : measured <= goal ? 'met' : 'not met';

/** A table's own columns between the CPU ratio and the goal, and its goal, at N replicas. */
interface Goal {
  header: string[];
  cells: (n: number) => string[];
  goal: (n: number) => number;
  label: string;
}

/** One row per replica count for one way of filtering, against that way's single replica. */
function shardTable(
  rounds: Rounds<RunResult>,
  counts: readonly number[],
  filtering: Filtering,
  g: Goal,
): string {
  const single = configName(filtering, 1);
  const rows = counts.map((n) => {
    const name = configName(filtering, n);
    const ratios = cpuRatios(rounds, name, single);
    const goal = g.goal(n);
    return [
      String(n),
      cpuCell(rounds, name),
      ratioSpread(ratios),
      ...g.cells(n),
      n === 1 ? '—' : Number.isFinite(goal) ? `≤ ${ratio(goal)}` : 'n/a',
      n === 1 ? '' : verdict(median(ratios), goal),
      unshardedCell(rounds, name),
      ...common(rounds, name, single),
    ];
  });
  return table(
    [
      'replicas',
      'CPU s per replica (max)',
      'CPU ÷ single',
      ...g.header,
      g.label,
      '',
      'CPU ÷ unsharded',
      ...COMMON_HEADER,
    ],
    rows,
  );
}

const serverGoal: Goal = { header: [], cells: () => [], goal: (n) => 1.2 / n, label: 'goal: 1.2/N' };

/**
 * The pre-parse filter's cost at N replicas: a client-side replica's CPU minus a server-side
 * replica's at the same N, in seconds and as a share of the server-side single replica's CPU.
 */
function filterCost(rounds: Rounds<RunResult>, n: number): { seconds: number[]; share: number[] } {
  const names = [configName('client', n), configName('server', n), configName('server', 1)];
  const seconds = ([c, s]: RunResult[]): number => cpuS(c as RunResult) - cpuS(s as RunResult);
  return {
    seconds: perRound(rounds, names, seconds),
    share: perRound(rounds, names, (runs) => seconds(runs) / cpuS(runs[2] as RunResult)),
  };
}

const clientGoal = (rounds: Rounds<RunResult>): Goal => ({
  header: ['filter: CPU s', 'filter ÷ server-side single'],
  cells: (n) => {
    const filter = filterCost(rounds, n);
    return [
      spreadOf(filter.seconds, 2),
      spreadOf(
        filter.share.map((x) => x * 100),
        0,
        '%',
      ),
    ];
  },
  goal: (n) => 1 / n + median(filterCost(rounds, n).share),
  label: 'goal: 1/N + filter',
});

export function shardingMarkdown(rounds: Rounds<RunResult>, c: ReportContext): string {
  const counts = c.replicaCounts.join(', ');
  const sections: string[] = [
    '# Sharded replicas: the cost of each replica over the same churn',
    '',
    `Measured ${c.machine}. ${loadSummary(rounds.load)}. Raven: ${c.raven}.`,
    '',
    `${c.objects} ConfigMaps (${fixed(c.meanObjectBytes / 1024, 1)} KiB each as JSON, on average, managedFields included) in one namespace; then ${c.changes} merge patches of them (${c.inFlight} in flight, round-robin over the objects, each a real change), made once every replica has logged its parts of the hash space with all N members, has synced, and has gone quiet, and made twice: a warm-up churn, not measured, then the measured one once the replicas are quiet again (a daemon runs for days: the window measures its steady state, not V8 optimising the code the first changes run). N = ${counts} \`raven run\` replicas from dist/, with \`sharding.enabled\` (128 buckets by uid, lease timings 6/4/1 s), a PostgreSQL checkpoint (a fresh schema each run; \`flushIntervalMs\` at its default, 100 ms; PostgreSQL durable, with \`fsync\` and \`synchronous_commit\` on, its defaults) and one stdout sink (JSON lines, counted by the suite). **Server-side**: a control plane with the \`ShardedListAndWatch\` gate on; each replica's watch carries its shard selector and the apiserver sends it the objects of its parts only. **Client-side**: a control plane with the gate off; every replica receives every change and drops the others' by the FNV-1a hash of the uid before parsing.`,
    '',
    `Measured per replica over the churn window only, from just before the first patch until the sinks together had written every change (each run checks they wrote exactly ${c.changes} lines): CPU (user + system, \`/proc/<pid>/stat\`) and bytes read (\`rchar\` of \`/proc/<pid>/io\`: every read the process made, the apiserver's TLS stream, PostgreSQL's answers and anything else). Heap: \`raven_nodejs_heap_size_used_bytes\` from the replica's /metrics at the end of the window; peak RSS: VmHWM over the replica's whole life, its initial list included. A cell is the median over a run's replicas (the busiest one's CPU in brackets), then the median over ${c.runs} interleaved rounds; ratios are taken within a round against the single replica that filtered the same way, median (range over the rounds). "wake-ups per change": the voluntary context switches of the replica's main thread (\`/proc/<pid>/status\`: each time its event loop waited and was woken) over the window, per change its sink wrote. "churn s" is the window's length. "idle CPU ms/s": each replica's CPU over ${IDLE_S} s without changes, once settled and before the churns (Lease renewals and the group's list every retry period, timers), per second.`,
  ];
  const reference = ok(rounds, UNSHARDED);
  sections.push(
    '',
    reference.length === 0
      ? 'The unsharded reference (one replica with `sharding` off) was not run (`--replicas`) or did not complete a run.'
      : `**The unsharded reference**: one replica with \`sharding\` off, the same checkpoint, sink and churn: CPU ${spreadOf(
          reference.map(cpuS),
          2,
          ' s',
        )}, read ${fixed(med(rounds, UNSHARDED, readMiB), 1)} MiB, heap ${fixed(
          med(rounds, UNSHARDED, (r) => median(of(r, (m) => m.heapBytes)) / MiB),
          1,
        )} MiB, peak RSS ${fixed(
          med(rounds, UNSHARDED, (r) => median(of(r, (m) => m.peakRssBytes)) / MiB),
          0,
        )} MiB, churn ${fixed(
          med(rounds, UNSHARDED, (r) => r.ms / 1000),
          0,
        )} s (${reference.length} runs). "CPU ÷ unsharded" compares each sharded replica with it, per round.`,
  );
  if (c.modes.includes('server'))
    sections.push(
      '',
      '## Server-side filtering (the apiserver applies the shard selector)',
      '',
      'Goal: per-replica CPU ≤ 1/N × 1.2 of the single replica’s.',
      '',
      shardTable(rounds, c.replicaCounts, 'server', serverGoal),
    );
  if (c.modes.includes('client'))
    sections.push(
      '',
      '## Client-side filtering (the gate off; each replica filters by hash before parsing)',
      '',
      'Goal: per-replica CPU ≤ 1/N of the single replica’s plus the pre-parse filter’s cost. The filter’s cost at N replicas is taken as the client-side replica’s CPU minus the server-side replica’s at the same N (the same work, less the events it had to look at and drop), in seconds and as a share of the server-side single replica’s CPU; at N = 1 every event passes the filter, so there it is the cost of hashing every uid. Taken this way, the goal compares the client-side scaling with 1/N plus that share.',
      '',
      shardTable(rounds, c.replicaCounts, 'client', clientGoal(rounds)),
    );
  sections.push(...failureLines(rounds));
  return `${sections.join('\n')}\n`;
}
