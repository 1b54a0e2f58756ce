/**
 * The daemon end to end: `raven run` (the CLI, as users run it, a process of its own) watches a
 * local stand-in apiserver (`change-server.ts`) and sends every change, with its diff, to a
 * stdout sink (JSON lines, to /dev/null) and a file sink, with a SQLite checkpoint. The pods
 * (~7.6 KB each) are listed first (a streaming list); the changes are served once the daemon logs
 * `synced`, when the clock starts; it stops when the file sink holds every change. CPU is the daemon process's own
 * (user + system from /proc, in clock ticks), over the same span.
 *
 * The baseline, `raw JSON.parse`, reads the same stream in a process of its own and parses each
 * line (`raw-parse.ts`); the second, `raven watch`, is Raven's own watch as the daemon's watchers
 * run it (`keepObjects: false`, `raven-watch.ts`), timed from its list's end as the daemon is.
 * RAVEN_BENCH_BEFORE_DIST=/path/to/dist adds a second daemon built from
 * another commit, run in the same rounds, for a before-and-after comparison.
 *
 * RAVEN_BENCH_DAEMON_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" passes node flags to each
 * daemon (split on spaces), to profile it where it is measured; the baseline gets none.
 */
import { spawn } from 'node:child_process';
import { open, mkdtemp, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild, type ChildOutcome } from '../lib/child.js';
import { kubeconfigFor } from '../decode/suite.js';
import { processCpuMs } from '../lib/proc.js';
import { daemonNodeFlags, ravenDist } from '../lib/raven.js';
import { fixed, table } from '../lib/report.js';
import { loadSummary, median, ratioSpread, roundRatios, runRounds, spread, values } from '../lib/rounds.js';
import { startChangeServer } from './change-server.js';

export interface DaemonSuiteOptions {
  node: string;
  nodeVersion: string;
  machine: string;
  objects: number;
  changes: number;
  runs: number;
  log: (line: string) => void;
}

interface RunResult {
  cpuMs: number;
  ms: number;
  changes: number;
}

interface Contestant {
  name: string;
  /** A dist/ directory for a daemon; undefined for the baselines. */
  dist?: URL;
}

const RAW = 'raw JSON.parse';
const WATCH = 'raven watch, keepObjects: false';
/**
 * Count the lines of a growing file, reading only what was appended since the last call. The file
 * sink rotates at 100 MiB (renaming the file and starting a new one), so the file is held open:
 * once `path` names another file, the rest of the renamed one is read before moving on. (Two
 * rotations between two calls would lose the middle file; the suite counts many times a second,
 * and a rotation takes about 9000 of its changes.)
 */
function lineCounter(path: string): { count: () => Promise<number>; close: () => Promise<void> } {
  let file: FileHandle | undefined;
  let inode = 0;
  let offset = 0;
  let lines = 0;
  const buffer = Buffer.alloc(1 << 20);
  const readRest = async (handle: FileHandle): Promise<void> => {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      if (bytesRead === 0) return;
      offset += bytesRead;
      for (let i = 0; i < bytesRead; i++) if (buffer[i] === 10) lines++;
    }
  };
  const count = async (): Promise<number> => {
    for (;;) {
      if (file === undefined) {
        try {
          file = await open(path, 'r');
        } catch {
          return lines;
        }
        inode = (await file.stat()).ino;
        offset = 0;
      }
      await readRest(file);
      const now = await stat(path).catch(() => undefined);
      if (now === undefined || now.ino === inode) return lines;
      // Rotated: nothing more is written to the renamed file; finish it, then read the new one.
      await readRest(file);
      await file.close();
      file = undefined;
    }
  };
  const close = async (): Promise<void> => {
    await file?.close();
    file = undefined;
  };
  return { count, close };
}

function configYaml(dir: string): string {
  return `logLevel: info
checkpoint: { path: ${join(dir, 'state.db')} }
server: { enabled: false }
watchers:
  - name: pods
    resource: pods
sinks:
  - { name: out, type: stdout, format: json }
  - { name: log, type: file, path: ${join(dir, 'events.jsonl')} }
`;
}

