/**
 * The whole test suite in one run of node's test runner: unit and fault tests, and end-to-end
 * tests against one real control plane started here for the run (and stopped afterwards).
 *
 *   tsx scripts/test.ts            everything
 *   tsx scripts/test.ts --unit     unit and fault tests only (no control plane)
 *   tsx scripts/test.ts FILE...    the given test files (a control plane if any is under test/e2e)
 *
 * End-to-end files named *openstack* or translator* also get one OpenStack lab for the run
 * (RAVEN_TEST_OPENSTACK_DIR), unless RAVEN_TEST_OPENSTACK_DIR already names a running one. They
 * run one at a time in a test runner of their own, beside a runner for all the other files
 * (RAVEN_TEST_CONCURRENCY of them at a time, default 2).
 */
import { type ChildProcess, spawn } from 'node:child_process';
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

/** End-to-end files that need the OpenStack lab (Neutron and Octavia). */
function needsLab(file: string): boolean {
  return file.includes('e2e') && /openstack|^translator/.test(basename(file));
}

/**
 * Runs a set of files in one node test runner, `concurrency` files at a time; resolves with its
 * exit status.
 */
function runLane(
  files: string[],
  concurrency: string,
  env: NodeJS.ProcessEnv,
  children: ChildProcess[],
): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files],
      { cwd: repoRoot, env, stdio: 'inherit' },
    );
    children.push(child);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(args: string[]): Promise<number> {
  const unitOnly = args.includes('--unit');
  const explicit = args.filter((a) => !a.startsWith('--'));
  const files =
    explicit.length > 0
      ? explicit
      : [
          ...find(join(repoRoot, 'test', 'unit')),
          ...find(join(repoRoot, 'test', 'fault')),
          ...(unitOnly ? [] : find(join(repoRoot, 'test', 'e2e'))),
        ];
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
  const needsOpenStack = files.some(needsLab);
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
    // Two lanes, each its own node test runner: the files that use the OpenStack lab one at a
    // time (the translator's take 5 to 7 minutes each, mostly waiting on Neutron and Octavia),
    // and all the others two at a time beside them. One runner at three files at a time took
    // 1,059 s of a cold CI run but, with a second whole run beside it (load 12 to 16 on 2 cores),
    // both translator files talked to Neutron at once and it answered so slowly that a
    // convergence outlasted its safety net; at two at a time the translator files held both
    // places for their 5 to 7 minutes.
    const concurrency = process.env.RAVEN_TEST_CONCURRENCY ?? '2';
    const labFiles = files.filter(needsLab);
    const otherFiles = files.filter((f) => !needsLab(f));
    const children: ChildProcess[] = [];
    const forward = (signal: NodeJS.Signals): void => {
      for (const child of children) child.kill(signal);
    };
    process.on('SIGINT', forward).on('SIGTERM', forward);
    const lanes = [
      { name: 'OpenStack files, one at a time', files: labFiles, concurrency: '1' },
      { name: `other files, ${concurrency} at a time`, files: otherFiles, concurrency },
    ].filter((lane) => lane.files.length > 0);
    const statuses = await Promise.all(
      lanes.map((lane) => runLane(lane.files, lane.concurrency, env, children)),
    );
    lanes.forEach((lane, i) =>
      process.stderr.write(`test: ${lane.files.length} ${lane.name}: exit ${statuses[i]}\n`),
    );
    return statuses.find((status) => status !== 0) ?? 0;
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
