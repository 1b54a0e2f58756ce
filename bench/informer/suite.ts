/**
 * Suite: informers, list and watch. Every contestant lists the same collection of realistic pods
 * from a local server into its cache and applies a watch stream of modifications to it, handing
 * each change to a handler that counts; fresh process per run, rounds interleaved. The goals of
 * issue 10 are reported from per-round ratios.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor, nodeMajor } from '../decode/suite.js';
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

export interface InformerSuiteOptions {
  node: string;
  nodeVersion: string;
  listed: number;
  events: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

type RunResult = Measurement & { changes: number };

export async function runInformerSuite(options: InformerSuiteOptions): Promise<{ markdown: string }> {
  const modern = nodeMajor(options.nodeVersion) >= 22;
  const wanted = contestants.filter((c) => options.only === undefined || options.only.includes(c.name));
  const chosen = wanted.filter((c) => modern || c.node22 !== true);
  const collection = new PodCollection({ listed: options.listed, events: options.events });
  const server = await startPodServer(collection);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(server.url));
  options.log(
    `informer: ${options.listed} pods listed, then ${options.events} modifications, at ${server.url}, Node ${options.nodeVersion}`,
  );
  let rounds: Rounds<RunResult>;
  try {
    rounds = await runRounds<RunResult, (typeof chosen)[number]>(
      chosen,
      options.runs,
      (contestant) =>
        runChild<RunResult>({
          node: options.node,
          script: 'bench/informer/run-one.ts',
          args: [contestant.name, server.url, kubeconfig, String(options.listed), String(options.events)],
          nodeFlags: ['--max-old-space-size=8192', '--expose-gc'],
          timeoutMs: 900_000,
        }),
      (contestant, round, outcome) => {
        options.log(
          `informer: round ${round + 1}/${options.runs} ${contestant.name}: ${
            outcome.ok
              ? `cpu ${fixed(outcome.value.cpuMs)} ms, rss ${fixed(outcome.value.peakRssMb)} MiB, longest stall ${fixed(outcome.value.maxDelayMs)} ms`
              : outcome.error
          }`,
        );
      },
    );
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const cpu = (r: RunResult): number => r.cpuMs;
  const goals: Goal[] = [
    {
      label: '`SharedInformers` (defaults) CPU ÷ raw list+watch into a Map',
      ratios: roundRatios(rounds, 'raven-informer', 'raw-map', cpu),
      target: '≤ 1.15',
      met: (m) => m <= 1.15,
    },
    {
      label: '... keeping managedFields, CPU ÷ raw',
      ratios: roundRatios(rounds, 'raven-informer-mf', 'raw-map', cpu),
      target: '≤ 1.15',
      met: (m) => m <= 1.15,
    },
    {
      label: 'client-node informer CPU ÷ `SharedInformers` (defaults)',
      ratios: roundRatios(rounds, 'client-node-informer', 'raven-informer', cpu),
      target: '≥ 1.5',
      met: (m) => m >= 1.5,
    },
    {
      label: 'client-node informer CPU ÷ `SharedInformers` keeping managedFields',
      ratios: roundRatios(rounds, 'client-node-informer', 'raven-informer-mf', cpu),
      target: '≥ 1.5',
      met: (m) => m >= 1.5,
    },
    {
      label: 'relist of the unchanged collection (paginated), CPU ÷ parsing the list',
      ratios: roundRatios(rounds, 'raven-relist', 'parse-list', cpu),
      target: '≤ 0.3',
      met: (m) => m <= 0.3,
    },
    {
      label: 'relist of the unchanged collection (streaming list), CPU ÷ parsing the list',
      ratios: roundRatios(rounds, 'raven-relist-stream', 'parse-list', cpu),
      target: '≤ 0.3',
      met: (m) => m <= 0.3,
    },
  ];
  const skipped = wanted.filter((c) => !chosen.includes(c));
  const markdown = [
    `## Node ${options.nodeVersion}`,
    '',
    `Measured ${machineLine(options.nodeVersion)}; ${loadSummary(rounds.load)}.`,
    '',
    `${options.listed} realistic pods listed from a local node:http server, then a watch of ${options.events}`,
    'modifications of them (each pod in turn, each event with a new resourceVersion); every contestant',
    'caches the pods and hands each change (add, then update) to a handler that counts. The relist',
    'contestants instead start from a watcher that knows every listed pod, are answered 410 Expired and',
    'relist the unchanged list (no change to deliver); `parse-list` is their floor. Each contestant',
    `in a fresh process, ${options.runs} interleaved rounds; CPU is the client process's own; ratios per round.`,
    '',
    cpuRssTable(
      rounds,
      chosen.map((c) => c.name),
      'raw-map',
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
  return { markdown };
}
