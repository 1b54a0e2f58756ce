/**
 * Where a watcher's CPU runs: the main thread against V8's helper threads, with and without
 * `--single-threaded-gc`, for contestants of the decode suite (one process per run, rounds
 * interleaved). Needs a Node with `process.threadCpuUsage` (23.9 and later):
 *   node --import tsx bench/decode/gc-threads.ts <node> <events> <population> <rounds> <contestant>...
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChild } from '../lib/child.js';
import type { Measurement } from '../lib/measure.js';
import { median } from '../lib/rounds.js';
import { PodCollection, startPodServer } from '../lib/pod-server.js';
import { kubeconfigFor } from './suite.js';

async function main(): Promise<void> {
  const [node = process.execPath, events = '50000', population = '10000', rounds = '3', ...names] =
    process.argv.slice(2);
  const collection = new PodCollection({ listed: 0, events: Number(events), population: Number(population) });
  const server = await startPodServer(collection);
  const dir = await mkdtemp(join(tmpdir(), 'raven-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(server.url));
  const variants = [
    { label: 'default', flags: [] as string[] },
    { label: '--single-threaded-gc', flags: ['--single-threaded-gc'] },
  ];
  const results = new Map<string, Measurement[]>();
  for (let round = 0; round < Number(rounds); round++) {
    for (const name of names) {
      for (const variant of variants) {
        const outcome = await runChild<Measurement>({
          node,
          nodeFlags: variant.flags,
          script: 'bench/decode/run-one.ts',
          args: [name, server.url, kubeconfig, events, population],
          timeoutMs: 600_000,
        });
        if (!outcome.ok) throw new Error(`${name} ${variant.label}: ${outcome.error}`);
        const key = `${name} ${variant.label}`;
        results.set(key, [...(results.get(key) ?? []), outcome.value]);
        process.stderr.write(
          `${key}: cpu ${outcome.value.cpuMs.toFixed(0)} ms (system ${outcome.value.systemCpuMs.toFixed(0)}), main thread ${outcome.value.threadCpuMs?.toFixed(0)} ms\n`,
        );
      }
    }
  }
  await server.close();
  process.stdout.write(
    '| contestant | GC | CPU ms | of it system | main thread ms | other threads ms |\n|---|---|---:|---:|---:|---:|\n',
  );
  for (const [key, runs] of results) {
    const cpu = median(runs.map((r) => r.cpuMs));
    const main = median(runs.map((r) => r.threadCpuMs ?? Number.NaN));
    const system = median(runs.map((r) => r.systemCpuMs));
    const [name, label] = key.split(' ');
    process.stdout.write(
      `| ${name} | ${label} | ${cpu.toFixed(0)} | ${system.toFixed(0)} | ${main.toFixed(0)} | ${(cpu - main).toFixed(0)} |\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
