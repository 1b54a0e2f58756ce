/**
 * The README's "A 60-second tour", run the way a user runs it. The TypeScript block is read from
 * README.md at test time (so the test follows the README, and fails when the README drifts),
 * compiled with tsc against the built package (dist/: a temporary directory whose
 * node_modules/kube-raven is a symlink to this repository, so `import ... from 'kube-raven'` is
 * left exactly as written), and run with plain `node` as a child process: a script with a
 * top-level await and nothing else holding its event loop, with KUBECONFIG pointing at the
 * cluster.
 *
 * Needs `npm run build` first (`npm test` builds before testing).
 */
import { before, after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, privateCluster, sharedCluster } from '../harness/test-cluster.js';

const root = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/**
 * Safety nets only: how long a wait may take before the test gives up with what it saw. They are
 * far above what a passing run needs on a loaded machine; no pass is decided by them.
 */
const GIVE_UP_MS = 90_000;
/** The goal for "server ready" to "change seen" after an outage; reported, not asserted. */
const GOAL_MS = 5_000;

/** The TypeScript block of the README's "A 60-second tour" section, verbatim. */
async function tourBlock(): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## A 60-second tour\n');
  assert.ok(start >= 0, 'README.md has no "## A 60-second tour" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(section)?.[1];
  assert.ok(block !== undefined, 'the tour section has no ```ts block');
  return `${block}\n`;
}

/** The tour with an invalid field selector: the only edit is one option added to watchResource. */
function withInvalidFieldSelector(tour: string): string {
  const edited = tour.replace('watchResource({ ', "watchResource({ fieldSelector: 'spec.foo=bar', ");
  assert.notEqual(edited, tour, 'the tour no longer calls watchResource({ ... }) as this test expects');
  return edited;
}

let dir: string;
let scripts: { tour: string; invalidSelector: string };

before(async () => {
  assert.ok(existsSync(join(root, 'dist', 'index.js')), 'dist/ is missing: run `npm run build` first');
  dir = await mkdtemp(join(tmpdir(), 'raven-readme-tour-'));
  await mkdir(join(dir, 'node_modules'));
  await symlink(root, join(dir, 'node_modules', 'kube-raven'), 'dir');
  const tour = await tourBlock();
  await writeFile(join(dir, 'tour.mts'), tour);
  await writeFile(join(dir, 'tour-invalid-selector.mts'), withInvalidFieldSelector(tour));
  // Strict, against the package's published types (dist/*.d.ts); Node's types as a user has them.
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        rootDir: '.',
        outDir: 'out',
      },
      files: ['tour.mts', 'tour-invalid-selector.mts'],
    }),
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).catch((err: unknown) => {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    assert.fail(`the README tour does not compile:\n${stdout}${stderr}\n--- tour.mts ---\n${tour}`);
  });
  scripts = {
    tour: join(dir, 'out', 'tour.mjs'),
    invalidSelector: join(dir, 'out', 'tour-invalid-selector.mjs'),
  };
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Script {
  lines: string[];
  stderr: () => string;
  /** The exit code (or signal name) once it has ended; undefined while it runs. */
  ended: () => number | string | undefined;
  /** Resolves once a line matching `pattern` has been printed or the script has ended. */
  waitForLine: (pattern: RegExp) => Promise<string | undefined>;
  /** Everything it printed, for failure messages. */
  output: () => string;
}

/** Run a compiled script with plain node, as a user would: no loader, nothing else in the process. */
function startScript(t: TestContext, path: string, kubeconfig: string): Script {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig };
  // What the test runner passes to its own children is not the user's environment.
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, [path], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buffer = '';
  let errText = '';
  let ended: number | string | undefined;
  const changed = new EventTarget();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts);
    changed.dispatchEvent(new Event('change'));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errText += chunk));
  // 'close', not 'exit': the script's last output may still be in the pipes when it has exited.
  child.on('close', (code, signal) => {
    ended = code ?? signal ?? 'unknown';
    changed.dispatchEvent(new Event('change'));
  });
  const kill = (): void => {
    if (ended === undefined) child.kill('SIGKILL');
  };
  // A failed assertion must not leave the script running behind the test.
  process.once('exit', kill);
  t.after(() => {
    process.off('exit', kill);
    kill();
  });
  const waitForLine = (pattern: RegExp): Promise<string | undefined> =>
    new Promise((done) => {
      const check = (): void => {
        const found = lines.find((l) => pattern.test(l));
        if (found === undefined && ended === undefined) return;
        changed.removeEventListener('change', check);
        done(found);
      };
      changed.addEventListener('change', check);
      check();
    });
  const output = (): string =>
    `exit: ${ended ?? 'still running'}\nstdout:\n${[...lines, buffer].join('\n')}\nstderr:\n${errText}`;
  return { lines, stderr: () => errText, ended: () => ended, waitForLine, output };
}