async function runDaemon(options: DaemonSuiteOptions, dist: URL): Promise<ChildOutcome<RunResult>> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-daemon-'));
  let started: { cpuMs: number; at: number } | undefined;
  const server = await startChangeServer({ objects: options.objects, changes: options.changes, held: true });
  try {
    await writeFile(join(dir, 'kubeconfig'), kubeconfigFor(server.url));
    await writeFile(join(dir, 'raven.yaml'), configYaml(dir));
    const main = fileURLToPath(new URL('cli/main.js', dist));
    const child = spawn(options.node, [...daemonNodeFlags(), main, 'run', '-c', join(dir, 'raven.yaml')], {
      env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const pid = child.pid ?? 0;
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-4000);
      if (started === undefined && stderr.includes('"msg":"synced"')) {
        started = { cpuMs: Number.NaN, at: performance.now() };
        void processCpuMs(pid).then((cpuMs) => {
          if (started !== undefined) started.cpuMs = cpuMs;
          server.release();
        });
      }
    });
    const state = { exited: false };
    const exit = new Promise<void>((resolve) =>
      child.on('close', () => {
        state.exited = true;
        resolve();
      }),
    );
    const counter = lineCounter(join(dir, 'events.jsonl'));
    const deadline = performance.now() + 1_800_000; // a safety net against a hung daemon, not a measure
    let lines = 0;
    while (!state.exited && performance.now() < deadline) {
      lines = await counter.count();
      if (lines >= options.changes) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const done = state.exited ? undefined : { cpuMs: await processCpuMs(pid), at: performance.now() };
    await counter.close();
    child.kill('SIGTERM');
    await exit;
    if (done === undefined || started === undefined || lines < options.changes)
      return {
        ok: false,
        error: `${lines} of ${options.changes} changes written: ${stderr.trim().slice(-600)}`,
      };
    return {
      ok: true,
      value: { cpuMs: done.cpuMs - started.cpuMs, ms: done.at - started.at, changes: lines },
    };
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A baseline in a process of its own: `raw-parse.ts` or `raven-watch.ts`. */
async function runBaseline(options: DaemonSuiteOptions, script: string): Promise<ChildOutcome<RunResult>> {
  const server = await startChangeServer({ objects: options.objects, changes: options.changes });
  try {
    return await runChild<RunResult>({
      node: options.node,
      script,
      args: [server.url, String(options.changes)],
      timeoutMs: 600_000,
    });
  } finally {
    await server.close();
  }
}

export async function runDaemonSuite(options: DaemonSuiteOptions): Promise<{ markdown: string }> {
  const before = process.env.RAVEN_BENCH_BEFORE_DIST;
  const contestants: Contestant[] = [
    { name: RAW },
    { name: WATCH },
    { name: 'raven run', dist: ravenDist },
    ...(before === undefined || before === ''
      ? []
      : [{ name: 'raven run (before)', dist: new URL(`file://${before.replace(/\/?$/, '/')}`) }]),
  ];
  const rounds = await runRounds(
    contestants,
    options.runs,
    (c) =>
      c.dist !== undefined
        ? runDaemon(options, c.dist)
        : runBaseline(options, c.name === RAW ? 'bench/daemon/raw-parse.ts' : 'bench/daemon/raven-watch.ts'),
    (c, round, outcome) =>
      options.log(
        `daemon ${c.name} round ${round + 1}: ${
          outcome.ok
            ? `${fixed(outcome.value.cpuMs)} ms CPU, ${fixed(outcome.value.ms)} ms`
            : `failed: ${outcome.error}`
        }`,
      ),
  );
  const perChange = (r: RunResult): number => r.cpuMs / r.changes;
  const rate = (r: RunResult): number => (r.changes * 1000) / r.ms;
  const rows = contestants.map((c) => [
    `\`${c.name}\``,
    spread(values(rounds, c.name, rate)),
    spread(values(rounds, c.name, (r) => perChange(r) * 1000)),
    ratioSpread(roundRatios(rounds, c.name, RAW, (r) => perChange(r))),
    ratioSpread(roundRatios(rounds, c.name, WATCH, (r) => perChange(r))),
    String(values(rounds, c.name, rate).length),
  ]);
  const markdown = [
    '# The daemon end to end: watch → diff → stdout and file sinks',
    '',
    `Measured ${options.machine}. ${loadSummary(rounds.load)}.`,
    '',
    `\`raven run\` (${fileURLToPath(ravenDist)}) with ${options.objects} realistic pods listed, then ${options.changes} watch events, each a real change (one annotation), to a stdout sink (JSON lines to /dev/null) and a file sink, SQLite checkpoint. Timed from the daemon's \`synced\` log line (the changes are served from then on) until the file holds every change; CPU is the daemon process's own over that span. \`${RAW}\`: the same stream read with node:http and parsed line by line in a process of its own. \`${WATCH}\`: Raven's own watch over the same stream as the daemon's watchers run it (managedFields dropped while parsing, their entries read), counting its events, timed from its list's end. Ratios are of CPU per change. Medians (range) of ${options.runs} interleaved rounds; ratios per round.`,
    '',
    table(
      ['contestant', 'changes/s', 'CPU µs per change', `CPU ÷ ${RAW}`, 'CPU ÷ raven watch', 'runs'],
      rows,
    ),
    '',
    `Median CPU per change: ${contestants
      .map((c) => `${c.name} ${fixed(median(values(rounds, c.name, perChange)) * 1000)} µs`)
      .join(', ')}.`,
    ...[...rounds.failures]
      .filter(([, errors]) => errors.length > 0)
      .map(([name, errors]) => `\n${name} failed: ${errors.join('; ')}`),
  ].join('\n');
  return { markdown };
}
