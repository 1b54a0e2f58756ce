/**
 * Suite: the same informer program on @kubernetes/client-node and on `kube-raven/client-node`
 * (program.ts): one changed import, the CPU and the peak memory side by side. Realistic pods are
 * listed from the local pod server, then a watch of modifications; each module in a fresh
 * process per run, rounds interleaved. Peak memory is the child's VmHWM; heap is sampled.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor, nodeMajor } from '../decode/suite.js';
import { runChild } from '../lib/child.js';
import type { Measurement } from '../lib/measure.js';
import { PodCollection, startPodServer } from '../lib/pod-server.js';
import { fixed, machineLine, ratio, table } from '../lib/report.js';
import {
  cpuRssTable,
  failureLines,
  loadSummary,
  median,
  roundRatios,
  runRounds,
  values,
} from '../lib/rounds.js';
import { modules } from './program.js';

export interface ClientNodeSuiteOptions {
  node: string;
  nodeVersion: string;
  listed: number;
  events: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

type RunResult = Measurement & { changes: number };

const RAVEN = 'kube-raven/client-node';

export async function runClientNodeSuite(options: ClientNodeSuiteOptions): Promise<{ markdown: string }> {
  const modern = nodeMajor(options.nodeVersion) >= 22;
  const wanted = Object.entries(modules)
    .map(([name, m]) => ({ name, ...m }))
    .filter((c) => options.only === undefined || options.only.includes(c.name));
  const chosen = wanted.filter((c) => modern || c.node22 !== true);
  const collection = new PodCollection({ listed: options.listed, events: options.events });
  const server = await startPodServer(collection);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(server.url));
  options.log(
    `client-node: ${options.listed} pods listed, then ${options.events} modifications, at ${server.url}, Node ${options.nodeVersion}`,
  );
  let rounds;
  try {
    rounds = await runRounds<RunResult, (typeof chosen)[number]>(
      chosen,
      options.runs,
      (c) =>
        runChild<RunResult>({
          node: options.node,
          script: 'bench/client-node/run-one.ts',
          args: [c.name, kubeconfig, String(options.listed), String(options.events)],
          nodeFlags: ['--max-old-space-size=8192'],
          timeoutMs: 900_000,
        }),
      (c, round, outcome) => {
        options.log(
          `client-node: round ${round + 1}/${options.runs} ${c.name}: ${
            outcome.ok
              ? `cpu ${fixed(outcome.value.cpuMs)} ms, VmHWM ${fixed(outcome.value.peakRssMb)} MiB, heap ${fixed(outcome.value.peakHeapMb)} MiB`
              : outcome.error
          }`,
        );
      },
    );
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const names = chosen.map((c) => c.name);
  const heap = names.map((name) => {
    const peaks = values(rounds, name, (r) => r.peakHeapMb);
    return [
      `\`${name}\``,
      fixed(median(peaks)),
      ratio(median(roundRatios(rounds, name, RAVEN, (r) => r.peakHeapMb))),
    ];
  });
  const skipped = wanted.filter((c) => !chosen.includes(c));
  const markdown = [
    `## Node ${options.nodeVersion}`,
    '',
    `Measured ${machineLine(options.nodeVersion)}; ${loadSummary(rounds.load)}.`,
    '',
    `The same program (bench/client-node/program.ts: \`makeInformer\` over every pod, a handler counting`,
    `adds and updates) on each module: ${options.listed} realistic pods listed from a local node:http`,
    `server, then a watch of ${options.events} modifications. Each module in a fresh process,`,
    `${options.runs} interleaved rounds; CPU is the child's own, peak RSS its VmHWM, ratios per round.`,
    '',
    cpuRssTable(rounds, names, RAVEN),
    '',
    table(['module', 'peak heap MiB (median, sampled)', `heap ÷ ${RAVEN}`], heap),
    '',
    'Modules:',
    '',
    ...chosen.map((c) => `- \`${c.name}\`: ${c.description}`),
    ...skipped.map((c) => `- \`${c.name}\`: not run (it needs Node 22 or later)`),
    ...failureLines(rounds),
    '',
  ].join('\n');
  return { markdown };
}
