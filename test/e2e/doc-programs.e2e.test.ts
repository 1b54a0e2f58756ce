/**
 * Every documented program runs as written. A fenced block marked ```ts program (or js / mjs) in
 * README.md or docs/*.md is a whole program: it is read from the document at test time, compiled
 * with tsc against the built package (a temporary project whose node_modules/kube-raven is a
 * symlink to this repository, so `from 'kube-raven'` stays as written) and run with plain `node`,
 * KUBECONFIG pointing at the real apiserver. A program passes when it prints a ConfigMap the test
 * created after it started (the programs watch ConfigMaps in every namespace), is still running
 * then, and exits 0 on SIGINT. Compiling is not enough: a program that never starts its
 * informers compiles and ends without a word.
 *
 * Beside them, two user mistakes as processes: an `onEvents` handler that takes the event where it
 * gets the object (its TypeError is reported on stderr and the watch goes on), and a controller
 * whose informers were never started (it ends non-zero with ERR_NOT_STARTED, not 0 or 13).
 *
 * Needs `npm run build` first.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

const root = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** A safety net only: how long a wait may take before the test fails with what it saw. */
const GIVE_UP_MS = 120_000;

interface Program {
  where: string;
  file: string;
  code: string;
}

async function documentedPrograms(): Promise<Program[]> {
  const docs = ['README.md', ...(await readdir(join(root, 'docs'))).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith('.md'),
  );
  const programs: Program[] = [];
  for (const doc of docs) {
    const text = await readFile(join(root, doc), 'utf8');
    for (const match of text.matchAll(/^```(ts|js|mjs) program\n([\s\S]*?)^```/gm)) {
      const line = text.slice(0, match.index).split('\n').length;
      const ext = match[1] === 'ts' ? 'mts' : 'mjs';
      programs.push({
        where: `${doc}:${line}`,
        file: `program-${programs.length}.${ext}`,
        code: match[2] ?? '',
      });
    }
  }
  return programs;
}

/** The mistake of docs/watch.md: the handler takes the event, but is given the object. */
const HANDLER_MISTAKE = `import { loadConfig, KubeClient, Discovery, watchResource, onEvents } from 'kube-raven';
const client = new KubeClient(await loadConfig());
const configMaps = await new Discovery(client).resolve('cm');
await onEvents(watchResource({ transport: client, resource: configMaps }), {
  added: (event) => console.log('added', event.object.metadata.name),
  modified: (cm) => console.log('modified', cm.metadata?.name),
});
`;

/** docs/controllers.md's controller without informers.start(signal). */
const NEVER_STARTED = `import { loadConfig, KubeClient, Discovery, SharedInformers, Controller, done } from 'kube-raven';
const client = new KubeClient(await loadConfig());
const configMaps = await new Discovery(client).resolve('cm');
const informers = new SharedInformers({ transport: client });
const cms = informers.informerFor({ resource: configMaps });
const controller = new Controller({ name: 'forgetful', primary: cms, reconcile: async () => done() });
console.log('starting');
await controller.run(new AbortController().signal);
`;

let dir: string;
let programs: Program[];

before(async () => {
  assert.ok(existsSync(join(root, 'dist', 'index.js')), 'dist/ is missing: run `npm run build` first');
  programs = await documentedPrograms();
  dir = await mkdtemp(join(tmpdir(), 'raven-doc-programs-'));
  await mkdir(join(dir, 'node_modules'));
  await symlink(root, join(dir, 'node_modules', 'kube-raven'), 'dir');
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  for (const p of programs) await writeFile(join(dir, p.file), p.code);
  await writeFile(join(dir, 'handler-mistake.mjs'), HANDLER_MISTAKE);
  await writeFile(join(dir, 'never-started.mjs'), NEVER_STARTED);
  const typescript = programs.filter((p) => p.file.endsWith('.mts'));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        rootDir: '.',
        outDir: '.',
      },
      files: typescript.map((p) => p.file),
    }),
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (typescript.length > 0)
    await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).catch((err: unknown) => {
      const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
      assert.fail(`a documented program does not compile:\n${stdout}${stderr}`);
    });
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Script {
  stdout: () => string;
  stderr: () => string;
  ended: () => number | string | undefined;
  /** Resolves once `done()` holds or the script has ended. */
  until: (done: () => boolean) => Promise<void>;
  signal: (name: NodeJS.Signals) => void;
  output: () => string;
}

/** Run a script with plain node, as a user would: no loader, the test runner's variables removed. */
function startScript(t: TestContext, file: string, kubeconfig: string): Script {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig };
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, [file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let ended: number | string | undefined;
  const changed = new EventTarget();
  const note = (): boolean => changed.dispatchEvent(new Event('change'));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => ((out += chunk), note()));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => ((err += chunk), note()));
  child.on('close', (code, signal) => {
    ended = code ?? signal ?? 'unknown';
    note();
  });
  const kill = (): void => {
    if (ended === undefined) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  t.after(() => {
    process.off('exit', kill);
    kill();
  });
  const output = (): string => `exit: ${ended ?? 'still running'}\nstdout:\n${out}\nstderr:\n${err}`;
  const until = (done: () => boolean): Promise<void> =>
    new Promise((settle, reject) => {
      const timer = setTimeout(() => {
        changed.removeEventListener('change', check);
        reject(new Error(`nothing after ${GIVE_UP_MS / 1000} s\n${output()}`));
      }, GIVE_UP_MS);
      function check(): void {
        if (!done() && ended === undefined) return;
        clearTimeout(timer);
        changed.removeEventListener('change', check);
        settle();
      }
      changed.addEventListener('change', check);
      check();
    });
  return {
    stdout: () => out,
    stderr: () => err,
    ended: () => ended,
    until,
    signal: (name) => {
      if (ended === undefined) child.kill(name);
    },
    output,
  };
}