/** `promise`, or a failure naming `what` and the script's output after the safety net. */
async function within<T>(what: string, script: Script, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: nothing after ${GIVE_UP_MS / 1000} s\n${script.output()}`)),
      GIVE_UP_MS,
    );
  });
  try {
    return await Promise.race([promise, giveUp]);
  } finally {
    clearTimeout(timer);
  }
}

async function createPod(plane: ControlPlane, namespace: string, name: string): Promise<void> {
  const { status, body } = await plane.adminRequest('POST', `/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name },
    // Stored, never run: the test cluster has no kubelet.
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app' }] },
  });
  assert.equal(status, 201, `creating pod ${namespace}/${name}: ${body}`);
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('the README tour, run as a plain node script, keeps watching through a 20 s apiserver outage and prints a pod created afterwards', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  const namespace = await freshNamespace(plane, 'team');
  await createPod(plane, namespace, 'before');
  const script = startScript(t, scripts.tour, plane.kubeconfig);

  // Watching once a pod created now is printed as added (one created while it still lists would be
  // part of the list, which the tour does not print): create probes until one shows up.
  const watching = (async () => {
    for (let i = 0; script.ended() === undefined; i++) {
      await createPod(plane, namespace, `probe-${i}`);
      const seen = await Promise.race([
        script.waitForLine(/^probe-\d+ added$/),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000)),
      ]);
      if (seen !== undefined) return;
    }
  })();
  await within('waiting for the tour to print an added pod', script, watching);
  assert.equal(script.ended(), undefined, `the tour ended before the outage\n${script.output()}`);

  const outageStarted = Date.now();
  await plane.restartApiserver({ downMs: 20_000 });
  t.diagnostic(`apiserver down and back ready in ${((Date.now() - outageStarted) / 1000).toFixed(1)} s`);
  assert.equal(
    script.ended(),
    undefined,
    `the tour must still be running after the apiserver came back\n${script.output()}`,
  );

  // From the start of the create request: the event may reach the script before the answer reaches us.
  const created = Date.now();
  await createPod(plane, namespace, 'after');
  const line = await within('waiting for "after added"', script, script.waitForLine(/^after added$/));
  const seenMs = Date.now() - created;
  assert.equal(
    line,
    'after added',
    `the tour never printed the pod created after the outage\n${script.output()}`,
  );
  t.diagnostic(
    `pod created after the outage seen in ${(seenMs / 1000).toFixed(2)} s (goal ≤ ${GOAL_MS / 1000} s)`,
  );
  if (seenMs > GOAL_MS)
    process.stderr.write(`readme tour: seen ${seenMs} ms after creation, above the goal\n`);
  assert.equal(script.ended(), undefined, `the tour ended after printing\n${script.output()}`);
});

test('the README tour with an invalid field selector keeps running, or ends non-zero with the apiserver message', async (t) => {
  const plane = await sharedCluster();
  const namespace = await freshNamespace(plane, 'team');
  t.after(() => deleteNamespace(plane, namespace));
  // What the apiserver says about this selector, asked directly, so the test does not hard-code it.
  const direct = await plane.adminRequest('GET', '/api/v1/pods?fieldSelector=spec.foo%3Dbar');
  assert.equal(direct.status, 400, `expected the apiserver to refuse spec.foo=bar: ${direct.body}`);
  const serverMessage = (JSON.parse(direct.body) as { message: string }).message;

  const script = startScript(t, scripts.invalidSelector, plane.kubeconfig);
  // The tour prints error events ("recovering: ..."); wait until the refusal reached it (or it
  // ended), then give it ten more seconds to end by itself.
  await within('waiting for the tour to meet the refusal', script, script.waitForLine(/^recovering:/));
  await new Promise((r) => setTimeout(r, 10_000));

  const ended = script.ended();
  if (ended === undefined) {
    const errors = script.lines.filter((l) => l.startsWith('recovering:'));
    t.diagnostic(
      `still running 10 s after the refusal; ${errors.length} error line(s), the last: ${errors.at(-1)}`,
    );
    return;
  }
  assert.ok(
    ended !== 0 && ended !== 13,
    `the tour ended with status ${ended}: a watch must not end silently (0) nor as an unsettled await (13)\n${script.output()}`,
  );
  assert.match(
    script.stderr(),
    new RegExp(escape(serverMessage)),
    `the tour ended (${ended}) without the apiserver's message on stderr\n${script.output()}`,
  );
});
