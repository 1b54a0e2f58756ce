/**
 * Suite 1, decoding and watching throughput: every contestant reads the same watch stream of
 * realistic pod events from a local server, in a fresh process per run, rounds interleaved; the
 * goals of issue 10 are reported from per-round ratios.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChild } from '../lib/child.js';
import type { Measurement } from '../lib/measure.js';
import { PodCollection, startPodServer } from '../lib/pod-server.js';
import { fixed, machineLine } from '../lib/report.js';
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

export interface DecodeSuiteOptions {
  node: string;
  nodeVersion: string;
  events: number;
  population: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

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
  return { markdown: decodeMarkdown(rounds, chosen, skipped, options, lineBytes) };
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
      target: '≤ 1.05',
      met: (m) => m <= 1.05,
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
      target: '≤ 0.85',
      met: (m) => m <= 0.85,
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
    'same round), median and range. Peak RSS (`maxRSS`) includes the runtime and the loaded modules.',
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