async function createConfigMap(plane: ControlPlane, namespace: string, name: string): Promise<void> {
  const { status, body } = await plane.adminRequest('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    metadata: { name },
    data: { made: 'by the test' },
  });
  assert.equal(status, 201, `creating configmap ${namespace}/${name}: ${body}`);
}

/**
 * Create ConfigMaps named `<prefix>-<n>` until `seen(output)` holds or the script ends: one made
 * while the script still lists is part of its initial list, which a program may not print.
 */
async function probeUntil(
  plane: ControlPlane,
  namespace: string,
  script: Script,
  seen: () => boolean,
): Promise<void> {
  const probing = (async () => {
    for (let i = 0; !seen() && script.ended() === undefined; i++) {
      await createConfigMap(plane, namespace, `probe-${i}`);
      await Promise.race([script.until(seen), new Promise((r) => setTimeout(r, 1000))]);
    }
  })();
  await Promise.all([probing, script.until(seen)]);
}

test('the documents hold at least two programs (docs/controllers.md, docs/watch.md)', () => {
  const where = programs.map((p) => p.where.split(':')[0]);
  assert.ok(where.includes('docs/controllers.md'), where.join(', '));
  assert.ok(where.includes('docs/watch.md'), where.join(', '));
});

test('every documented program runs as written: it prints a ConfigMap created after it started and exits 0 on SIGINT', async (t) => {
  const plane = await sharedCluster();
  for (const program of programs) {
    await t.test(program.where, async (t) => {
      const namespace = await freshNamespace(plane, 'docs');
      t.after(() => deleteNamespace(plane, namespace));
      const script = startScript(t, join(dir, program.file.replace(/\.mts$/, '.mjs')), plane.kubeconfig);
      const printed = (): boolean => /probe-\d+/.test(script.stdout());
      await probeUntil(plane, namespace, script, printed);
      assert.ok(
        printed(),
        `${program.where} printed no ConfigMap created after it started\n${script.output()}`,
      );
      assert.equal(script.ended(), undefined, `${program.where} ended by itself\n${script.output()}`);
      script.signal('SIGINT');
      await script.until(() => false);
      assert.equal(script.ended(), 0, `${program.where} did not exit 0 on SIGINT\n${script.output()}`);
    });
  }
});

test('an onEvents handler that throws is reported on stderr with its TypeError, and the watch goes on', async (t) => {
  const plane = await sharedCluster();
  const namespace = await freshNamespace(plane, 'docs');
  t.after(() => deleteNamespace(plane, namespace));
  const script = startScript(t, join(dir, 'handler-mistake.mjs'), plane.kubeconfig);
  const reported = (): boolean => /the added handler failed/.test(script.stderr());
  await probeUntil(plane, namespace, script, reported);
  assert.ok(reported(), `the failure was not reported on stderr\n${script.output()}`);
  assert.match(script.stderr(), /raven error: the added handler failed; the watch goes on \(event=added\)/);
  assert.match(script.stderr(), /TypeError: Cannot read properties of undefined \(reading 'metadata'\)/);
  assert.match(script.stderr(), /handler-mistake\.mjs:5/, 'the stack points at the handler');
  // The watch went on: a change to the same ConfigMap still reaches the next handler.
  const name = /probe-\d+/.exec(script.stderr()) ?? ['probe-0'];
  const { status } = await plane.adminRequest(
    'PATCH',
    `/api/v1/namespaces/${namespace}/configmaps/${name[0]}`,
    { data: { changed: 'yes' } },
    'application/merge-patch+json',
  );
  assert.equal(status, 200);
  await script.until(() => /^modified probe-\d+$/m.test(script.stdout()));
  assert.match(script.stdout(), /^modified probe-\d+$/m, script.output());
  assert.equal(script.ended(), undefined, script.output());
});

test('a controller whose informers were never started ends non-zero with ERR_NOT_STARTED on stderr', async (t) => {
  const plane = await sharedCluster();
  const script = startScript(t, join(dir, 'never-started.mjs'), plane.kubeconfig);
  await script.until(() => false);
  const ended = script.ended();
  assert.ok(ended !== 0 && ended !== 13, `it ended with ${ended}\n${script.output()}`);
  assert.match(script.stderr(), /ERR_NOT_STARTED/, script.output());
  assert.match(
    script.stderr(),
    /controller forgetful: the informer \S+ was never started.*call informers\.start\(signal\)/,
    script.output(),
  );
});
