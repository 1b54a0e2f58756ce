/** Markdown for results: the machine a run was on, and tables. */
import { cpus, loadavg, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './child.js';

/**
 * Date, Node version, CPUs, memory, the peers' installed versions and the 5-minute load average
 * when the suite ended (above the CPU count, other work shared the machine and wall times suffer).
 */
export function machineLine(nodeVersion: string): string {
  const cpu = cpus();
  const model = cpu[0]?.model.trim() ?? 'unknown CPU';
  const gib = (totalmem() / 2 ** 30).toFixed(0);
  const date = new Date().toISOString().slice(0, 10);
  const load = (loadavg()[1] ?? 0).toFixed(1);
  return `${date}, Node ${nodeVersion}, ${cpu.length} CPUs (${model}), ${gib} GiB, load average ${load}; ${peerVersions()}`;
}

function peerVersions(): string {
  const version = (name: string): string => {
    try {
      const path = join(repoRoot, 'bench', 'node_modules', name, 'package.json');
      return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
    } catch {
      return 'not installed';
    }
  };
  return `@kubernetes/client-node ${version('@kubernetes/client-node')}, kubernetes-fluent-client ${version('kubernetes-fluent-client')}`;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export const fixed = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** `2.41x` style ratio, or n/a. */
export const ratio = (n: number): string => (Number.isFinite(n) && n > 0 ? `${n.toFixed(2)}x` : 'n/a');
