/**
 * The daemon image's size and start time: `npx tsx bench/image/start.ts [--runs N]` (as root,
 * with the tools scripts/image.sh needs; it builds the image from dist/ as it is).
 *
 * Start time: from spawning the process to the daemon's first `synced` log line (one watcher over
 * the ConfigMaps of one namespace of a private test control plane), median and range of N runs,
 * each then stopped with SIGTERM. Two contestants, interleaved: `podman run` of the image (read-only,
 * user 10001, as test/e2e/image.e2e.test.ts runs it), and the same Node binary (the image's, from
 * the cache) running the same dist/ directly on the host: the difference is what the container
 * costs. Size: the image's uncompressed size (podman's) and its gzip-compressed layer as pushed
 * (`buildah push --compression-format gzip` to an OCI layout). Prints a Markdown section.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { homedir, loadavg, tmpdir, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { repoRoot } from '../../test/harness/binaries.js';
import {
  ensureImage,
  inspectImage,
  podMounts,
  podmanRun,
  removeContainer,
} from '../../test/harness/image.js';
import { privateCluster } from '../../test/harness/test-cluster.js';

const exec = promisify(execFile);
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg === -1 ? 7 : Number(process.argv[runsArg + 1]);
if (!Number.isInteger(RUNS) || RUNS < 1)
  throw new Error(`--runs: a positive whole number, not ${process.argv[runsArg + 1]}`);

/** Spawn, and resolve with the milliseconds to the first `synced` line; then SIGTERM and wait for the exit. */
async function startToSynced(command: string[], env: Record<string, string> = {}): Promise<number> {
  const [program, ...args] = command as [string, ...string[]];
  const started = performance.now();
  const child = spawn(program, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  const ms = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      stderr += `${line}\n`;
      if (line.includes('"msg":"synced"')) resolve(performance.now() - started);
    });
    void exited.then((code) => reject(new Error(`exited ${code} before synced:\n${stderr}`)));
  });
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`exit ${code} after SIGTERM:\n${stderr}`);
  return ms;
}

/** Median (min–max), with `digits` decimals. */
function summary(values: number[], digits = 0): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (i: number): string => (sorted[i] ?? 0).toFixed(digits);
  return `${at(Math.floor(sorted.length / 2))} (${at(0)}–${at(sorted.length - 1)})`;
}

async function main(): Promise<void> {
  const image = await ensureImage();
  process.stderr.write(`${image.built}\n`);
  const config = await inspectImage(image.ref);
  const nodeVersion = (
    await exec('podman', [
      'image',
      'inspect',
      '--format',
      '{{index .Labels "io.kube-raven.node-version"}}',
      image.ref,
    ])
  ).stdout.trim();

  const oci = await mkdtemp(join(tmpdir(), 'raven-oci-'));
  let compressed = 0;
  try {
    await exec('buildah', [
      'push',
      '--quiet',
      '--format',
      'oci',
      '--compression-format',
      'gzip',
      image.ref,
      `oci:${oci}`,
    ]);
    const blobs = join(oci, 'blobs', 'sha256');
    for (const blob of await readdir(blobs)) compressed += (await stat(join(blobs, blob))).size;
  } finally {
    await rm(oci, { recursive: true, force: true });
  }

  const plane = await privateCluster();
  const dir = await mkdtemp(join(tmpdir(), 'raven-image-bench-'));
  const loads: number[] = [];
  const inImage: number[] = [];
  const onHost: number[] = [];
  try {
    const yaml = `
server: { port: 0 }
checkpoint: { path: '\${RAVEN_STATE_DIR}/raven-state.db' }
watchers:
  - { name: cms, resource: configmaps, namespaces: [default] }
sinks:
  - { name: console, type: stdout, format: json }
`;
    const { args } = await podMounts(dir, plane, yaml);
    const node = join(
      process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
      'kube-raven',
      'image',
      `node-${nodeVersion}`,
      'node',
    );
    for (let run = 0; run < RUNS; run++) {
      loads.push(loadavg()[0] ?? 0);
      const name = `raven-image-bench-${process.pid}-${run}`;
      try {
        inImage.push(await startToSynced([...(await podmanRun(name)), ...args, image.ref]));
      } finally {
        await removeContainer(name);
      }
      await rm(join(dir, 'host-state'), { recursive: true, force: true });
      onHost.push(
        await startToSynced(
          [node, join(repoRoot, 'dist', 'cli', 'main.js'), 'run', '-c', join(dir, 'etc', 'raven.yaml')],
          {
            KUBECONFIG: join(dir, 'etc', 'kubeconfig'),
            RAVEN_STATE_DIR: join(dir, 'host-state'),
            NODE_ENV: 'production',
          },
        ),
      );
      process.stderr.write(
        `run ${run + 1}/${RUNS}: image ${Math.round(inImage.at(-1) ?? 0)} ms, host ${Math.round(onHost.at(-1) ?? 0)} ms\n`,
      );
    }
  } finally {
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const revision = (await exec('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot })).stdout.trim();
  const mb = (bytes: number): string =>
    `${(bytes / 1e6).toFixed(1)} MB (${(bytes / 2 ** 20).toFixed(1)} MiB)`;
  process.stdout.write(`## ${new Date().toISOString().slice(0, 10)}, commit ${revision}

\`${image.ref}\`, Node ${nodeVersion}, user ${config.User}; ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB.

| what                                | value |
| ----------------------------------- | ----- |
| size, uncompressed (podman)         | ${mb(config.size)} |
| size, compressed (gzip layer, OCI)  | ${mb(compressed)} |
| start to first \`synced\`, image, ms  | ${summary(inImage)} |
| the same, Node and dist/ on the host, ms | ${summary(onHost)} |
| runs                                | ${RUNS}, interleaved |
| load average (1 min) at each run    | ${summary(loads, 1)} |
`);
}

await main();
