/**
 * Memory over a long stream, in its own process (started by suite.ts, under `--expose-gc`):
 *   long-stream.ts <url> <kubeconfig> <events> <checkpoint>
 *
 * Raven's default `watch()` follows a stream of `events` realistic pod events (a population of pods
 * added, then modified in turn); after `checkpoint` events and after the last one the consumer
 * forces full collections until the heap stops shrinking and reads the process's memory. The
 * watcher keeps the last state of every pod (its default), so what it retains should stay what
 * it was after the first pass over the population: the goal is the heap after the last event
 * within 1.1x the heap after `checkpoint`.
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { loadRaven, ravenClient } from '../lib/raven.js';

export interface MemoryReading {
  /** Events delivered when read. */
  events: number;
  heapUsedMb: number;
  /** Memory outside the JavaScript heap that V8 knows of (ArrayBuffers and the like). */
  externalMb: number;
  rssMb: number;
}

export interface LongStreamResult {
  readings: MemoryReading[];
  cpuMs: number;
  ms: number;
}

const MB = 2 ** 20;

/** Full collections until the heap stops shrinking (at most 10), then what the process holds. */
function settle(events: number): MemoryReading {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  let last = Infinity;
  for (let i = 0; i < 10; i++) {
    gc();
    const used = process.memoryUsage().heapUsed;
    if (used >= last * 0.999) break;
    last = used;
  }
  const usage = process.memoryUsage();
  return { events, heapUsedMb: usage.heapUsed / MB, externalMb: usage.external / MB, rssMb: usage.rss / MB };
}

async function main(): Promise<void> {
  const [url = '', kubeconfig = '', eventsArg = '', checkpointArg = ''] = process.argv.slice(2);
  const events = Number(eventsArg);
  const checkpoint = Number(checkpointArg);
  if (url === '' || !(events > checkpoint && checkpoint > 0))
    throw new Error('usage: <url> <kubeconfig> <events> <checkpoint>');
  const raven = await loadRaven();
  const client = await ravenClient(raven, kubeconfig);
  const readings: MemoryReading[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let count = 0;
  for await (const event of raven.watch({ transport: client, path: '/api/v1/pods' })) {
    if (event.type === 'error') throw event.error;
    if (event.type !== 'added' && event.type !== 'modified') continue;
    count++;
    if (count === checkpoint || count === events) readings.push(settle(count));
    if (count === events) break;
  }
  const cpu = process.cpuUsage(cpu0);
  await client.destroy();
  const result: LongStreamResult = {
    readings,
    cpuMs: (cpu.user + cpu.system) / 1000,
    ms: performance.now() - t0,
  };
  reportResult(result);
}

main().catch(reportFailure);
