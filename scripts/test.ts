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
 *
 * Every file is bounded: one still running after RAVEN_TEST_FILE_TIMEOUT_S seconds (default 600;
 * 2400 for an end-to-end file) is killed and fails, its output ending with the tests that had
 * started and not finished
 * (scripts/test-progress-reporter.mjs). A safety net for a hang, far above any file's time on a
 * busy machine, never a measure of speed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { ensureBinaries, repoRoot } from '../test/harness/binaries.js';
import { ControlPlane } from '../test/harness/control-plane.js';
import { OpenStackLab } from '../test/harness/openstack/lab.js';

/** Where each file's progress is written while it runs (scripts/test-progress-reporter.mjs). */
const progressDir = mkdtempSync(join(tmpdir(), 'raven-test-progress-'));

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

/** The tests a progress file shows started and not ended (scripts/test-progress-reporter.mjs). */
function unfinished(progressText: string): string[] {
  const open: string[] = [];
  for (const line of progressText.split('\n')) {
    const match = /^(start|end) (\d+ .*)$/.exec(line);
    if (!match) continue;
    const key = match[2] ?? '';
    if (match[1] === 'start') open.push(key);
    else if (open.includes(key)) open.splice(open.lastIndexOf(key), 1);
  }
  return open.map((key) => key.replace(/^\d+ /, ''));
}

/** A whole number of seconds from the environment, or `fallback`. */
function seconds(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name}: expected a whole number of seconds, got ${value}`);
  return n;
}

/** Run one test file in node's test runner; its output is kept and returned with its counts. */
/** Signals a file's runner and every process it started (its group: it was spawned detached). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // the group is gone already
  }
}

function runFile(file: string, env: NodeJS.ProcessEnv, children: Set<ChildProcess>): Promise<FileRun> {
  const started = Date.now();
  const fileTimeout = seconds('RAVEN_TEST_FILE_TIMEOUT_S', file.includes('e2e') ? 2400 : 600);
  const progressFile = join(progressDir, `${basename(file)}-${started}.progress`);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const args = [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=tap',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(repoRoot, 'scripts', 'test-progress-reporter.mjs')}`,
      `--test-reporter-destination=${progressFile}`,
      file,
    ];
    // A group of its own: node's runner runs the file in a child process of its own, which a kill
    // of the runner alone would leave running (a hung file's process outlived the run).
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(child);
    let hung = false;
    // SIGKILL: the progress file is written as tests start, so nothing is lost by not asking
    const watchdog = setTimeout(() => {
      hung = true;
      killGroup(child, 'SIGKILL');
    }, fileTimeout * 1000);
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      children.delete(child);
      let output = Buffer.concat(chunks).toString('utf8');
      let progress = '';
      try {
        progress = readFileSync(progressFile, 'utf8');
        rmSync(progressFile);
      } catch {
        // no test started
      }
      const running = unfinished(progress).filter((name) => !name.endsWith(file));
      if (hung)
        output +=
          `\n# test: ${file} still running after ${fileTimeout} s (RAVEN_TEST_FILE_TIMEOUT_S), killed;` +
          ` unfinished: ${running.map((t) => JSON.stringify(t)).join(', ') || 'none started'}\n`;
      const count = (name: string): number =>
        Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? 0);
      resolve({
        file,
        code: hung ? 1 : (code ?? (signal ? 1 : 0)),
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
          // The chaos checker's CI seeds (docs/chaos.md "CI"): their own control plane and PostgreSQL.
          ...(unitOnly ? [] : find(join(repoRoot, 'test', 'chaos'))),
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
      for (const child of children) killGroup(child, signal);
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
    await rm(progressDir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`test: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
