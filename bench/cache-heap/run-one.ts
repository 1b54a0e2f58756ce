/**
 * One run of one cache-heap contestant, in its own process (started by suite.ts with --expose-gc
 * and NODE_ENV=production):
 *   run-one.ts <contestant> <kubeconfig> <namespace> <pods>
 * Modules loaded and client built, the heap is settled (gc until it stops shrinking) and read;
 * the contestant starts and syncs; the heap is settled and read again. The difference is what
 * the cache (and the open watch) retains.
 */
import { performance } from 'node:perf_hooks';
import { reportFailure, reportResult } from '../lib/child.js';
import { ownPeakRssMb } from '../lib/proc.js';
import { contestantNamed } from './contestants.js';

const MiB = 2 ** 20;

/** Collect until heapUsed stops shrinking (at least 3, at most 8 full GCs, a macrotask apart). */
async function settledHeap(): Promise<number> {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  let last = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 8; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    const used = process.memoryUsage().heapUsed;
    if (i >= 2 && used >= last - 64 * 1024) return used;
    last = used;
  }
  return last;
}

async function main(): Promise<void> {
  const [name = '', kubeconfig = '', namespace = '', pods = ''] = process.argv.slice(2);
  const contestant = contestantNamed(name);
  const ready = await contestant.setup({ kubeconfig, namespace });
  const before = await settledHeap();
  const t0 = performance.now();
  const session = ready.start();
  await session.synced;
  const syncedMs = performance.now() - t0;
  const after = await settledHeap();
  const memory = process.memoryUsage();
  const held = session.held();
  if (held !== Number(pods)) throw new Error(`${name} held ${held} pods when synced, expected ${pods}`);
  reportResult({
    syncedMs,
    baseHeapMb: before / MiB,
    heapMb: after / MiB,
    cacheMb: (after - before) / MiB,
    rssMb: memory.rss / MiB,
    peakRssMb: ownPeakRssMb(),
    held,
  });
}

main().catch(reportFailure);
