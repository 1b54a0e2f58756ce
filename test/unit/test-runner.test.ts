/**
 * scripts/test.ts bounds every file: one still running after RAVEN_TEST_FILE_TIMEOUT_S is killed,
 * fails the run, and its output names the tests that had started and not finished. Run here on a
 * file made to hang, in a temporary folder; the timeout is the setting under test, not a measure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

/**
 * The file's timeout, counted from the runner's start: long enough for tsx to load the file and
 * start its tests on a loaded machine (2 s was not, at load 13), so that the hang is what it hits.
 */
const TIMEOUT_S = 20;

const HANGING = `import { test } from 'node:test';
test('finishes', () => undefined);
// The interval keeps the process alive: without it node would end the test as unresolvable.
test('never ends', () => new Promise(() => setInterval(() => undefined, 1000)));
`;

/** This process's environment, less what marks it as a file inside node's test runner. */
function runnerEnv(): NodeJS.ProcessEnv {
  // Set for a file node's test runner runs; a runner started with it runs nothing ("called recursively").
  const { NODE_TEST_CONTEXT: _inRunner, ...env } = process.env;
  return { ...env, RAVEN_TEST_FILE_TIMEOUT_S: String(TIMEOUT_S) };
}

function runTests(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'test.ts'), file], {
      cwd: root,
      env: runnerEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/** The pids of the processes whose command line names `file` (read from /proc). */
async function processesRunning(file: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(file)) pids.push(Number(entry));
  }
  return pids;
}

test('a file that hangs is killed after its timeout, fails the run and names the test that hung', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-test-runner-'));
  try {
    const file = join(dir, 'hangs.test.ts');
    await writeFile(file, HANGING);
    const { code, output } = await runTests(file);
    assert.equal(code, 1, output);
    assert.match(output, /# test: .*hangs\.test\.ts FAILED \(exit 1\)/);
    assert.match(
      output,
      new RegExp(
        `still running after ${TIMEOUT_S} s \\(RAVEN_TEST_FILE_TIMEOUT_S\\), killed; unfinished: "never ends"\n`,
      ),
    );
    assert.match(output, /^ok 1 - finishes$/m, 'what finished before the hang is kept');
    assert.match(output, /# test: FAILED .*hangs\.test\.ts/);
    assert.deepEqual(await processesRunning(file), [], 'no process of the hung file outlives the run');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
