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
 * run one at a time beside the other files (RAVEN_TEST_CONCURRENCY of them at a time, default 2).
 * Each file's output is printed whole when it ends, then a summary.
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

interface FileRun {
  file: string;
  code: number;
  output: string;
  seconds: number;
  counts: Record<'pass' | 'fail' | 'skipped', number>;
}

/** Run one test file in node's test runner; its output is kept and returned with its counts. */
function runFile(file: string, env: NodeJS.ProcessEnv, children: Set<ChildProcess>): Promise<FileRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', (code, signal) => {
      children.delete(child);
      const output = Buffer.concat(chunks).toString('utf8');
      const count = (name: string): number =>
        Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? 0);
      resolve({
        file,
        code: code ?? (signal ? 1 : 0),
        output,
        seconds: (Date.now() - started) / 1000,
        counts: { pass: count('pass'), fail: count('fail'), skipped: count('skipped') },
      });
    });
  });
}

/**
 * Run `files` in order, `slots` at a time, never two that use the OpenStack lab at once; each
 * file's output is printed whole when it ends. Resolves with every file's run.
 */
function schedule(
  files: string[],
  slots: number,
  run: (file: string) => Promise<FileRun>,
  stopped: () => boolean,
): Promise<FileRun[]> {
  const pending = [...files];
  const done: FileRun[] = [];
  let running = 0;
  let labBusy = false;
  return new Promise((resolve) => {
    const pump = (): void => {
      while (running < slots && !stopped()) {
        const i = pending.findIndex((f) => !(labBusy && needsLab(f)));
        if (i < 0) break;
        const [file] = pending.splice(i, 1) as [string];
        const lab = needsLab(file);
        if (lab) labBusy = true;
        running++;
        void run(file).then((result) => {
          running--;
          if (lab) labBusy = false;
          done.push(result);
          const { pass, fail, skipped } = result.counts;
          process.stdout.write(
            `\n# test: ${file} ${result.code === 0 ? 'passed' : `FAILED (exit ${result.code})`} in ` +
              `${result.seconds.toFixed(0)} s: ${pass} passed, ${fail} failed, ${skipped} skipped\n${result.output}`,
          );
          pump();
        });
      }
      if (running === 0 && (pending.length === 0 || stopped())) resolve(done);
    };
    pump();
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
    // Each file in a test runner of its own, as slots free up: RAVEN_TEST_CONCURRENCY files at
    // a time (default 2) and, beside them, the files that use the OpenStack lab one at a time
    // (or, once none is left, one more of the others). Two translator files at once, with a
    // second whole run beside them (load 12 to 16 on 2 cores), made Neutron answer so slowly
    // that a convergence outlasted its safety net. End-to-end files go first, the OpenStack
    // lab's first of all: the longest files must not start last.
    const concurrency = Number(process.env.RAVEN_TEST_CONCURRENCY ?? '2');
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new Error(
        `RAVEN_TEST_CONCURRENCY: expected a whole number of at least 1, got ${process.env.RAVEN_TEST_CONCURRENCY}`,
      );
    const ordered = [
      ...files.filter(needsLab),
      ...files.filter((f) => !needsLab(f) && f.includes('e2e')),
      ...files.filter((f) => !f.includes('e2e')),
    ];
    const children = new Set<ChildProcess>();
    const state = { interrupted: false };
    const forward = (signal: NodeJS.Signals): void => {
      state.interrupted = true;
      for (const child of children) child.kill(signal);
    };
    process.on('SIGINT', forward).on('SIGTERM', forward);
    const started = Date.now();
    const runs = await schedule(
      ordered,
      concurrency + (ordered.some(needsLab) ? 1 : 0),
      (file) => runFile(file, env, children),
      () => state.interrupted,
    );
    const total = (name: keyof FileRun['counts']): number => runs.reduce((sum, r) => sum + r.counts[name], 0);
    const failed = runs.filter((r) => r.code !== 0);
    process.stdout.write(
      `\n# test: ${runs.length} of ${ordered.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s: ` +
        `${total('pass')} tests passed, ${total('fail')} failed, ${total('skipped')} skipped\n` +
        failed.map((r) => `# test: FAILED ${r.file}\n`).join(''),
    );
    return failed.length > 0 || state.interrupted || runs.length < ordered.length ? 1 : 0;
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
