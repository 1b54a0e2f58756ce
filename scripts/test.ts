/**
 * The whole test suite in one run of node's test runner: unit and fault tests, and end-to-end
 * tests against one real control plane started here for the run (and stopped afterwards).
 *
 *   tsx scripts/test.ts            everything
 *   tsx scripts/test.ts --unit     unit and fault tests only (no control plane)
 *   tsx scripts/test.ts FILE...    the given test files (a control plane if any is under test/e2e)
 *
 * End-to-end files named *openstack* or translator* also get one OpenStack lab for the run
 * (RAVEN_TEST_OPENSTACK_DIR), unless RAVEN_TEST_OPENSTACK_DIR already names a running one.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { ensureBinaries, repoRoot } from '../test/harness/binaries.js';
import { ControlPlane } from '../test/harness/control-plane.js';
import { OpenStackLab } from '../test/harness/openstack/lab.js';

function find(dir: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(find(path));
    else if (name.endsWith('.test.ts')) out.push(relative(repoRoot, path));
  }
  return out;
}

/**
 * End-to-end files that take longest (the translator's against the OpenStack lab: 10 to 25 minutes
 * of the run each on 2 cores), started first. Node's runner starts files in the order given, as
 * many at a time as --test-concurrency allows, so the longest files run beside all the short ones
 * instead of forming a tail of their own at the end of the alphabet.
 */
const LONGEST_FIRST = ['test/e2e/translator.e2e.test.ts', 'test/e2e/translator-policy.e2e.test.ts'];

function longestFirst(files: string[]): string[] {
  const first = LONGEST_FIRST.filter((f) => files.includes(f));
  return [...first, ...files.filter((f) => !first.includes(f))];
}

async function main(args: string[]): Promise<number> {
  const unitOnly = args.includes('--unit');
  const explicit = args.filter((a) => !a.startsWith('--'));
  const files =
    explicit.length > 0
      ? explicit
      : longestFirst([
          ...find(join(repoRoot, 'test', 'unit')),
          ...find(join(repoRoot, 'test', 'fault')),
          ...(unitOnly ? [] : find(join(repoRoot, 'test', 'e2e'))),
        ]);
  const needsCluster = files.some((f) => f.includes('e2e'));
  const env = { ...process.env };
  let plane: ControlPlane | undefined;
  let dir: string | undefined;
  if (needsCluster) {
    const started = Date.now();
    const binaries = await ensureBinaries((line) => process.stderr.write(`test: ${line}\n`));
    dir = await mkdtemp(join(tmpdir(), 'raven-test-cluster-'));
    plane = await ControlPlane.start(dir, binaries);
    process.stderr.write(
      `test: control plane ${binaries.kubernetesVersion} ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    env.RAVEN_TEST_CLUSTER_DIR = dir;
  }
  const needsOpenStack = files.some((f) => f.includes('e2e') && /openstack|^translator/.test(basename(f)));
  const givenLab = process.env.RAVEN_TEST_OPENSTACK_DIR;
  let lab: OpenStackLab | undefined;
  let labDir: string | undefined;
  try {
    const reuse =
      givenLab !== undefined &&
      OpenStackLab.exists(givenLab) &&
      (await OpenStackLab.attach(givenLab)).status().running;
    if (needsOpenStack && !reuse) {
      labDir = await mkdtemp(join(tmpdir(), 'raven-test-openstack-'));
      lab = await OpenStackLab.start(labDir, (line) => process.stderr.write(`test: openstack lab ${line}\n`));
      env.RAVEN_TEST_OPENSTACK_DIR = labDir;
    }
    // Two files at a time. Three saved about 90 s of a 1,190 s run, but with a second run beside
    // it (load 12 to 16 on 2 cores) Neutron answered so slowly that a translator test's
    // convergence outlasted its safety net.
    const concurrency = process.env.RAVEN_TEST_CONCURRENCY ?? '2';
    return await new Promise<number>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files],
        { cwd: repoRoot, env, stdio: 'inherit' },
      );
      const forward = (signal: NodeJS.Signals): void => {
        child.kill(signal);
      };
      process.on('SIGINT', forward).on('SIGTERM', forward);
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  } finally {
    if (lab) await lab.stop();
    if (labDir && process.env.RAVEN_KEEP_TEST_CLUSTER === undefined)
      await rm(labDir, { recursive: true, force: true });
    if (plane) await plane.stop();
    if (dir && process.env.RAVEN_KEEP_TEST_CLUSTER === undefined)
      await rm(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`test: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
