/**
 * Suite `cbor`: is CBOR (KEP-4222, `Accept: application/cbor`) a faster way to follow a collection
 * from JavaScript than JSON? The same pods, captured from the benchmark control plane (which serves
 * CBOR: the CBORServingAndStorage gate is on), as a watch stream in each encoding from a local
 * server and as a list body in each encoding, decoded by each contestant in a fresh process,
 * rounds interleaved. Reports CPU and RSS against `raw-json` (node:http + JSON.parse), bytes on the
 * wire, and the list decode ratio.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchKubeconfig } from '../list-watch/cluster.js';
import { kubeconfigFor } from '../decode/suite.js';
import { runChild } from '../lib/child.js';
import type { Measurement } from '../lib/measure.js';
import { fixed, machineLine, table } from '../lib/report.js';
import {
  cpuRssTable,
  failureLines,
  goalsTable,
  loadSummary,
  roundRatios,
  runRounds,
  type Goal,
} from '../lib/rounds.js';
import { capturePods } from './capture.js';
import { contestants, type CborTarget } from './contestants.js';
import { PodStreams, startStreamServer } from './streams.js';

export interface CborSuiteOptions {
  node: string;
  nodeVersion: string;
  /** Pods captured from the control plane (created once, kept for later runs). */
  pods: number;
  events: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

type RunResult = Measurement & { count: number };

const LIST_REPEATS = 10;

export async function runCborSuite(options: CborSuiteOptions): Promise<{ markdown: string }> {
  const chosen = contestants.filter((c) => options.only === undefined || options.only.includes(c.name));
  const kubeconfig = await benchKubeconfig(options.log);
  options.log(`cbor: capturing ${options.pods} pods from the benchmark control plane in JSON and CBOR`);
  const capture = await capturePods(kubeconfig, 'raven-bench-cbor', options.pods);
  const listed = JSON.parse(capture.jsonList.toString('utf8')) as { items: Record<string, unknown>[] };
  const streams = new PodStreams(listed.items);
  const server = await startStreamServer(streams, options.events);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-cbor-'));
  await writeFile(join(dir, 'kubeconfig'), kubeconfigFor(server.url));
  await writeFile(join(dir, 'list.json'), capture.jsonList);
  await writeFile(join(dir, 'list.cbor'), capture.cborList);
  const target: CborTarget = {
    url: server.url,
    kubeconfig: join(dir, 'kubeconfig'),
    events: options.events,
    dir,
    listRepeats: LIST_REPEATS,
    listItems: listed.items.length,
  };
  options.log(
    `cbor: ${options.events} events over ${listed.items.length} pods at ${server.url}, Node ${options.nodeVersion}`,
  );
  let rounds;
  try {
    rounds = await runRounds<RunResult, (typeof chosen)[number]>(
      chosen,
      options.runs,
      (contestant) =>
        runChild<RunResult>({
          node: options.node,
          script: 'bench/cbor/run-one.ts',
          args: [contestant.name, JSON.stringify(target)],
          timeoutMs: 600_000,
        }),
      (contestant, round, outcome) => {
        options.log(
          `cbor: round ${round + 1}/${options.runs} ${contestant.name}: ${
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
  const cpu = (r: RunResult): number => r.cpuMs;
  const goals: Goal[] = [
    {
      label: "`watch()` with `encoding: 'cbor'` CPU ÷ JSON (defaults)",
      ratios: roundRatios(rounds, 'raven-watch-cbor', 'raven-watch-json', cpu),
      target: '< 1 to adopt CBOR as the default',
      met: (m) => m < 1,
    },
    {
      label: "Raven's CBOR decoder ÷ JSON.parse, watch stream",
      ratios: roundRatios(rounds, 'raw-cbor', 'raw-json', cpu),
      target: '< 1 to adopt',
      met: (m) => m < 1,
    },
    {
      label: "Raven's CBOR list decoding ÷ JSON.parse of the list",
      ratios: roundRatios(rounds, 'list-cbor', 'list-json', cpu),
      target: '< 1 to adopt',
      met: (m) => m < 1,
    },
  ];
  const bytes = table(
    ['what', 'JSON bytes', 'CBOR bytes', 'CBOR ÷ JSON'],
    [
      [
        'watch event (mean)',
        fixed(streams.bytesPerEvent('json')),
        fixed(streams.bytesPerEvent('cbor')),
        fixed(streams.bytesPerEvent('cbor') / streams.bytesPerEvent('json'), 2),
      ],
      [
        `list of ${listed.items.length} pods`,
        String(capture.jsonList.length),
        String(capture.cborList.length),
        fixed(capture.cborList.length / capture.jsonList.length, 2),
      ],
    ],
  );
  const markdown = [
    `## Node ${options.nodeVersion}`,
    '',
    `Measured ${machineLine(options.nodeVersion)}; ${loadSummary(rounds.load)}.`,
    '',
    `${listed.items.length} pods created in the benchmark control plane and read back in both encodings; a watch`,
    `stream of ${options.events} MODIFIED events cycling over them (each a new resourceVersion) from a local server,`,
    `and the list body decoded ${LIST_REPEATS} times. Each contestant in a fresh process, ${options.runs} interleaved rounds;`,
    'ratios per round, median and range.',
    '',
    'Bytes on the wire:',
    '',
    bytes,
    '',
    cpuRssTable(
      rounds,
      chosen.map((c) => c.name),
      'raw-json',
    ),
    '',
    goalsTable(goals),
    '',
    'Contestants:',
    '',
    ...chosen.map((c) => `- \`${c.name}\`: ${c.description}`),
    ...failureLines(rounds),
    '',
  ].join('\n');
  return { markdown };
}
