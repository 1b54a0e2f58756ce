/**
 * The control-plane binaries (kube-apiserver, kube-controller-manager, etcd), built with Go from
 * hack/controlplane/go.mod and cached outside the clone, keyed by a hash of that module's go.mod
 * and go.sum and the Go version, so a second start takes seconds and a version bump rebuilds.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const repoRoot = resolve(import.meta.dirname, '..', '..');
const moduleDir = join(repoRoot, 'hack', 'controlplane');

export interface Binaries {
  apiserver: string;
  controllerManager: string;
  etcd: string;
  /** The k8s.io/kubernetes version the binaries were built from. */
  kubernetesVersion: string;
  dir: string;
}

/** Where built binaries live: $RAVEN_CACHE_DIR, else $XDG_CACHE_HOME/kube-raven, else ~/.cache/kube-raven. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RAVEN_CACHE_DIR) return env.RAVEN_CACHE_DIR;
  const xdg = env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(xdg, 'kube-raven');
}

async function moduleKey(): Promise<{ key: string; kubernetesVersion: string }> {
  const gomod = await readFile(join(moduleDir, 'go.mod'), 'utf8');
  const gosum = await readFile(join(moduleDir, 'go.sum'), 'utf8');
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION']);
  const version = /k8s\.io\/kubernetes (v[0-9.]+)/.exec(gomod)?.[1] ?? 'unknown';
  const hash = createHash('sha256').update(gomod).update(gosum).update(goVersion.trim()).digest('hex');
  return { key: `${version}-${hash.slice(0, 12)}`, kubernetesVersion: version };
}

/**
 * Return the cached binaries, building them first when missing (10-25 minutes on 2 cores the first
 * time; Go's own build cache makes rebuilds faster). Concurrent callers wait on one build.
 */
export async function ensureBinaries(log: (line: string) => void = () => undefined): Promise<Binaries> {
  const { key, kubernetesVersion } = await moduleKey();
  const dir = join(cacheRoot(), 'controlplane', key);
  const binaries: Binaries = {
    apiserver: join(dir, 'kube-apiserver'),
    controllerManager: join(dir, 'kube-controller-manager'),
    etcd: join(dir, 'etcd'),
    kubernetesVersion,
    dir,
  };
  if (existsSync(join(dir, '.complete'))) return binaries;

  await mkdir(join(cacheRoot(), 'controlplane'), { recursive: true });
  const lock = await acquireLock(join(cacheRoot(), 'controlplane', `${key}.lock`));
  try {
    if (existsSync(join(dir, '.complete'))) return binaries;
    const tmp = `${dir}.tmp-${process.pid}`;
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true });
    log(`building kube-apiserver, kube-controller-manager and etcd (${kubernetesVersion}) into ${dir}`);
    const started = Date.now();
    await run(
      'go',
      [
        'build',
        '-trimpath',
        '-ldflags=-s -w',
        '-o',
        tmp + '/',
        'k8s.io/kubernetes/cmd/kube-apiserver',
        'k8s.io/kubernetes/cmd/kube-controller-manager',
        './cmd/etcd',
      ],
      { cwd: moduleDir, env: { ...process.env, GOFLAGS: '-mod=mod' }, maxBuffer: 64 << 20 },
    );
    await (await open(join(tmp, '.complete'), 'w')).close();
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
    log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
    return binaries;
  } finally {
    await lock.release();
  }
}

export async function acquireLock(path: string): Promise<{ release: () => Promise<void> }> {
  for (;;) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await readFile(path, 'utf8').catch(() => '0'));
      if (!isAlive(holder)) {
        await rm(path, { force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
