/**
 * Every documented program runs as written. A fenced block marked ```ts program (or js / mjs) in
 * README.md or docs/*.md is a whole program: it is read from the document at test time, compiled
 * with tsc against the built package (a temporary project whose node_modules/kube-raven is a
 * symlink to this repository, so `from 'kube-raven'` stays as written) and run with plain `node`,
 * KUBECONFIG pointing at the real apiserver (a copy of the test's kubeconfig with one more context,
 * `dev`, for docs/client.md). Each program has a scenario below: what it must print (for a watch,
 * about an object the test creates after it started, one more each second until it is printed),
 * and how it ends: by itself with status 0, or still running until the test stops it with SIGINT,
 * then with status 0 when it handles Ctrl-C or by the signal when it leaves that to Node. Nothing
 * may be written to stderr. A program without a scenario fails the test. Compiling is not enough:
 * a program that never starts its informers compiles and ends without a word.
 *
 * The README's tour (a ```ts and a ```mjs block) is run by readme-tour.e2e and package-tour.e2e.
 *
 * Beside them, user mistakes as processes: an `onEvents` handler that takes the event where it
 * gets the object (its TypeError is reported on stderr and the watch goes on), a controller
 * whose informers were never started (it ends non-zero with ERR_NOT_STARTED, not 0 or 13), and
 * an informer handler and a reconcile that throw (each reported on stderr, the reconcile once
 * however often it is retried).
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
import { parse, stringify } from 'yaml';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

const root = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** A safety net only: how long a wait may take before the test fails with what it saw. */
const GIVE_UP_MS = 120_000;

