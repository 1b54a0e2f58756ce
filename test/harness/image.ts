/**
 * The daemon's container image for tests and benchmarks: built by scripts/image.sh (cached, so a
 * second build only adds dist/), run with podman the way a pod runs it. Missing tools are an
 * error naming them and the installer, never a skip.
 *
 * `podman run` here always passes three things a default podman run lacks, each because of a call
 * that fails on a restricted host (a CI sandbox without CAP_SYS_RESOURCE and with hybrid cgroups):
 * - `--runtime runc`: crun 1.8 (Debian bookworm) refuses hybrid cgroup v1/v2 hosts
 *   ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2");
 * - `--ulimit nofile=<the current hard limit>`: podman's default (1048576) is a raise, which
 *   needs CAP_SYS_RESOURCE ("setrlimit RLIMIT_NOFILE: Operation not permitted");
 * - `--ulimit nproc=4096`: the same for the process limit (raven runs one process, about a dozen
 *   threads).
 * None changes what runs in the container.
 */
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './binaries.js';
import type { ControlPlane } from './control-plane.js';

const run = promisify(execFile);

/** What the image needs on the machine, and where it comes from. */
const TOOLS = ['buildah', 'mmdebstrap', 'podman', 'runc'] as const;

export interface Image {
  /** The local image name: $RAVEN_IMAGE, else `localhost/kube-raven:<package version>`. */
  ref: string;
  /** scripts/image.sh's last line: name, size, Node version, seconds. */
  built: string;
}

/** Build the image from dist/ as it is (run `npm run build` first) and return its name. */
export async function ensureImage(): Promise<Image> {
  const missing: string[] = [];
  for (const tool of TOOLS) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      missing.push(tool);
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `the image test needs ${missing.join(', ')} (Debian packages): run bash scripts/install-system-packages.sh as root`,
    );
  }
  if (process.getuid?.() !== 0)
    throw new Error('the image test runs as root (mmdebstrap and buildah need it)');
  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  let out: { stdout: string; stderr: string };
  try {
    out = await run('bash', ['scripts/image.sh', '--no-build'], { cwd: repoRoot, maxBuffer: 16 << 20 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `scripts/image.sh failed: ${failed.message}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`,
    );
  }
  const lines = out.stdout.trim().split('\n');
  const named = process.env.RAVEN_IMAGE;
  const ref = named === undefined || named === '' ? `localhost/kube-raven:${pkg.version}` : named;
  return { ref, built: lines[lines.length - 1] ?? '' };
}

/** The hard limit on open files of this process (what a container may be given without a raise). */
async function openFilesLimit(): Promise<number> {
  const limits = await readFile('/proc/self/limits', 'utf8');
  const hard = /^Max open files\s+\S+\s+(\S+)/m.exec(limits)?.[1];
  return hard === undefined || hard === 'unlimited' ? 1_048_576 : Number(hard);
}

/**
 * `podman run --rm --name <name>` with the flags above and host networking (the test control plane
 * listens on loopback), without the image and its arguments.
 */
export async function podmanRun(name: string): Promise<[string, ...string[]]> {
  const files = await openFilesLimit();
  return [
    'podman',
    'run',
    '--rm',
    '--name',
    name,
    '--runtime',
    'runc',
    '--ulimit',
    `nofile=${files}:${files}`,
    '--ulimit',
    'nproc=4096:4096',
    '--network',
    'host',
  ];
}

/** The image's user and group. */
export const RAVEN_UID = 10001;

/**
 * What a pod gives the container, made in `dir`: `etc` (the config and a kubeconfig with the
 * credentials inline, mounted read-only at /etc/raven) and `state` (owned by the raven user,
 * mounted at /var/lib/raven). Returns podman's arguments for them (with a read-only root
 * filesystem and KUBECONFIG) and the state directory's host path.
 */
export async function podMounts(
  dir: string,
  plane: ControlPlane,
  config: string,
): Promise<{ args: string[]; state: string }> {
  const etc = join(dir, 'etc');
  const state = join(dir, 'state');
  await mkdir(etc);
  await mkdir(state);
  await chmod(etc, 0o755);
  await chown(state, RAVEN_UID, RAVEN_UID);
  await writeFile(join(etc, 'raven.yaml'), config);
  const ca = (await readFile(plane.state.pki.caCert)).toString('base64');
  await writeFile(
    join(etc, 'kubeconfig'),
    `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: { server: "${plane.server}", certificate-authority-data: ${ca} }
users:
- name: admin
  user: { token: ${plane.state.token} }
contexts:
- name: test
  context: { cluster: test, user: admin }
current-context: test
`,
  );
  const args = [
    '--read-only',
    '--volume',
    `${etc}:/etc/raven:ro`,
    '--volume',
    `${state}:/var/lib/raven`,
    '--env',
    'KUBECONFIG=/etc/raven/kubeconfig',
    '--env',
    'NO_COLOR=1',
  ];
  return { args, state };
}

/** Remove a container whatever its state (after a test, so a failed one leaves nothing running). */
export async function removeContainer(name: string): Promise<void> {
  await run('podman', ['rm', '--force', '--time', '0', '--ignore', name]).catch(() => undefined);
}

/** `podman image inspect`: the image config the runtime uses. */
export async function inspectImage(ref: string): Promise<{
  User: string;
  Entrypoint: string[];
  Cmd: string[];
  Env: string[];
  WorkingDir: string;
  size: number;
}> {
  const { stdout } = await run('podman', ['image', 'inspect', ref]);
  const [image] = JSON.parse(stdout) as [
    {
      Size: number;
      Config: { User: string; Entrypoint: string[]; Cmd: string[]; Env: string[]; WorkingDir: string };
    },
  ];
  return { ...image.Config, size: image.Size };
}
