/**
 * Suite 3, the heap a cache retains: 10k realistic pods (managedFields recorded by the apiserver
 * for three field managers) in one namespace of the local control plane. Each contestant, in a
 * fresh process, lists them into what it keeps and syncs; the settled heap (after forced GCs) is
 * read before it starts and once it is synced, and the difference reported, with time to synced.
 */
import { loadavg } from 'node:os';
import { runChild } from '../lib/child.js';
import { fixed, machineLine, ratio, table } from '../lib/report.js';
import { loadSummary, median, spread } from '../lib/rounds.js';
import { benchKubeconfig } from '../list-watch/cluster.js';
import { ensurePods, type PodStats } from './cluster.js';
import { contestants, type Contestant } from './contestants.js';

export interface CacheHeapSuiteOptions {
  node: string;
  nodeVersion: string;
  pods: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

interface RunResult {
  syncedMs: number;
  baseHeapMb: number;
  heapMb: number;
  cacheMb: number;
  rssMb: number;
  peakRssMb: number;
  held: number;
}

interface Row {
  contestant: Contestant;
  runs: RunResult[];
  failures: string[];
  med: (pick: (r: RunResult) => number) => number;
  /** `12.3 (11.9–12.8)`: the median and range over the runs. */
  spread: (pick: (r: RunResult) => number, digits?: number) => string;
}

export async function runCacheHeapSuite(options: CacheHeapSuiteOptions): Promise<{ markdown: string }> {
  const kubeconfig = await benchKubeconfig(options.log);
  const namespace = `raven-bench-pods-${options.pods}`;
  const stats = await ensurePods(kubeconfig, namespace, options.pods, options.log);
  const chosen = contestants.filter((c) => options.only === undefined || options.only.includes(c.name));
  const results = new Map(chosen.map((c) => [c.name, { runs: [] as RunResult[], failures: [] as string[] }]));
  const load: number[] = [];
  for (let round = 0; round < options.runs; round++) {
    const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]) as Contestant[];
    for (const contestant of order) {
      load.push(loadavg()[0] ?? 0);
      const outcome = await runChild<RunResult>({
        node: options.node,
        script: 'bench/cache-heap/run-one.ts',
        args: [contestant.name, kubeconfig, namespace, String(stats.pods)],
        env: { NODE_ENV: 'production' },
        nodeFlags: ['--expose-gc'],
        timeoutMs: 120_000,
      });
      const slot = results.get(contestant.name);
      if (outcome.ok) slot?.runs.push(outcome.value);
      else slot?.failures.push(outcome.error);
      options.log(
        `cache-heap: round ${round + 1}/${options.runs} ${contestant.name}: ${
          outcome.ok
            ? `cache ${fixed(outcome.value.cacheMb, 1)} MiB, synced in ${fixed(outcome.value.syncedMs)} ms`
            : outcome.error
        }`,
      );
    }
  }
  const rows = chosen.map((contestant): Row => {
    const { runs, failures } = results.get(contestant.name) ?? { runs: [], failures: [] };
    return {
      contestant,
      runs,
      failures,
      med: (pick) => median(runs.map(pick)),
      spread: (pick, digits = 0) => spread(runs.map(pick), digits),
    };
  });
  return { markdown: cacheHeapMarkdown(rows, stats, load, options) };
}

const KiB = 1024;

