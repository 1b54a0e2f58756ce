/**
 * One timed run of the client-node program on one module, in its own process (started by suite.ts):
 *   run-one.ts <module> <kubeconfig> <listed> <events>
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { Meter } from '../lib/measure.js';
import { informerProgram, modules } from './program.js';

async function main(): Promise<void> {
  const [name = '', kubeconfig = '', listed = '', events = ''] = process.argv.slice(2);
  const module = modules[name];
  if (module === undefined)
    throw new Error(`unknown module ${name}; one of ${Object.keys(modules).join(', ')}`);
  const expected = Number(listed) + Number(events);
  const run = informerProgram(await module.load(), { kubeconfig, expected });
  const meter = new Meter();
  const count = await run();
  const measurement = meter.stop();
  if (count !== expected) throw new Error(`${name} handled ${count} changes, expected ${expected}`);
  reportResult({ ...measurement, changes: count });
}

main().catch(reportFailure);