interface Program {
  where: string;
  /** `docs/watch.md#2`: the document and the program's place among its programs. */
  id: string;
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
    let n = 0;
    for (const match of text.matchAll(/^```(ts|js|mjs) program\n([\s\S]*?)^```/gm)) {
      const line = text.slice(0, match.index).split('\n').length;
      const ext = match[1] === 'ts' ? 'mts' : 'mjs';
      programs.push({
        where: `${doc}:${line}`,
        id: `${doc}#${++n}`,
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

/**
 * The same two mistakes one layer up: an informer handler that takes the event where it gets the
 * object, and a reconcile that reads a field of a ConfigMap that has none (a TypeError at every
 * retry). Each reconcile of a probe prints a line, so the test can wait for the retries.
 */
const INFORMER_MISTAKES = `import { loadConfig, KubeClient, Discovery, SharedInformers, Controller, done } from 'kube-raven';
const client = new KubeClient(await loadConfig());
const configMaps = await new Discovery(client).resolve('cm');
const informers = new SharedInformers({ transport: client });
const cms = informers.informerFor({ resource: configMaps });
cms.addEventHandler({ add: (event) => console.log('added', event.object.metadata.name) });
const controller = new Controller({
  name: 'careless',
  primary: cms,
  reconcile: async (key) => {
    if (!key.includes('/probe-')) return done();
    console.log('reconcile', key);
    return cms.store.get(key).spec.replicas > 1 ? done() : done();
  },
});
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
informers.start(stop.signal);
await controller.run(stop.signal);
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
  await writeFile(join(dir, 'informer-mistakes.mjs'), INFORMER_MISTAKES);
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
function startScript(
  t: TestContext,
  file: string,
  kubeconfig: string,
  extra: NodeJS.ProcessEnv = {},
): Script {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, ...extra };
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
 * Make objects named `probe-<n>` until `seen()` holds or the script ends: one made while the
 * script still lists is part of its initial list, which a program may not print.
 */
async function probeUntil(
  script: Script,
  seen: () => boolean,
  make: (name: string) => Promise<void>,
): Promise<void> {
  const probing = (async () => {
    for (let i = 0; !seen() && script.ended() === undefined; i++) {
      await make(`probe-${i}`);
      await Promise.race([script.until(seen), new Promise((r) => setTimeout(r, 1000))]);
    }
  })();
  await Promise.all([probing, script.until(seen)]);
}

/** What a documented program must do, and how the test drives it. */
interface Scenario {
  /** The namespace the test makes for it (`freshNamespace`'s prefix): a watch's filter may need one. */
  prefix?: string;
  /** Before it starts: objects it must find, namespaces it needs. */
  setup?: (plane: ControlPlane, namespace: string, t: TestContext) => Promise<void>;
  /** Make an object named `name` it must see; called again with another name until it prints. */
  make?: (plane: ControlPlane, namespace: string, name: string, t: TestContext) => Promise<void>;
  /** Its output once it works. */
  prints: RegExp[];
  /** `'by itself'`: ends with 0 after printing; else stopped with SIGINT, ending with this status or signal. */
  ends: 'by itself' | 0 | 'SIGINT';
  env?: NodeJS.ProcessEnv;
}

async function create(plane: ControlPlane, path: string, body: unknown, ok = [201]): Promise<void> {
  const { status, body: answer } = await plane.adminRequest('POST', path, body);
  assert.ok(ok.includes(status), `POST ${path}: ${status} ${answer}`);
}

function pod(name: string, labels: Record<string, string> = {}): unknown {
  return { metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } };
}

/** A ConfigMap in the test's namespace: the programs that watch ConfigMaps everywhere print it. */
const configMapWatch: Scenario = {
  make: (plane, namespace, name) => createConfigMap(plane, namespace, name),
  prints: [/probe-\d+/],
  ends: 0,
};

/** A pod in the test's namespace, printed as `mine: <name>` when it falls in the program's shard. */
const shardedPodWatch: Scenario = {
  make: (plane, namespace, name) => create(plane, `/api/v1/namespaces/${namespace}/pods`, pod(name)),
  prints: [/^mine: probe-\d+$/m],
  ends: 'SIGINT',
};

const NAME = `docs-${process.pid}`;

const SCENARIOS: Record<string, Scenario> = {
  'docs/controllers.md#1': configMapWatch,
  'docs/watch.md#2': configMapWatch,
  // Pods labelled app=web in a team-* namespace.
  'docs/watch.md#1': {
    prefix: 'team-docs',
    make: (plane, namespace, name) =>
      create(plane, `/api/v1/namespaces/${namespace}/pods`, pod(name, { app: 'web' })),
    prints: [/^synced$/m, /^added probe-\d+$/m],
    ends: 0,
  },
  // The client-node informer on namespace default.
  'docs/migrating-from-client-node.md#1': {
    make: async (plane, _namespace, name, t) => {
      await create(plane, '/api/v1/namespaces/default/pods', pod(`${NAME}-${name}`));
      t.after(() => plane.adminRequest('DELETE', `/api/v1/namespaces/default/pods/${NAME}-${name}`));
    },
    prints: [new RegExp(`^Added: ${NAME}-probe-\\d+$`, 'm')],
    ends: 'SIGINT',
  },
  // Context dev, the Deployments of namespace web, then it ends.
  'docs/client.md#1': {
    setup: async (plane, _namespace, t) => {
      await create(plane, '/api/v1/namespaces', { metadata: { name: 'web' } }, [201, 409]);
      await create(plane, '/apis/apps/v1/namespaces/web/deployments', {
        metadata: { name: NAME },
        spec: {
          selector: { matchLabels: { app: NAME } },
          template: {
            metadata: { labels: { app: NAME } },
            spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
          },
        },
      });
      t.after(() => plane.adminRequest('DELETE', `/apis/apps/v1/namespaces/web/deployments/${NAME}`));
    },
    prints: [/^kubeconfig \(KUBECONFIG: \S+\), context "dev"$/m, new RegExp(`^${NAME}$`, 'm')],
    ends: 'by itself',
  },
  'docs/scaling.md#1': shardedPodWatch,
  'docs/scaling.md#2': shardedPodWatch,
  // A member of lease group raven-shards in namespace raven: it owns ranges once it has joined.
  'docs/scaling.md#3': {
    setup: (plane) => create(plane, '/api/v1/namespaces', { metadata: { name: 'raven' } }, [201, 409]),
    prints: [/^watching [1-9]\d* ranges$/m],
    ends: 0,
    env: { POD_NAME: NAME },
  },
};

/** The test's kubeconfig with a context `dev` beside its own (docs/client.md loads that one). */
async function kubeconfigWithDev(plane: ControlPlane): Promise<string> {
  const config = parse(await readFile(plane.kubeconfig, 'utf8')) as {
    contexts: { name: string; context: Record<string, string> }[];
  };
  const own = config.contexts.find((c) => c.name === 'raven-local');
  assert.ok(own !== undefined, 'the test kubeconfig has no context raven-local');
  config.contexts.push({ name: 'dev', context: { ...own.context, namespace: 'web' } });
  const file = join(dir, 'kubeconfig');
  await writeFile(file, stringify(config));
  return file;
}

test('the documents hold programs, each with a scenario', () => {
  const ids = programs.map((p) => p.id);
  assert.ok(ids.includes('docs/controllers.md#1'), ids.join(', '));
  assert.ok(ids.includes('docs/watch.md#1'), ids.join(', '));
  assert.deepEqual(
    ids.filter((id) => SCENARIOS[id] === undefined),
    [],
    'a documented program needs a scenario in this test',
  );
  assert.deepEqual(
    Object.keys(SCENARIOS).filter((id) => !ids.includes(id)),
    [],
    'a scenario names no documented program (renumbered or unmarked?)',
  );
});

test('every documented program runs as written: it prints what it is for, says nothing on stderr and ends as it should', async (t) => {
  const plane = await sharedCluster();
  const kubeconfig = await kubeconfigWithDev(plane);
  for (const program of programs) {
    const scenario = SCENARIOS[program.id];
    if (scenario === undefined) continue; // the test above fails
    await t.test(`${program.id} (${program.where})`, async (t) => {
      const namespace = await freshNamespace(plane, scenario.prefix ?? 'docs');
      t.after(() => deleteNamespace(plane, namespace));
      await scenario.setup?.(plane, namespace, t);
      const script = startScript(
        t,
        join(dir, program.file.replace(/\.mts$/, '.mjs')),
        kubeconfig,
        scenario.env,
      );
      const printed = (): boolean => scenario.prints.every((line) => line.test(script.stdout()));
      const make = scenario.make;
      if (make === undefined) await script.until(printed);
      else await probeUntil(script, printed, (name) => make(plane, namespace, name, t));
      assert.ok(
        printed(),
        `${program.where} did not print ${scenario.prints.join(' and ')}\n${script.output()}`,
      );
      if (scenario.ends === 'by itself') {
        await script.until(() => false);
        assert.equal(script.ended(), 0, `${program.where} did not end with 0\n${script.output()}`);
      } else {
        assert.equal(script.ended(), undefined, `${program.where} ended by itself\n${script.output()}`);
        script.signal('SIGINT');
        await script.until(() => false);
        assert.equal(
          script.ended(),
          scenario.ends,
          `${program.where} did not end with ${scenario.ends} on SIGINT\n${script.output()}`,
        );
      }
      assert.equal(script.stderr(), '', `${program.where} wrote to stderr\n${script.output()}`);
    });
  }
});

test('an onEvents handler that throws is reported on stderr with its TypeError, and the watch goes on', async (t) => {
  const plane = await sharedCluster();
  const namespace = await freshNamespace(plane, 'docs');
  t.after(() => deleteNamespace(plane, namespace));
  const script = startScript(t, join(dir, 'handler-mistake.mjs'), plane.kubeconfig);
  const reported = (): boolean => /the added handler failed/.test(script.stderr());
  await probeUntil(script, reported, (name) => createConfigMap(plane, namespace, name));
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

test('an informer handler that throws and a reconcile that throws are reported on stderr, the reconcile once for all its retries', async (t) => {
  const plane = await sharedCluster();
  const namespace = await freshNamespace(plane, 'docs');
  t.after(() => deleteNamespace(plane, namespace));
  const script = startScript(t, join(dir, 'informer-mistakes.mjs'), plane.kubeconfig);
  const reconciles = (): string[] =>
    script
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith(`reconcile ${namespace}/probe-`));
  // Retried with backoff (5 ms, 10, 20, ...): five reconciles of the first probe are well within a second.
  const retried = (): boolean =>
    reconciles().filter((l) => l === `reconcile ${namespace}/probe-0`).length >= 5;
  await probeUntil(script, retried, (name) => createConfigMap(plane, namespace, name));
  assert.ok(retried(), `the reconcile was not retried\n${script.output()}`);
  script.signal('SIGINT');
  await script.until(() => false);
  assert.equal(script.ended(), 0, script.output());
  const stderr = script.stderr();
  assert.match(
    stderr,
    /^raven error: the add handler failed; the informer goes on \(informer=[^\n]*, event=add\)\n {2}TypeError: Cannot read properties of undefined \(reading 'metadata'\)\n  +at .*informer-mistakes\.mjs:6/m,
    script.output(),
  );
  const thrown = stderr.match(
    new RegExp(`^raven error: reconcile threw; .*\\(controller=careless, key=${namespace}/probe-0\\)$`, 'gm'),
  );
  assert.equal(thrown?.length, 1, `one report for all the retries of probe-0\n${script.output()}`);
  assert.match(
    stderr,
    /TypeError: Cannot read properties of undefined \(reading 'replicas'\)\n  +at .*informer-mistakes\.mjs:13/,
  );
});
