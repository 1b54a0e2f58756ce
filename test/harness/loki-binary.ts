/**
 * Grafana Loki for the Loki sink's tests, built with Go from the module proxy like the control
 * plane (`binaries.ts`) and cached outside the clone in `<cache>/loki/<version>-<hash>/loki`, keyed
 * by the pinned versions and the Go version.
 *
 * `go install github.com/grafana/loki/v3/cmd/loki@version` refuses Loki's module (its go.mod has
 * `replace` directives), so the build takes the module's source from the proxy into a writable
 * copy, adds `./pkg/push` (a module of its own that the v3 zip leaves out, required at the version
 * below by that go.mod's replace) and builds `./cmd/loki` there.
 *
 * `RAVEN_LOKI_BINARY=/path/to/loki` uses that binary instead (a Loki built or installed otherwise).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { acquireLock, cacheRoot, goEnv } from './binaries.js';

const run = promisify(execFile);

export const LOKI_VERSION = 'v3.7.8';
/** The `github.com/grafana/loki/pkg/push` version Loki's go.mod requires (and replaces with ./pkg/push). */
const PUSH_VERSION = 'v0.0.0-20250630054201-94c0ba7b0952';
const BUILD_FLAGS = ['-trimpath', '-ldflags=-s -w'];

export interface LokiBinary {
  path: string;
  version: string;
}

async function buildKey(): Promise<string> {
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION']);
  const hash = createHash('sha256')
    .update([LOKI_VERSION, PUSH_VERSION, ...BUILD_FLAGS, goVersion.trim()].join('\n'))
    .digest('hex');
  return `${LOKI_VERSION}-${hash.slice(0, 12)}`;
}

/** The module's directory in Go's module cache, downloading it first when missing. */
async function download(module: string): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', module], {
    env: goEnv(),
    maxBuffer: 16 << 20,
  });
  const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (info.Dir === undefined) throw new Error(`go mod download ${module}: ${info.Error ?? stdout}`);
  return info.Dir;
}

/** Make a copied tree writable (the module cache is read-only). */
async function makeWritable(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) continue;
    await chmod(path, entry.isDirectory() ? 0o755 : (await stat(path)).mode | 0o200);
  }
  await chmod(dir, 0o755);
}

/**
 * Return the cached Loki binary, building it first when missing (tens of minutes of CPU on 2 cores
 * the first time; Go's build cache makes a rebuild faster). Concurrent callers wait on one build.
 */
export async function ensureLoki(log: (line: string) => void = () => undefined): Promise<LokiBinary> {
  const given = process.env.RAVEN_LOKI_BINARY;
  if (given !== undefined && given !== '') return { path: given, version: 'given by RAVEN_LOKI_BINARY' };
  const key = await buildKey();
  const dir = join(cacheRoot(), 'loki', key);
  const binary: LokiBinary = { path: join(dir, 'loki'), version: LOKI_VERSION };
  if (existsSync(join(dir, '.complete'))) return binary;

  await mkdir(join(cacheRoot(), 'loki'), { recursive: true });
  const lock = await acquireLock(join(cacheRoot(), 'loki', `${key}.lock`));
  try {
    if (existsSync(join(dir, '.complete'))) return binary;
    const tmp = `${dir}.tmp-${process.pid}`;
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true });
    const started = Date.now();
    log(`building Loki ${LOKI_VERSION} into ${dir}`);
    const src = join(tmp, 'src');
    await cp(await download(`github.com/grafana/loki/v3@${LOKI_VERSION}`), src, { recursive: true });
    await makeWritable(src);
    await rm(join(src, 'pkg', 'push'), { recursive: true, force: true });
    await cp(await download(`github.com/grafana/loki/pkg/push@${PUSH_VERSION}`), join(src, 'pkg', 'push'), {
      recursive: true,
    });
    await makeWritable(join(src, 'pkg', 'push'));
    await run('go', ['build', ...BUILD_FLAGS, '-o', join(tmp, 'loki'), './cmd/loki'], {
      cwd: src,
      env: goEnv(),
      maxBuffer: 64 << 20,
    });
    await rm(src, { recursive: true, force: true });
    await (await open(join(tmp, '.complete'), 'w')).close();
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
    log(`built Loki in ${Math.round((Date.now() - started) / 1000)} s`);
    return binary;
  } finally {
    await lock.release();
  }
}
