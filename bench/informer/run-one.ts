/**
 * One timed run of one informer contestant, in its own process (started by suite.ts):
 *   run-one.ts <contestant> <url> <kubeconfig> <listed> <events>
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { Meter } from '../lib/measure.js';
import { contestantNamed, type InformerTarget } from './contestants.js';

async function main(): Promise<void> {
  const [name = '', url = '', kubeconfig = '', listed = '', events = ''] = process.argv.slice(2);
  const target: InformerTarget = { url, kubeconfig, listed: Number(listed), events: Number(events) };
  const contestant = contestantNamed(name);
  const run = await contestant.prepare(target);
  collectBeforeTheClock();
  const meter = new Meter();
  const count = await run();
  const measurement = meter.stop();
  const expected = contestant.expected?.(target) ?? target.listed + target.events;
  if (count !== expected) throw new Error(`${name} handled ${count} changes, expected ${expected}`);
  reportResult({ ...measurement, changes: count });
}

/**
 * A full collection that also shrinks the heap (suite.ts starts the child with --expose-gc), so
 * the timed run does not pay for what its preparation left. The relist contestants' preparation
 * holds 50,000 resume stubs, which grew V8's young generation; with the old generation's headroom
 * then below the young generation's capacity, V8 started incremental marking every 150 ms or so
 * throughout the timed relist (23 mark-compacts in a streaming relist of 50,000 pods, Node 24,
 * about half of its CPU). After this collection: one.
 */
function collectBeforeTheClock(): void {
  const gc = (globalThis as { gc?: (options?: { type: 'major'; flavor: 'last-resort' }) => void }).gc;
  // Not under Node 20: its gc() takes no options (given some, it collects the young generation
  // only), and a plain full collection there lowered the old generation's limit to just above the
  // live heap, which brought on the same marking (33 starts in one streaming relist, 1 without).
  if (Number(process.versions.node.split('.')[0]) >= 22) gc?.({ type: 'major', flavor: 'last-resort' });
}

main().catch(reportFailure);
