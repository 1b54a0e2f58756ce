/**
 * Suite 1, decoding throughput: every contestant reads the same watch stream of realistic pod
 * events from a local server, in a fresh process per run, rounds interleaved (contestant order
 * rotates each round), median of the runs reported.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChild, type ChildOutcome } from '../lib/child.js';
import { median, type Measurement } from '../lib/measure.js';
import { fixed, machineLine, ratio, table } from '../lib/report.js';
import { contestants, type Contestant } from './contestants.js';
import { buildStream, startWatchServer } from './watch-server.js';

export interface DecodeSuiteOptions {
  node: string;
  nodeVersion: string;
  events: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

type RunResult = Measurement & { events: number };

export interface DecodeRow {
  contestant: Contestant;
  runs: RunResult[];
  failures: string[];
  /** Medians. */
  ms: number;
  cpuMs: number;
  peakRssMb: number;
  peakHeapMb: number;
  eventsPerSec: number;
}

export interface DecodeSuiteResult {
  rows: DecodeRow[];
  markdown: string;
}

function kubeconfigFor(url: string): string {
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

export async function runDecodeSuite(options: DecodeSuiteOptions): Promise<DecodeSuiteResult> {
  const chosen = contestants.filter((c) => options.only === undefined || options.only.includes(c.name));
  options.log(`decode: building ${options.events} pod events`);
  const body = buildStream(options.events);
  const server = await startWatchServer(body);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(server.url));
  const perLine = body.length / options.events;
  options.log(
    `decode: ${(body.length / 2 ** 20).toFixed(1)} MiB, ${fixed(perLine)} bytes per event, served at ${server.url}`,
  );
  const results = new Map<string, { runs: RunResult[]; failures: string[] }>(
    chosen.map((c) => [c.name, { runs: [], failures: [] }]),
  );
  try {
    for (let round = 0; round < options.runs; round++) {
      // Rotate the order so no contestant always runs first (cold caches) or last.
      const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]) as Contestant[];
      for (const contestant of order) {
        const outcome: ChildOutcome<RunResult> = await runChild<RunResult>({
          node: options.node,
          script: 'bench/decode/run-one.ts',
          args: [contestant.name, server.url, kubeconfig, String(options.events)],
          timeoutMs: 120_000,
        });
        const slot = results.get(contestant.name);
        if (outcome.ok) slot?.runs.push(outcome.value);
        else slot?.failures.push(outcome.error);
        options.log(
          `decode: round ${round + 1}/${options.runs} ${contestant.name}: ${
            outcome.ok ? `${fixed(outcome.value.ms)} ms, cpu ${fixed(outcome.value.cpuMs)} ms` : outcome.error
          }`,
        );
      }
    }
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const rows = chosen.map((contestant): DecodeRow => {
    const { runs, failures } = results.get(contestant.name) ?? { runs: [], failures: [] };
    const ms = median(runs.map((r) => r.ms));
    return {
      contestant,
      runs,
      failures,
      ms,
      cpuMs: median(runs.map((r) => r.cpuMs)),
      peakRssMb: median(runs.map((r) => r.peakRssMb)),
      peakHeapMb: median(runs.map((r) => r.peakHeapMb)),
      eventsPerSec: (options.events / ms) * 1000,
    };
  });
  return { rows, markdown: decodeMarkdown(rows, options, body.length) };
}

function decodeMarkdown(rows: DecodeRow[], options: DecodeSuiteOptions, bytes: number): string {
  const raw = rows.find((r) => r.contestant.name === 'raw');
  const header = [
    'contestant',
    'events/s',
    'total ms',
    'CPU ms',
    'peak RSS MiB',
    'peak heap MiB',
    'time vs raw',
    'CPU vs raw',
    'runs',
  ];
  const body = rows.map((r) => [
    `\`${r.contestant.name}\``,
    fixed(r.eventsPerSec),
    fixed(r.ms),
    fixed(r.cpuMs),
    fixed(r.peakRssMb),
    fixed(r.peakHeapMb),
    raw === undefined ? 'n/a' : ratio(r.ms / raw.ms),
    raw === undefined ? 'n/a' : ratio(r.cpuMs / raw.cpuMs),
    r.failures.length === 0 ? String(r.runs.length) : `${r.runs.length} (${r.failures.length} failed)`,
  ]);
  const ravens = rows.filter((r) => r.contestant.name.startsWith('raven-'));
  const peers = rows.filter((r) => !r.contestant.name.startsWith('raven-') && r.contestant.name !== 'raw');
  const versus = table(
    ['Raven', ...peers.map((p) => `vs \`${p.contestant.name}\` (time / CPU)`)],
    ravens.map((r) => [
      `\`${r.contestant.name}\``,
      ...peers.map((p) => `${ratio(p.ms / r.ms)} / ${ratio(p.cpuMs / r.cpuMs)}`),
    ]),
  );
  const failures = rows.flatMap((r) => r.failures.map((f) => `- \`${r.contestant.name}\`: ${f}`));
  return [
    '# Decoding throughput',
    '',
    `Measured ${machineLine(options.nodeVersion)}.`,
    '',
    `One watch stream of ${options.events} ADDED events of distinct pods (${fixed(bytes / options.events)} bytes per`,
    `event, ${fixed(bytes / 2 ** 20, 1)} MiB) from a local node:http server; each contestant in a fresh process,`,
    `${options.runs} interleaved rounds, medians. events/s counts stream events (the filter contestant`,
    'delivers one in ten). CPU is the client process only (the server runs in the parent). Peak RSS',
    'includes the runtime and the loaded modules; peak heap is sampled every 10 ms.',
    '',
    table(header, body),
    '',
    "Raven's speed-up over each peer (peer / Raven, for wall time and for CPU time; above 1 means",
    'Raven is faster). CPU time is the steadier of the two on a shared machine.',
    '',
    versus,
    '',
    'Contestants:',
    '',
    ...rows.map((r) => `- \`${r.contestant.name}\`: ${r.contestant.description}`),
    ...(failures.length === 0 ? [] : ['', 'Failed runs:', '', ...failures]),
    '',
  ].join('\n');
}
