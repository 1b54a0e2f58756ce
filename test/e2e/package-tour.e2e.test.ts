/**
 * The README's "Use it from your own project", as a user in a separate folder does it: `npm pack`
 * in this checkout, `npm install <tarball>` in a new temporary project (from npm's cache: offline
 * first, so nothing but the npm registry could ever be asked), and the README's ```mjs tour,
 * read from README.md at test time, run there with plain `node` against the real apiserver until
 * it prints a pod the test created after it started. In the same project, the CLI as the README
 * gives it: `npx raven`, `source <(npx raven completion bash)` completing `npx raven ...` with no
 * raven on PATH, and `kubectl raven watch pods` finding the installed kubectl-raven bin.
 *
 * Needs `npm run build` first (the tarball carries dist/).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { ok, startRaven, until } from './daemon-process.js';
import { packedProject, type PackedProject } from './packed-project.js';

const root = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);
/** A safety net only. */
const GIVE_UP_MS = 120_000;

async function mjsTour(): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n### Use it from your own project\n');
  assert.ok(start >= 0, 'README.md has no "### Use it from your own project" section');
  const block = /\n```mjs\n([\s\S]*?)\n```\n/.exec(readme.slice(start))?.[1];
  assert.ok(block !== undefined, 'the section has no ```mjs block');
  return `${block}\n`;
}

let own: PackedProject;
let project: string;

before(async () => {
  own = await packedProject();
  project = own.dir;
  await writeFile(join(project, 'tour.mjs'), await mjsTour());
});

after(() => own.remove());

test('the README tour as .mjs runs with node in a separate project that installed the packed tarball, and prints a pod created after it started', async (t) => {
  assert.ok(existsSync(join(project, 'node_modules', 'kube-raven', 'dist', 'index.js')), 'installed');
  const plane = await sharedCluster();
  const namespace = await freshNamespace(plane, 'team');
  t.after(() => deleteNamespace(plane, namespace));
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: plane.kubeconfig };
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['tour.mjs'], {
    cwd: project,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let ended: number | string | undefined;
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.on('close', (code, signal) => (ended = code ?? signal ?? 'unknown'));
  t.after(() => {
    if (ended === undefined) child.kill('SIGKILL');
  });
  const seen = (): boolean => /^probe-\d+ added$/m.test(out);
  const started = Date.now();
  for (let i = 0; !seen() && ended === undefined && Date.now() - started < GIVE_UP_MS; i++) {
    const { status, body } = await plane.adminRequest('POST', `/api/v1/namespaces/${namespace}/pods`, {
      metadata: { name: `probe-${i}` },
      spec: { containers: [{ name: 'app', image: 'registry.invalid/app' }] },
    });
    assert.equal(status, 201, body);
    for (let w = 0; w < 10 && !seen(); w++) await new Promise((r) => setTimeout(r, 100));
  }
  const output = `exit: ${ended ?? 'still running'}\nstdout:\n${out}\nstderr:\n${err}`;
  assert.ok(seen(), `the tour printed no pod created after it started\n${output}`);
  assert.equal(ended, undefined, `the tour ended\n${output}`);
});

test('in that project npx raven runs, source <(npx raven completion bash) completes npx raven, and kubectl raven watch pods runs the installed plugin', async (t) => {
  const plane = await sharedCluster();
  const namespace = await freshNamespace(plane, 'team');
  t.after(() => deleteNamespace(plane, namespace));
  // node, npx, bash and kubectl from the system; no raven anywhere on PATH.
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: '/usr/bin:/bin', KUBECONFIG: plane.kubeconfig };
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT;
  const get = await run('npx', ['raven', 'get', 'namespaces', 'default', '-o', 'name'], {
    cwd: project,
    env,
  });
  assert.equal(get.stdout, 'namespace/default\n');

  const complete = async (words: string[]): Promise<string[]> => {
    const script = `command -v raven && exit 4
source <(npx raven completion bash)
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_raven; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const { stdout } = await run('bash', ['-c', script], { cwd: project, env });
    return stdout.split('\n').filter((l) => l !== '');
  };
  assert.deepEqual(await complete(['npx', 'raven', 'wa']), ['watch']);
  assert.deepEqual(await complete(['npx', 'raven', 'get', 'configm']), ['configmaps']);
  assert.deepEqual(
    await complete(['npx', 'raven', 'watch', 'pods', '-n', namespace.slice(0, -1)]),
    [namespace],
    'namespaces from the cluster',
  );

  // kubectl's plugin lookup: kubectl-raven on PATH, here the project's node_modules/.bin.
  const watch = startRaven(['raven', 'watch', 'pods', '-n', namespace], {
    command: ['kubectl'],
    cwd: project,
    env: {
      PATH: `${join(project, 'node_modules', '.bin')}:/usr/bin:/bin`,
      KUBECONFIG: plane.kubeconfig,
      NODE_OPTIONS: '',
      NODE_TEST_CONTEXT: '',
    },
  });
  t.after(() => watch.kill('SIGKILL'));
  await until(
    'kubectl raven watch pods says there are none yet',
    () => watch.stderr() !== '' || watch.exitedYet(),
    {
      show: () => watch.stderr(),
    },
  );
  assert.equal(watch.stderr(), `No resources found in ${namespace} namespace.\n`);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${namespace}/pods`, {
      metadata: { name: 'web-1' },
      spec: { containers: [{ name: 'app', image: 'registry.invalid/app' }] },
    }),
  );
  await until(
    'kubectl raven watch pods prints the pod',
    () => watch.stdout.some((l) => /^ADDED\s+\d\d:\d\d:\d\d\s+web-1\s/.test(l)) || watch.exitedYet(),
    { show: () => `${watch.stdout.join('\n')}\n${watch.stderr()}` },
  );
  assert.match(watch.stdout[0] ?? '', /^EVENT\s+TIME\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
  watch.kill('SIGINT');
  const exit = await watch.exited;
  assert.equal(exit.code, 0, watch.stderr());
});
