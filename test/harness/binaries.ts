/**
 * Binaries built with Go from the modules under hack/ and cached outside the clone, keyed by a hash
 * of the module's go.mod and go.sum and the Go version, so a second start takes seconds and a
 * version bump rebuilds: the control plane (kube-apiserver, kube-controller-manager, etcd from
 * hack/controlplane) here, helm and kustomize (hack/deploytools) in deploy-tools.ts.
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

/**
 * A Go module under hack/ built into the cache: `go build` of `packages` into
 * `<cacheRoot>/<cacheName>/<version>-<hash>/`, the hash taken over the module's go.mod and go.sum
 * and the Go version, so a version bump rebuilds and everything else finds the cached build.
 * Concurrent callers (test files in parallel) wait on one build.
 */
export interface GoBuild {
  /** The module directory, e.g. hack/controlplane. */
  moduleDir: string;
  /** The cache folder's name under cacheRoot(). */
  cacheName: string;
  /** What `go build` builds (import paths or ./relative to the module). */
  packages: string[];
  /** The version in the cache key, read from go.mod (e.g. the k8s.io/kubernetes version). */
  version: (gomod: string) => string;
  /** Says what is being built, once, when it is not cached. */
  describe: string;
  /**
   * Build without the compiler's optimisations and inlining (`-gcflags=all=-N -l`): a fifth
   * less compile work, for command-line tools run a few times per test run. Servers whose speed a
   * test or benchmark feels are built optimised.
   */
  unoptimised?: boolean;
}

/**
 * The environment for the Go commands that build the test binaries: modules resolved from the
 * proxy (`-mod=mod`), and the compiler's garbage collector run less often (GOGC=400 unless GOGC is
 * set). Building helm and kustomize with nothing in Go's build cache took 250 s with GOGC=400
 * against 277 s with Go's default of 100, and 268 s with the collector off (more system time);
 * the binaries are the same either way.
 */
export function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOFLAGS: '-mod=mod', GOGC: process.env.GOGC ?? '400' };
}

/** Build (or find) a GoBuild; returns the folder holding its binaries and the version. */
export async function ensureGoBuild(
  build: GoBuild,
  log: (line: string) => void = () => undefined,
): Promise<{ dir: string; version: string }> {
  const gomod = await readFile(join(build.moduleDir, 'go.mod'), 'utf8');
  const gosum = await readFile(join(build.moduleDir, 'go.sum'), 'utf8');
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION']);
  const version = build.version(gomod);
  const flags = [
    '-trimpath',
    '-ldflags=-s -w',
    ...(build.unoptimised === true ? ['-gcflags=all=-N -l'] : []),
  ];
  const hash = createHash('sha256')
    .update(gomod)
    .update(gosum)
    .update(goVersion.trim())
    // Only an unoptimised build adds its flags: optimised builds keep the key they always had.
    .update(build.unoptimised === true ? flags.join('\n') : '')
    .digest('hex');
  const parent = join(cacheRoot(), build.cacheName);
  const dir = join(parent, `${version}-${hash.slice(0, 12)}`);
  if (existsSync(join(dir, '.complete'))) return { dir, version };

  await mkdir(parent, { recursive: true });
  const lock = await acquireLock(`${dir}.lock`);
  try {
    if (existsSync(join(dir, '.complete'))) return { dir, version };
    const tmp = `${dir}.tmp-${process.pid}`;
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true });
    log(`building ${build.describe} (${version}) into ${dir}`);
    const started = Date.now();
    await run('go', ['build', ...flags, '-o', tmp + '/', ...build.packages], {
      cwd: build.moduleDir,
      env: goEnv(),
      maxBuffer: 64 << 20,
    });
    await (await open(join(tmp, '.complete'), 'w')).close();
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
    log(`built ${build.describe} in ${Math.round((Date.now() - started) / 1000)} s`);
    return { dir, version };
  } finally {
    await lock.release();
  }
}

/**
 * Return the cached control-plane binaries, building them first when missing (10-25 minutes on
 * 2 cores the first time; Go's own build cache makes rebuilds faster).
 */
export async function ensureBinaries(log: (line: string) => void = () => undefined): Promise<Binaries> {
  const { dir, version } = await ensureGoBuild(
    {
      moduleDir,
      cacheName: 'controlplane',
      packages: [
        'k8s.io/kubernetes/cmd/kube-apiserver',
        'k8s.io/kubernetes/cmd/kube-controller-manager',
        './cmd/etcd',
      ],
      version: (gomod) => /k8s\.io\/kubernetes (v[0-9.]+)/.exec(gomod)?.[1] ?? 'unknown',
      describe: 'kube-apiserver, kube-controller-manager and etcd',
    },
    log,
  );
  return {
    apiserver: join(dir, 'kube-apiserver'),
    controllerManager: join(dir, 'kube-controller-manager'),
    etcd: join(dir, 'etcd'),
    kubernetesVersion: version,
    dir,
  };
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
