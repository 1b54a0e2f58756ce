/**
 * Suite 1, decoding and watching throughput: every contestant reads the same watch stream of
 * realistic pod events from a local server, in a fresh process per run, rounds interleaved; the
 * goals of issue 10 are reported from per-round ratios.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChild } from '../lib/child.js';
import type { Measurement } from '../lib/measure.js';
import { PodCollection, startPodServer } from '../lib/pod-server.js';
import { fixed, machineLine, ratio, table } from '../lib/report.js';
import {
  cpuRssTable,
  failureLines,
  goalsTable,
  loadSummary,
  roundRatios,
  runRounds,
  type Goal,
  type Rounds,
} from '../lib/rounds.js';
import { contestants } from './contestants.js';
import type { LongStreamResult } from './long-stream.js';

export interface DecodeSuiteOptions {
  node: string;
  nodeVersion: string;
  events: number;
  population: number;
  runs: number;
  /** Events of the long stream that checks memory stays flat; 0 skips it. */
  longEvents: number;
  only?: string[];
  log: (line: string) => void;
}

/** The long stream's first reading, after this many events (issue 10: "after the first 100k"). */
const LONG_CHECKPOINT = 100_000;

type RunResult = Measurement & { events: number };

/** A kubeconfig for a plain-HTTP server without credentials. */
export function kubeconfigFor(url: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster: { server: "${url}", insecure-skip-tls-verify: true }
users:
- name: bench
  user: {}
contexts:
- name: bench
  context: { cluster: bench, user: bench, namespace: default }
current-context: bench
`;
}

/** The Node major a version string names (`v24.1.0` -> 24). */
export function nodeMajor(version: string): number {
  return Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
}

export async function runDecodeSuite(options: DecodeSuiteOptions): Promise<{ markdown: string }> {
  const modern = nodeMajor(options.nodeVersion) >= 22;
  const chosen = contestants.filter(
    (c) => (options.only === undefined || options.only.includes(c.name)) && (modern || c.node22 !== true),
  );
  const collection = new PodCollection({ listed: 0, events: options.events, population: options.population });
  const server = await startPodServer(collection);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(server.url));
  const lineBytes = collection.event(options.population).length;
  options.log(
    `decode: ${options.events} events over ${options.population} pods (${lineBytes} bytes per event) at ${server.url}, Node ${options.nodeVersion}`,
  );
  let rounds: Rounds<RunResult>;
  try {
    rounds = await runRounds<RunResult, (typeof chosen)[number]>(
      chosen,
      options.runs,
      (contestant) =>
        runChild<RunResult>({
          node: options.node,
          script: 'bench/decode/run-one.ts',
          args: [contestant.name, server.url, kubeconfig, String(options.events), String(options.population)],
          timeoutMs: 600_000,
        }),
      (contestant, round, outcome) => {
        options.log(
          `decode: round ${round + 1}/${options.runs} ${contestant.name}: ${
            outcome.ok
              ? `cpu ${fixed(outcome.value.cpuMs)} ms, rss ${fixed(outcome.value.peakRssMb)} MiB`
              : outcome.error
          }`,
        );
      },
    );
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const skipped = contestants.filter((c) => !chosen.includes(c) && options.only?.includes(c.name) !== false);
  const long = options.longEvents > LONG_CHECKPOINT ? await runLongStream(options) : undefined;
  return {
    markdown: [
      decodeMarkdown(rounds, chosen, skipped, options, lineBytes),
      ...(long === undefined ? [] : [long]),
    ].join('\n'),
  };
}

/**
 * Memory over a long stream: Raven's default `watch()` over `longEvents` events of the same
 * population, once, in a process of its own; the heap (after forced full collections) after the
 * first {@link LONG_CHECKPOINT} events and after the last one.
 */
async function runLongStream(options: DecodeSuiteOptions): Promise<string> {
  const collection = new PodCollection({
    listed: 0,
    events: options.longEvents,
    population: options.population,
  });
  const server = await startPodServer(collection);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(server.url));
  const load = loadavg()[0] ?? 0;
  options.log(`decode: long stream of ${options.longEvents} events, Node ${options.nodeVersion}`);
  let outcome;
  try {
    outcome = await runChild<LongStreamResult>({
      node: options.node,
      script: 'bench/decode/long-stream.ts',
      args: [server.url, kubeconfig, String(options.longEvents), String(LONG_CHECKPOINT)],
      nodeFlags: ['--expose-gc'],
      timeoutMs: 1_800_000,
    });
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const heading = [
    `### Memory over a long stream, Node ${options.nodeVersion}`,
    '',
    `Raven's default \`watch()\` over ${options.longEvents} events of the same ${options.population} pods, once, in a`,
    `process of its own (load average ${load.toFixed(1)} at its start). After the first ${LONG_CHECKPOINT} events and after`,
    'the last one the consumer forces full collections until the heap stops shrinking, then reads',
    '`process.memoryUsage()`. The watcher keeps the last state of every pod, off the heap (external).',
    '',
  ];
  if (!outcome.ok) return [...heading, `Failed: ${outcome.error}`, ''].join('\n');
  return [...heading, longStreamReport(outcome.value, options.longEvents)].join('\n');
}