function cacheHeapMarkdown(
  rows: Row[],
  stats: PodStats,
  load: number[],
  options: CacheHeapSuiteOptions,
): string {
  const header = [
    'contestant',
    'cache heap MiB: median (range)',
    'KiB per pod',
    'heap after sync MiB',
    'RSS after sync MiB',
    'peak RSS MiB',
    'time to synced ms',
    'runs',
  ];
  const body = rows.map((r) => [
    `\`${r.contestant.name}\``,
    r.spread((x) => x.cacheMb, 1),
    fixed((r.med((x) => x.cacheMb) * KiB) / stats.pods, 2),
    r.spread((x) => x.heapMb, 1),
    r.spread((x) => x.rssMb),
    r.spread((x) => x.peakRssMb),
    r.spread((x) => x.syncedMs),
    r.failures.length === 0 ? String(r.runs.length) : `${r.runs.length} (${r.failures.length} failed)`,
  ]);
  const failures = rows.flatMap((r) => r.failures.map((f) => `- \`${r.contestant.name}\`: ${f}`));
  return [
    `# The heap of a cache of ${stats.pods} pods`,
    '',
    `Measured ${machineLine(options.nodeVersion)}; ${loadSummary(load)}.`,
    '',
    `${stats.pods} pods in one namespace of the local control plane, ${fixed(stats.jsonBytes / KiB, 2)} KiB each as`,
    `JSON, of which metadata.managedFields is ${fixed(stats.managedFieldsBytes / KiB, 2)} KiB`,
    `(${fixed((100 * stats.managedFieldsBytes) / stats.jsonBytes)}%), recorded by the apiserver for ${stats.managers.join(', ')}.`,
    'They are Pending: no kubelet runs (see bench/cache-heap/pods.ts for how they were written).',
    '',
    `Each contestant in a fresh process (NODE_ENV=production, --expose-gc), ${options.runs} interleaved`,
    'rounds, medians (range). With the modules loaded and the client built, the heap is settled (full GCs until',
    'heapUsed stops shrinking) and read; the contestant lists the pods into what it keeps and syncs (its',
    'watch stays open); the heap is settled and read again. **Cache heap** is the difference: what the',
    'cache, and the open watch, retain. Heap is V8 heapUsed; RSS includes the runtime (peak RSS is the',
    "process's own `VmHWM`).",
    '',
    table(header, body),
    '',
    ...findings(rows),
    '',
    'Contestants:',
    '',
    ...rows.map((r) => `- \`${r.contestant.name}\`: ${r.contestant.description}`),
    ...(failures.length === 0 ? [] : ['', 'Failed runs:', '', ...failures]),
    '',
  ].join('\n');
}

/** The comparisons the suite exists for, where both sides ran. */
function findings(rows: Row[]): string[] {
  const cache = (name: string): number => {
    const row = rows.find((r) => r.contestant.name === name);
    return row === undefined || row.runs.length === 0 ? Number.NaN : row.med((x) => x.cacheMb);
  };
  const both = (a: string, b: string): boolean => Number.isFinite(cache(a) + cache(b));
  const mib = (name: string): string => `${fixed(cache(name), 1)} MiB`;
  const change = ([what, from, to]: [string, string, string]): string[] => {
    const pct = 100 * (cache(to) / cache(from) - 1);
    return [what, `\`${from}\` ${mib(from)} -> \`${to}\` ${mib(to)}`, `${pct > 0 ? '+' : ''}${fixed(pct)}%`];
  };
  const versus = ([a, b]: [string, string]): string[] => [
    `\`${a}\` / \`${b}\``,
    `${mib(a)} / ${mib(b)}`,
    ratio(cache(a) / cache(b)),
  ];
  const changes = (
    [
      ['`dropManagedFields`, in the watcher and as the transform', 'raven-informer', 'raven-informer-drop'],
      ['the transform alone', 'raven-informer', 'raven-informer-transform'],
      ['the transform, the watcher keeping no objects', 'raven-informer', 'raven-informer-transform-nokeep'],
      ['freezing (`freeze: always`)', 'raven-informer', 'raven-informer-frozen'],
      ['the watcher alone, `keepObjects: false`', 'raven-watcher-keep', 'raven-watcher-nokeep'],
    ] satisfies [string, string, string][]
  ).filter(([, a, b]) => both(a, b));
  // Like with like: every object kept whole, managedFields included, as client-node's informer
  // keeps them (it has no way to drop them).
  const likeWithLike = (
    [
      ['client-node-informer', 'raven-informer'],
      ['raven-informer', 'baseline-parsed-list'],
      ['client-node-informer', 'baseline-parsed-list'],
    ] satisfies [string, string][]
  ).filter(([a, b]) => both(a, b));
  // Raven's option of dropping managedFields, which client-node does not offer: not a like-for-like
  // comparison, reported apart.
  const withDrop = (
    [
      ['client-node-informer', 'raven-informer-drop'],
      ['client-node-informer', 'raven-shared-informers'],
    ] satisfies [string, string][]
  ).filter(([a, b]) => both(a, b));
  return [
    'What the options change in the cache heap (negative: less memory):',
    '',
    table(['option', 'cache heap', 'change'], changes.map(change)),
    '',
    'Ratios of cache heap, like with like: both keep every object whole, managedFields included (above 1x: the first needs more):',
    '',
    table(['pair', 'cache heap', 'ratio'], likeWithLike.map(versus)),
    '',
    "Raven's option, not like with like: Raven drops managedFields (`SharedInformers` does by default), client-node's informer keeps them (it cannot drop them):",
    '',
    table(['pair', 'cache heap', 'ratio'], withDrop.map(versus)),
  ];
}
