/**
 * Suite 2, list+watch at scale: 150k ConfigMaps in one namespace of a real local control plane.
 * Each contestant, in a fresh process, lists them all into its cache until synced, then receives
 * a few live updates. Reported: time to synced, peak heap and RSS, the longest event-loop stall.
 */
import { loadavg } from 'node:os';
import { runChild } from '../lib/child.js';
import type { Measurement } from '../lib/measure.js';
import { loadSummary, median, spread } from '../lib/rounds.js';
import { fixed, machineLine, ratio, table } from '../lib/report.js';
import { processCpuMs } from '../lib/proc.js';
import { benchKubeconfig, ensureConfigMaps, serverPids } from './cluster.js';
import { contestants, type Contestant } from './contestants.js';

export interface ListWatchSuiteOptions {
  node: string;
  nodeVersion: string;
  objects: number;
  runs: number;
  updates: number;
  only?: string[];
  log: (line: string) => void;
}

type RunResult = Measurement & {
  syncedMs: number;
  updatesMs: number;
  held: number;
  watchList: boolean | undefined;
  /** CPU kube-apiserver and etcd spent while the run lasted (undefined: not the suite's own cluster). */
  serverCpuMs?: number;
};

export interface ListWatchRow {
  contestant: Contestant;
  runs: RunResult[];
  failures: string[];
  syncedMs: number;
  cpuMs: number;
  /** Undefined when the cluster is not the suite's own (no pids to read). */
  serverCpuMs: number | undefined;
  peakHeapMb: number;
  peakRssMb: number;
  maxDelayMs: number;
  maxLagMs: number;
  /** Undefined under a Node without process.threadCpuUsage. */
  maxBlockCpuMs: number | undefined;
  updatesMs: number;
}

export interface ListWatchSuiteResult {
  rows: ListWatchRow[];
  markdown: string;
}

const NAMESPACE = 'raven-bench-150k';

export async function runListWatchSuite(options: ListWatchSuiteOptions): Promise<ListWatchSuiteResult> {
  const kubeconfig = await benchKubeconfig(options.log);
  const namespace = options.objects === 150_000 ? NAMESPACE : `raven-bench-${options.objects}`;
  const objects = await ensureConfigMaps(kubeconfig, namespace, options.objects, options.log);
  const chosen = contestants.filter((c) => options.only === undefined || options.only.includes(c.name));
  const results = new Map(chosen.map((c) => [c.name, { runs: [] as RunResult[], failures: [] as string[] }]));
  const load: number[] = [];
  const pids = await serverPids();
  const serverCpu = async (): Promise<number | undefined> => {
    if (pids === undefined) return undefined;
    let sum = 0;
    for (const pid of pids) sum += await processCpuMs(pid);
    return sum;
  };
  for (let round = 0; round < options.runs; round++) {
    const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]) as Contestant[];
    for (const contestant of order) {
      load.push(loadavg()[0] ?? 0);
      const serverBefore = await serverCpu();
      const outcome = await runChild<RunResult>({
        node: options.node,
        script: 'bench/list-watch/run-one.ts',
        args: [contestant.name, kubeconfig, namespace, String(objects), String(options.updates)],
        timeoutMs: 180_000,
      });
      const serverAfter = await serverCpu();
      const slot = results.get(contestant.name);
      if (outcome.ok) {
        const serverCpuMs =
          serverBefore === undefined || serverAfter === undefined ? undefined : serverAfter - serverBefore;
        slot?.runs.push(serverCpuMs === undefined ? outcome.value : { ...outcome.value, serverCpuMs });
      } else slot?.failures.push(outcome.error);
      options.log(
        `list-watch: round ${round + 1}/${options.runs} ${contestant.name}: ${
          outcome.ok
            ? `synced in ${fixed(outcome.value.syncedMs)} ms, heap ${fixed(outcome.value.peakHeapMb)} MiB, stall ${fixed(outcome.value.maxDelayMs)} ms`
            : outcome.error
        }`,
      );
    }
  }
  const rows = chosen.map((contestant): ListWatchRow => {
    const { runs, failures } = results.get(contestant.name) ?? { runs: [], failures: [] };
    const med = (pick: (r: RunResult) => number): number => median(runs.map(pick));
    return {
      contestant,
      runs,
      failures,
      syncedMs: med((r) => r.syncedMs),
      cpuMs: med((r) => r.cpuMs),
      serverCpuMs:
        runs.length > 0 && runs.every((r) => r.serverCpuMs !== undefined)
          ? med((r) => r.serverCpuMs ?? 0)
          : undefined,
      peakHeapMb: med((r) => r.peakHeapMb),
      peakRssMb: med((r) => r.peakRssMb),
      maxDelayMs: med((r) => r.maxDelayMs),
      maxLagMs: med((r) => r.maxLagMs),
      maxBlockCpuMs: runs.every((r) => r.maxBlockCpuMs !== undefined)
        ? med((r) => r.maxBlockCpuMs ?? 0)
        : undefined,
      updatesMs: med((r) => r.updatesMs),
    };
  });
  return { rows, markdown: listWatchMarkdown(rows, options, objects, load) };
}

