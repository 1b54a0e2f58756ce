/**
 * A user's project in a temporary folder, as the README's "Use it from your own project" makes
 * one: `npm pack` in this checkout (dist/ must be built), then `npm install <tarball>` there, with
 * any other packages the project has (a peer such as `@kubernetes/client-node@^2`), from npm's
 * cache first (`--offline`, then `--prefer-offline`), so that nothing but the npm registry could
 * ever be asked. kube-raven is installed, not linked, so its imports of a peer resolve to the
 * project's copy, as in a real project.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { repoRoot } from '../harness/binaries.js';

const run = promisify(execFile);

export interface PackedProject {
  dir: string;
  remove(): Promise<void>;
}

export async function packedProject(others: string[] = []): Promise<PackedProject> {
  assert.ok(existsSync(join(repoRoot, 'dist', 'index.js')), 'dist/ is missing: run `npm run build` first');
  const packDir = await mkdtemp(join(tmpdir(), 'raven-pack-'));
  const dir = await mkdtemp(join(tmpdir(), 'raven-own-project-'));
  const remove = async (): Promise<void> => {
    await rm(dir, { recursive: true, force: true });
    await rm(packDir, { recursive: true, force: true });
  };
  try {
    const npm = (args: string[], cwd: string) => run('npm', args, { cwd, maxBuffer: 16 << 20 });
    const packed = await npm(['pack', '--json', '--pack-destination', packDir], repoRoot);
    const [info] = JSON.parse(packed.stdout) as { filename: string }[];
    assert.ok(info !== undefined, packed.stdout);
    await writeFile(join(dir, 'package.json'), '{ "name": "my-project", "private": true }\n');
    const install = ['install', '--no-audit', '--no-fund', join(packDir, info.filename), ...others];
    await npm([...install, '--offline'], dir).catch(() => npm([...install, '--prefer-offline'], dir));
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}
