/**
 * The second baseline of the daemon benchmark, run in its own process: Raven's own watch, as the
 * daemon's watchers run it (`watcher-pipeline.ts`: `keepObjects: false`, managedFields dropped
 * while parsing and their entries read for `changedBy`), over the same stream, with nothing done
 * with its events but counting them. Timed as the daemon is: from the end of its list (`synced`)
 * until the last change arrived; CPU is this process's own (`process.cpuUsage`, all threads).
 *
 * Usage: raven-watch.ts <server url> <changes>
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { kubeconfigFor } from '../decode/suite.js';
import { loadRaven, ravenClient } from '../lib/raven.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url = '', changesArg = '0'] = process.argv.slice(2);
const changes = Number(changesArg);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-watch-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(url));
  const raven = await loadRaven();
  const client = await ravenClient(raven, kubeconfig);
  await rm(dir, { recursive: true, force: true });
  const watcher = raven.watch({
    transport: client,
    path: '/api/v1/pods',
    keepObjects: false,
    dropManagedFields: true,
    fieldManagers: true,
  });
  let start: { cpu: NodeJS.CpuUsage; at: number } | undefined;
  let count = 0;
  for await (const event of watcher) {
    if (event.type === 'error') throw event.error;
    if (event.type === 'synced' && start === undefined)
      start = { cpu: process.cpuUsage(), at: performance.now() };
    if (event.type === 'modified' && ++count === changes) break;
  }
  if (start === undefined) throw new Error('the watch never synced');
  const cpu = process.cpuUsage(start.cpu);
  reportResult({ cpuMs: (cpu.user + cpu.system) / 1000, ms: performance.now() - start.at, changes: count });
}

main().catch(reportFailure);
