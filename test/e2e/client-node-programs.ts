/**
 * Programs written against @kubernetes/client-node, run as processes with either import:
 * `@kubernetes/client-node` itself or `kube-raven/client-node`. The first two follow
 * client-node's own informer and watch examples (its README points to them); only the import
 * line and the namespace differ between runs. The third is an informer with no restart code,
 * to show which informer stops after an error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { ControlPlane } from '../harness/control-plane.js';
import { ok, until } from './daemon-process.js';

const root = resolve(import.meta.dirname, '..', '..');

export type Import = '@kubernetes/client-node' | 'kube-raven/client-node';

/** client-node's informer example: pods of one namespace, restarted 5 s after an error. */
export const informerExample = (from: Import, namespace: string): string => `
import * as k8s from '${from}';

const kc = new k8s.KubeConfig();
kc.loadFromDefault();

const k8sApi = kc.makeApiClient(k8s.CoreV1Api);

const listFn = () => k8sApi.listNamespacedPod({ namespace: '${namespace}' });

const informer = k8s.makeInformer(kc, '/api/v1/namespaces/${namespace}/pods', listFn);

informer.on('add', (obj) => {
  console.log(\`Added: \${obj.metadata.name}\`);
});
informer.on('update', (obj) => {
  console.log(\`Updated: \${obj.metadata.name}\`);
});
informer.on('delete', (obj) => {
  console.log(\`Deleted: \${obj.metadata.name}\`);
});
informer.on('error', (err) => {
  console.error(err);
  // Restart informer after 5sec
  setTimeout(() => {
    informer.start();
  }, 5000);
});

informer.start();
`;

/** client-node's watch example: namespaces with bookmarks, aborted after 5 s. */
export const watchExample = (from: Import): string => `
import * as k8s from '${from}';

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const kc = new k8s.KubeConfig();
kc.loadFromDefault();

const watch = new k8s.Watch(kc);

const main = async () => {
  try {
    const req = await watch.watch(
      '/api/v1/namespaces',
      // optional query parameters can go here.
      {
        allowWatchBookmarks: true,
      },
      // callback is called for each received object.
      (type, apiObj, watchObj) => {
        if (type === 'ADDED') {
          console.log('new object:');
        } else if (type === 'MODIFIED') {
          console.log('changed object:');
        } else if (type === 'DELETED') {
          console.log('deleted object:');
        } else if (type === 'BOOKMARK') {
          console.log(\`bookmark: \${watchObj.metadata.resourceVersion}\`);
        } else {
          console.log('unknown type: ' + type);
        }
        console.log(apiObj);
      },
      // done callback is called if the watch terminates normally
      (err) => console.error(err),
    );
    await delay(5000);

    // watch returns a request object which you can use to abort the watch.
    req.abort();
  } catch (err) {
    console.error(err);
  }
};

main();
`;

/** An informer of config maps with no restart code: one line per callback, on stdout. */
export const plainInformer = (from: Import, namespace: string): string => `
import * as k8s from '${from}';

const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const api = kc.makeApiClient(k8s.CoreV1Api);
const path = '/api/v1/namespaces/${namespace}/configmaps';
const informer = k8s.makeInformer(kc, path, () => api.listNamespacedConfigMap({ namespace: '${namespace}' }));
informer.on('add', (obj) => console.log('add ' + obj.metadata.name));
informer.on('update', (obj) => console.log('update ' + obj.metadata.name));
informer.on('delete', (obj) => console.log('delete ' + obj.metadata.name));
informer.on('connect', () => console.log('connect'));
informer.on('error', (err) => console.log('error ' + (err?.message ?? err?.code ?? String(err)).split('\\n')[0]));
await informer.start();
console.log('started, cached: ' + informer.list('${namespace}').map((o) => o.metadata.name).sort().join(','));
`;

/** A running program: its output so far, and its exit. */
export interface Program {
  readonly name: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  lines(): string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Both streams, for failure messages. */
  show(): string;
}

/**
 * A directory whose node_modules holds `kube-raven` (this checkout, built) and
 * `@kubernetes/client-node` (its devDependency), as a user's project has them.
 */
export async function consumerDir(t: TestContext): Promise<string> {
  assert.ok(
    existsSync(join(root, 'dist', 'client-node', 'index.js')),
    'dist/ is missing: run `npm run build` first',
  );
  const dir = await mkdtemp(join(tmpdir(), 'raven-client-node-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'node_modules', '@kubernetes'), { recursive: true });
  await symlink(root, join(dir, 'node_modules', 'kube-raven'), 'dir');
  await symlink(
    join(root, 'node_modules', '@kubernetes', 'client-node'),
    join(dir, 'node_modules', '@kubernetes', 'client-node'),
    'dir',
  );
  return dir;
}

/**
 * Write `source` as `<name>.mjs` in `dir` and run it with `kubeconfig` (under `node`, this
 * process's Node unless given); killed after the test.
 */
export async function runProgram(
  t: TestContext,
  dir: string,
  name: string,
  source: string,
  kubeconfig: string,
  node = process.execPath,
): Promise<Program> {
  const file = join(dir, `${name}.mjs`);
  await writeFile(file, source);
  const child = spawn(node, [file], {
    cwd: dir,
    env: { ...process.env, KUBECONFIG: kubeconfig, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    name,
    child,
    stdout: () => out,
    stderr: () => err,
    lines: () => out.split('\n').filter((line) => line !== ''),
    exited,
    show: () => `--- ${name} stdout:\n${out}\n--- ${name} stderr:\n${err}`,
  };
}

/**
 * client-node's informer example run both ways in `dir` (under `node`) on the pods of `ns`: an
 * existing pod, then one created, updated and deleted; both print the same lines, and Raven's
 * nothing on stderr.
 */
export async function informerExampleBothWays(
  t: TestContext,
  plane: ControlPlane,
  ns: string,
  dir: string,
  node = process.execPath,
): Promise<void> {
  const pods = `/api/v1/namespaces/${ns}/pods`;
  const pod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }] },
  });
  await ok(plane.adminRequest('POST', pods, pod('before')));

  const imports: readonly Import[] = ['@kubernetes/client-node', 'kube-raven/client-node'];
  const programs = await Promise.all(
    imports.map((from, i) =>
      runProgram(t, dir, `informer-${i}`, informerExample(from, ns), plane.kubeconfig, node),
    ),
  );
  const all = (line: string) => (): boolean => programs.every((p) => p.lines().includes(line));
  const show = (): string => programs.map((p) => p.show()).join('\n');
  await until('both print the existing pod', all('Added: before'), { show });

  await ok(plane.adminRequest('POST', pods, pod('web')));
  await until('both print the new pod', all('Added: web'), { show });
  await ok(
    plane.adminRequest(
      'PATCH',
      `${pods}/web`,
      { metadata: { labels: { tier: 'front' } } },
      'application/merge-patch+json',
    ),
  );
  await until('both print the update', all('Updated: web'), { show });
  await ok(plane.adminRequest('DELETE', `${pods}/web?gracePeriodSeconds=0`));
  await until('both print the deletion', all('Deleted: web'), { show });

  const [clientNode, raven] = programs as [Program, Program];
  assert.deepEqual(raven.lines(), clientNode.lines(), show());
  assert.equal(raven.stderr(), '', show());
}
