/**
 * Profile one contestant of the informer or decode suite: serve the collection, then run the
 * contestant once in a child process, as the suite does (its output passed through), with extra
 * Node flags (for example `--cpu-prof` or `--trace-gc`):
 *   tsx bench/lib/profile.ts informer <node> <contestant> <listed> <events> [node flags...]
 *   tsx bench/lib/profile.ts decode <node> <contestant> <events> <population> [node flags...]
 * The profile is written to the child's working directory (the repository) unless the flags say
 * otherwise (`--cpu-prof-dir`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor } from '../decode/suite.js';
import { spawn } from 'node:child_process';
import { repoRoot } from './child.js';
import { PodCollection, startPodServer } from './pod-server.js';

async function main(): Promise<void> {
  const [suite = '', node = process.execPath, name = '', first = '', second = '', ...flags] =
    process.argv.slice(2);
  if (suite !== 'informer' && suite !== 'decode')
    throw new Error(`suite: expected informer or decode, got ${suite}`);
  // The run-one arguments: informer <listed> <events>, decode <events> <population>.
  const a = first || '50000';
  const b = second || (suite === 'informer' ? '0' : '10000');
  const collection =
    suite === 'informer'
      ? new PodCollection({ listed: Number(a), events: Number(b) })
      : new PodCollection({ listed: 0, events: Number(a), population: Number(b) });
  const server = await startPodServer(collection);
  const dir = await mkdtemp(join(tmpdir(), 'raven-profile-'));
  const kubeconfig = join(dir, 'kubeconfig');
  try {
    await writeFile(kubeconfig, kubeconfigFor(server.url));
    // As runChild starts it, but with the child's output passed through (--trace-gc and the like).
    const argv = [
      '--max-old-space-size=8192',
      '--expose-gc',
      ...flags,
      '--import',
      'tsx',
      `bench/${suite}/run-one.ts`,
    ];
    const child = spawn(node, [...argv, name, server.url, kubeconfig, a, b], {
      cwd: repoRoot,
      stdio: 'inherit',
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) process.exitCode = 1;
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