function listWatchMarkdown(
  rows: ListWatchRow[],
  options: ListWatchSuiteOptions,
  objects: number,
  load: number[],
): string {
  const header = [
    'contestant',
    'time to synced ms: median (range)',
    'CPU ms: median (range)',
    'apiserver + etcd CPU ms: median (range)',
    'peak heap MiB',
    'peak RSS MiB: median (range)',
    'longest stall ms (loop delay)',
    'longest stall ms (10 ms timer lag)',
    'longest block ms (main-thread CPU)',
    `${options.updates} updates ms`,
    'runs',
  ];
  const body = rows.map((r) => [
    `\`${r.contestant.name}\`${r.runs.some((run) => run.watchList === false) && r.contestant.name === 'raven-watchlist' ? ' (fell back to paged list)' : ''}`,
    spread(r.runs.map((x) => x.syncedMs)),
    spread(r.runs.map((x) => x.cpuMs)),
    r.serverCpuMs === undefined ? '—' : spread(r.runs.map((x) => x.serverCpuMs ?? 0)),
    fixed(r.peakHeapMb),
    spread(r.runs.map((x) => x.peakRssMb)),
    fixed(r.maxDelayMs),
    fixed(r.maxLagMs),
    r.maxBlockCpuMs === undefined ? '—' : fixed(r.maxBlockCpuMs),
    fixed(r.updatesMs),
    r.failures.length === 0 ? String(r.runs.length) : `${r.runs.length} (${r.failures.length} failed)`,
  ]);
  const ravens = rows.filter((r) => r.contestant.name.startsWith('raven-') && r.runs.length > 0);
  const peers = rows.filter((r) => !r.contestant.name.startsWith('raven-') && r.runs.length > 0);
  const versus = ravens.flatMap((r) =>
    peers.map((p) => [
      `\`${r.contestant.name}\` vs \`${p.contestant.name}\``,
      ratio(p.syncedMs / r.syncedMs),
      ratio(p.cpuMs / r.cpuMs),
      r.serverCpuMs === undefined || p.serverCpuMs === undefined ? '—' : ratio(p.serverCpuMs / r.serverCpuMs),
      ratio(p.peakHeapMb / r.peakHeapMb),
      ratio(p.peakRssMb / r.peakRssMb),
      ratio(p.maxDelayMs / r.maxDelayMs),
      r.maxBlockCpuMs === undefined || p.maxBlockCpuMs === undefined
        ? '—'
        : ratio(p.maxBlockCpuMs / r.maxBlockCpuMs),
    ]),
  );
  const failures = rows.flatMap((r) => r.failures.map((f) => `- \`${r.contestant.name}\`: ${f}`));
  return [
    `# list+watch of ${objects} ConfigMaps`,
    '',
    `Measured ${machineLine(options.nodeVersion)}; ${loadSummary(load)}.`,
    '',
    `${objects} ConfigMaps in one namespace of the local control plane (etcd, kube-apiserver and`,
    'kube-controller-manager on the same 2 cores as the client). Each contestant in a fresh process,',
    `${options.runs} interleaved rounds, medians: list everything into the cache until synced, then`,
    `${options.updates} ConfigMaps are patched and the run ends when all the updates have arrived.`,
    'Heap is sampled every 10 ms (a peak inside one long synchronous step is seen only as it ends;',
    "peak RSS is the process's own VmHWM, exact).",
    'Stalls: the max of monitorEventLoopDelay and of the lateness of a 10 ms timer,',
    'wall time that includes any time the OS ran other processes (the control plane shares the cores).',
    'Longest block: the most CPU the main thread spent between two ticks of that timer, which is the',
    'time the program itself held the event loop (process.threadCpuUsage; Node 23.9 and later).',
    "apiserver + etcd CPU: what those two processes spent from the contestant's start to its end",
    '(/proc/PID/stat; its load and the updates included, and whatever else they did meanwhile).',
    '',
    table(header, body),
    '',
    'Ratios (peer / Raven; above 1 means Raven is faster, uses less, or stalls less):',
    '',
    table(
      [
        'pair',
        'time to synced',
        'CPU',
        'apiserver + etcd CPU',
        'peak heap',
        'peak RSS',
        'longest stall',
        'longest block',
      ],
      versus,
    ),
    '',
    'Contestants:',
    '',
    ...rows.map((r) => `- \`${r.contestant.name}\`: ${r.contestant.description}`),
    ...(failures.length === 0 ? [] : ['', 'Failed runs:', '', ...failures]),
    '',
  ].join('\n');
}
