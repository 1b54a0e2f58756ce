/**
 * Profile one informer contestant: serve the collection, then run the contestant once in a child
 * process, as suite.ts does (its output passed through), with extra Node flags (for example `--cpu-prof`):
 *   tsx bench/informer/profile.ts <node> <contestant> <listed> <events> [node flags...]
 * The profile is written to the child's working directory (the repository) unless the flags say
 * otherwise (`--cpu-prof-dir`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor } from '../decode/suite.js';
import { spawn } from 'node:child_process';
import { repoRoot } from '../lib/child.js';
import { PodCollection, startPodServer } from '../lib/pod-server.js';

async function main(): Promise<void> {
  const [node = process.execPath, name = '', listed = '50000', events = '0', ...flags] =
    process.argv.slice(2);
  const collection = new PodCollection({ listed: Number(listed), events: Number(events) });
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
      'bench/informer/run-one.ts',
    ];
    const child = spawn(node, [...argv, name, server.url, kubeconfig, listed, events], {
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
