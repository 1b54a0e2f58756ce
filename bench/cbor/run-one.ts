/**
 * One timed run of one CBOR contestant, in its own process (started by suite.ts):
 *   run-one.ts <contestant> <target as JSON>
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { Meter } from '../lib/measure.js';
import { contestantNamed, type CborTarget } from './contestants.js';

async function main(): Promise<void> {
  const [name = '', json = '{}'] = process.argv.slice(2);
  const target = JSON.parse(json) as CborTarget;
  const contestant = contestantNamed(name);
  const run = await contestant.prepare(target);
  const meter = new Meter();
  const count = await run();
  const measurement = meter.stop();
  const expected = contestant.expected(target);
  if (count !== expected) throw new Error(`${name} decoded ${count}, expected ${expected}`);
  reportResult({ ...measurement, count });
}

main().catch(reportFailure);
