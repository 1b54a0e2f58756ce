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
  const meter = new Meter();
  const count = await run();
  const measurement = meter.stop();
  const expected = contestant.expected?.(target) ?? target.listed + target.events;
  if (count !== expected) throw new Error(`${name} handled ${count} changes, expected ${expected}`);
  reportResult({ ...measurement, changes: count });
}

main().catch(reportFailure);
