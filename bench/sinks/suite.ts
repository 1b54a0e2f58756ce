/**
 * Streaming sinks' throughput: changes per second each sustains into its real server (Debian's
 * packages, started on loopback by the test harness), side by side with batching on (the
 * defaults) and off (`maxBatch: 1`: one write per change, the same concurrency).
 *
 * Each run: a fresh server; `changes` change events (ConfigMap-sized, with a diff) about
 * `objects` objects, `changes / objects` per object, enqueued at once into a `SinkDelivery` (the
 * daemon's delivery layer: per-object order, retries) with the daemon's defaults for the sink
 * type; the clock runs from the first enqueue until the last change is confirmed by the server.
 * The server is then asked how many it holds (each must be there once). Raven is loaded from
 * dist/ and runs in this process.
 */
import { performance } from 'node:perf_hooks';
import type { SinkRecord } from '../../src/raven/model/gap-notice.js';
import type { Sink } from '../../src/raven/sinks/sink.js';
import { loadavg } from 'node:os';
import { fixed, ratio, table } from '../lib/report.js';
import { loadSummary, median, spread } from '../lib/rounds.js';
import { ravenDist } from '../lib/raven.js';
import { sinkTargets, type SinkTarget } from './targets.js';

type DeliveryModule = typeof import('../../src/raven/delivery/sink-delivery.js');

export interface SinksSuiteOptions {
  nodeVersion: string;
  machine: string;
  changes: number;
  objects: number;
  runs: number;
  only?: string[];
  log: (line: string) => void;
}

interface Measured {
  target: string;
  batched: number[];
  single: number[];
}

/**
 * The first change's time: ten minutes before the suite started, one millisecond apart after it.
 * Recent, because Loki serves queries for recent entries from its ingester only (an entry from a
 * fixed date years back is accepted but not found by the count).
 */
const FIRST_CHANGE_MS = Date.now() - 600_000;

function changeEvent(i: number, objects: number): SinkRecord {
  const obj = i % objects;
  const round = Math.floor(i / objects);
  const name = `cm-${obj}`;
  const rv = String(1000 + i);
  const data = Object.fromEntries(
    Array.from({ length: 8 }, (_, k) => [`key-${k}`, `value-${round}-${k}-${'x'.repeat(64)}`]),
  );
  return {
    id: `bench:uid-${obj}:${rv}:${round === 0 ? 'added' : 'modified'}`,
    watcher: 'bench',
    type: round === 0 ? 'added' : 'modified',
    origin: 'live',
    resource: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
    namespace: `ns-${obj % 10}`,
    name,
    uid: `uid-${obj}`,
    resourceVersion: rv,
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: `ns-${obj % 10}`,
        uid: `uid-${obj}`,
        resourceVersion: rv,
        labels: { app: 'bench' },
      },
      data,
    },
    previous: undefined,
    diff:
      round === 0
        ? []
        : [{ path: 'data.key-0', op: 'replace', old: `value-${round - 1}`, new: `value-${round}` }],
    tombstone: false,
    time: new Date(FIRST_CHANGE_MS + i).toISOString(),
  } as SinkRecord;
}

async function oneRun(
  SinkDelivery: DeliveryModule['SinkDelivery'],
  sink: Sink,
  changes: number,
  objects: number,
): Promise<number> {
  const events = Array.from({ length: changes }, (_, i) => changeEvent(i, objects));
  let settled = 0;
  let failed = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const delivery = new SinkDelivery(sink, {
    concurrency: 256,
    maxBacklog: changes + 1,
    maxAttempts: 20,
    initialBackoffMs: 100,
    maxBackoffMs: 2000,
    onDelivered: () => {
      if (++settled + failed === changes) done();
    },
    onDeadLetter: () => {
      if (settled + ++failed === changes) done();
    },
  });
  const started = performance.now();
  for (const event of events) delivery.enqueue(event);
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await delivery.close(10_000);
  if (failed > 0) throw new Error(`${failed} changes dead-lettered`);
  return changes / seconds;
}

export async function runSinksSuite(options: SinksSuiteOptions): Promise<{ markdown: string }> {
  const { SinkDelivery } = (await import(
    new URL('raven/delivery/sink-delivery.js', ravenDist).href
  )) as DeliveryModule;
  const targets = sinkTargets().filter((t) => options.only === undefined || options.only.includes(t.name));
  const results: Measured[] = [];
  const load: number[] = [];
  for (const target of targets) {
    const m: Measured = { target: target.name, batched: [], single: [] };
    for (let run = 0; run < options.runs; run++) {
      for (const mode of ['batched', 'single'] as const) {
        load.push(loadavg()[0] ?? 0);
        const rate = await measure(target, mode, SinkDelivery, options);
        m[mode].push(rate);
        options.log(`${target.name} ${mode} run ${run + 1}: ${fixed(rate)} changes/s`);
      }
    }
    results.push(m);
  }
  const rows = results.map((m) => [
    `\`${m.target}\``,
    spread(m.batched),
    spread(m.single),
    ratio(median(m.batched) / median(m.single)),
    String(m.batched.length),
  ]);
  const markdown = `# Streaming sinks: changes per second into a real server

Measured ${options.machine}; ${loadSummary(load)}.

${options.changes} change events about ${options.objects} ConfigMaps (${options.changes / options.objects} per object, ~1 KiB
of JSON each), enqueued at once into the daemon's \`SinkDelivery\` (concurrency 256, per-object order)
in front of each sink; timed from the first enqueue until the server confirmed the last change; the
server's count checked after each run. Servers from Debian's packages on loopback, one fresh server
per run (see bench/sinks/targets.ts), each at its own durable defaults: PostgreSQL with \`fsync\` and
\`synchronous_commit\` on (every commit flushed to disk before it is acknowledged), Redis with its
append-only file (\`appendfsync everysec\`), NATS JetStream's file store and Loki as they come.
**batched**: the sink's defaults (up to 500 changes per write);
**one per write**: \`maxBatch: 1\`. Medians (range) of ${options.runs} runs, interleaved.

${table(['sink', 'batched changes/s: median (range)', 'one per write changes/s: median (range)', 'batched / one per write', 'runs'], rows)}
`;
  return { markdown };
}

async function measure(
  target: SinkTarget,
  mode: 'batched' | 'single',
  SinkDelivery: DeliveryModule['SinkDelivery'],
  options: SinksSuiteOptions,
): Promise<number> {
  const server = await target.start();
  try {
    const sink = await server.sink(mode === 'batched' ? undefined : 1);
    const rate = await oneRun(SinkDelivery, sink, options.changes, options.objects);
    const stored = await server.count();
    if (stored !== options.changes)
      throw new Error(`${target.name}: the server holds ${stored} changes, expected ${options.changes}`);
    return rate;
  } finally {
    await server.stop();
  }
}
