/**
 * One timed run of one decoding contestant, in its own process (started by suite.ts):
 *   run-one.ts <contestant> <url> <kubeconfig> <events> <population>
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { Meter } from '../lib/measure.js';
import { contestantNamed, type DecodeTarget } from './contestants.js';

async function main(): Promise<void> {
  const [name = '', url = '', kubeconfig = '', events = '', population = ''] = process.argv.slice(2);
  const target: DecodeTarget = { url, kubeconfig, events: Number(events), population: Number(population) };
  const contestant = contestantNamed(name);
  const run = await contestant.prepare(target);
  const meter = new Meter();
  const count = await run();
  const measurement = meter.stop();
  const expected = contestant.expected(target);
  if (count !== expected) throw new Error(`${name} delivered ${count} events, expected ${expected}`);
  reportResult({ ...measurement, events: count });
}

main().catch(reportFailure);