/** The readings of a long stream, and the goal: the heap after the last within 1.1x the first. */
function longStreamReport({ readings, cpuMs, ms }: LongStreamResult, events: number): string {
  const first = readings[0];
  const last = readings[readings.length - 1];
  if (first === undefined || last === undefined) return 'Failed: no reading\n';
  const rows = readings.map((r) => [
    String(r.events),
    fixed(r.heapUsedMb),
    fixed(r.externalMb),
    fixed(r.heapUsedMb + r.externalMb),
    fixed(r.rssMb),
  ]);
  const heap = last.heapUsedMb / first.heapUsedMb;
  const total = (last.heapUsedMb + last.externalMb) / (first.heapUsedMb + first.externalMb);
  return [
    table(['after events', 'heap used MiB', 'external MiB', 'heap + external MiB', 'RSS MiB'], rows),
    '',
    `CPU ${fixed(cpuMs)} ms over ${fixed(ms)} ms (${fixed((cpuMs * 1000) / events)} µs per event).`,
    '',
    'Goal (issue 10):',
    '',
    table(
      ['goal', 'measured', 'target', ''],
      [
        [
          `heap after ${events} events ÷ heap after ${LONG_CHECKPOINT}`,
          ratio(heap),
          '≤ 1.1',
          heap <= 1.1 ? 'met' : 'not met',
        ],
        ['... heap + external (the kept states)', ratio(total), '≤ 1.1', total <= 1.1 ? 'met' : 'not met'],
      ],
    ),
    '',
  ].join('\n');
}

function decodeMarkdown(
  rounds: Rounds<RunResult>,
  chosen: readonly (typeof contestants)[number][],
  skipped: readonly (typeof contestants)[number][],
  options: DecodeSuiteOptions,
  lineBytes: number,
): string {
  const cpu = (r: RunResult): number => r.cpuMs;
  const rss = (r: RunResult): number => r.peakRssMb;
  const ratios = (a: string, b: string, pick = cpu): number[] => roundRatios(rounds, a, b, pick);
  const goals: Goal[] = [
    {
      label: 'default `watch()` CPU ÷ raw',
      ratios: ratios('raven-watch', 'raw'),
      target: '≤ 1.15',
      met: (m) => m <= 1.15,
    },
    {
      label: 'default `watch()` peak RSS ÷ raw',
      ratios: ratios('raven-watch', 'raw', rss),
      target: '≤ 1.3',
      met: (m) => m <= 1.3,
    },
    {
      label: 'default `watchResource()` CPU ÷ raw',
      ratios: ratios('raven-watch-resource', 'raw'),
      target: '≤ 1.05',
      met: (m) => m <= 1.05,
    },
    {
      label: 'client-node `Watch` CPU ÷ default `watch()`',
      ratios: ratios('client-node-watch', 'raven-watch'),
      target: '≥ 1.15',
      met: (m) => m >= 1.15,
    },
    {
      label: '`watch()` with `dropManagedFields` CPU ÷ raw',
      ratios: ratios('raven-watch-drop-mf', 'raw'),
      target: '≤ 1.0',
      met: (m) => m <= 1.0,
    },
    {
      label: '`watch()` with `dropManagedFields` CPU ÷ default `watch()`',
      ratios: ratios('raven-watch-drop-mf', 'raven-watch'),
      target: '< 1.0',
      met: (m) => m < 1.0,
    },
    {
      label: '`decodeWatchEvents` with `dropManagedFields` CPU ÷ raw',
      ratios: ratios('raven-decode-drop-mf', 'raw'),
      target: '≤ 0.85',
      met: (m) => m <= 0.85,
    },
  ];
  return [
    `## Node ${options.nodeVersion}`,
    '',
    `Measured ${machineLine(options.nodeVersion)}; ${loadSummary(rounds.load)}.`,
    '',
    `One watch stream of ${options.events} events from a local node:http server: ${options.population} realistic`,
    `pods added, then modified in turn, each event with a new resourceVersion (${lineBytes} bytes per event).`,
    `Each contestant in a fresh process, ${options.runs} interleaved rounds. CPU is the client process's own`,
    '(user + system, from `process.cpuUsage()`); ratios are per round (the contestant over the other in the',
    "same round), median and range. Peak RSS is the process's own `VmHWM` (runtime and loaded modules included).",
    '',
    cpuRssTable(
      rounds,
      chosen.map((c) => c.name),
      'raw',
    ),
    '',
    'Goals (issue 10):',
    '',
    goalsTable(goals),
    '',
    'Contestants:',
    '',
    ...chosen.map((c) => `- \`${c.name}\`: ${c.description}`),
    ...skipped.map((c) => `- \`${c.name}\`: not run (it needs Node 22.19 or later)`),
    ...failureLines(rounds),
    '',
  ].join('\n');
}
