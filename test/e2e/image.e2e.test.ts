/**
 * The daemon's container image (`npm run image`, scripts/image.sh), run with podman against the
 * test control plane the way deploy/deployment.yaml runs it: as the image's own user (10001), on a
 * read-only root filesystem, the config mounted read-only at /etc/raven, the state on a writable
 * volume at /var/lib/raven. `raven check` passes; `raven run` (the image's default command)
 * delivers a ConfigMap created in the cluster to its stdout sink, checkpoints on the volume, and
 * exits 0 after its final `stopped` line on SIGTERM. The image agrees with the Dockerfile: the
 * same Node version, user, working directory, entrypoint, command and environment. Its /app is
 * raven bundled into one file (scripts/image-bundle.ts) and nothing it does not run.
 *
 * Builds the image first (from dist/ as it is: run `npm run build` before). Needs root, buildah,
 * mmdebstrap, podman and runc: without them it fails naming what is missing; it is never skipped.
 */
import { before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../harness/binaries.js';
import {
  ensureImage,
  inspectImage,
  podMounts,
  podmanRun,
  RAVEN_UID,
  removeContainer,
  type Image,
} from '../harness/image.js';
import { freshNamespace, deleteNamespace, sharedCluster } from '../harness/test-cluster.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { jsonLines, ok, runRaven, startRaven, tempDir, until, waitReady } from './daemon-process.js';

const exec = promisify(execFile);

let image: Image;
before(async () => {
  image = await ensureImage();
});

/** The Dockerfile's final stage: its ARG NODE_VERSION, USER, WORKDIR, ENV, ENTRYPOINT and CMD. */
async function dockerfile(): Promise<{
  nodeVersion: string;
  user: string;
  workdir: string;
  env: string[];
  entrypoint: string[];
  cmd: string[];
}> {
  const text = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
  const final = text.slice(text.lastIndexOf('\nFROM '));
  const line = (source: string, word: string): string => {
    const found = new RegExp(`^${word}[ =](.+)$`, 'm').exec(source)?.[1];
    assert.ok(found !== undefined, `the Dockerfile has a ${word} line`);
    return found.trim();
  };
  return {
    nodeVersion: line(text, 'ARG NODE_VERSION'),
    user: line(final, 'USER'),
    workdir: line(final, 'WORKDIR'),
    env: line(final, 'ENV').split(/\s+/),
    entrypoint: JSON.parse(line(final, 'ENTRYPOINT')) as string[],
    cmd: JSON.parse(line(final, 'CMD')) as string[],
  };
}

/** The podman command that runs the image as a pod would, under a fresh container name. */
async function pod(
  t: TestContext,
  plane: ControlPlane,
  config: string,
): Promise<{ command: [string, ...string[]]; state: string }> {
  const { args, state } = await podMounts(await tempDir(t), plane, config);
  const name = `raven-image-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  t.after(() => removeContainer(name));
  return { command: [...(await podmanRun(name)), ...args, image.ref], state };
}

function configFor(ns: string): string {
  return `
server: { port: 0 }
checkpoint: { path: '\${RAVEN_STATE_DIR}/raven-state.db' }
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}] }
sinks:
  - { name: console, type: stdout, format: json }
`;
}

test('the image holds what the Dockerfile says: its Node version, user 10001, /app, the environment, raven as entrypoint and `run -c /etc/raven/raven.yaml` as command', async (t) => {
  const want = await dockerfile();
  const got = await inspectImage(image.ref);
  t.diagnostic(image.built);
  assert.equal(got.User, want.user);
  assert.equal(want.user, `${RAVEN_UID}:${RAVEN_UID}`);
  assert.equal(got.WorkingDir, want.workdir);
  assert.deepEqual(got.Entrypoint, want.entrypoint);
  assert.deepEqual(got.Cmd, want.cmd);
  assert.deepEqual(want.cmd, ['run', '-c', '/etc/raven/raven.yaml']);
  for (const variable of want.env)
    assert.ok(got.Env.includes(variable), `${variable} in ${got.Env.join(' ')}`);

  const name = `raven-image-node-${process.pid}`;
  t.after(() => removeContainer(name));
  const [podman, ...args] = await podmanRun(name);
  const { stdout } = await exec(podman, [
    ...args,
    '--entrypoint',
    '/usr/local/bin/node',
    image.ref,
    '--version',
  ]);
  assert.equal(stdout.trim(), `v${want.nodeVersion}`);
});

test("the image's /app is raven bundled: dist/cli/main.js, package.json, node-sqlite3-wasm whole and the licence files of the bundled dependencies, nothing else", async (t) => {
  // scripts/image-bundle.ts makes it. The run test below runs the bundle and opens its SQLite
  // checkpoint through node-sqlite3-wasm (kept whole: it reads its .wasm beside its module).
  const script = `
    import { readdirSync, statSync } from 'node:fs';
    const files = readdirSync('/app', { recursive: true }).filter((f) => statSync('/app/' + f).isFile());
    console.log(JSON.stringify(files));`;
  const name = `raven-image-app-${process.pid}`;
  t.after(() => removeContainer(name));
  const [podman, ...args] = await podmanRun(name);
  const { stdout } = await exec(podman, [
    ...args,
    '--read-only',
    '--entrypoint',
    '/usr/local/bin/node',
    image.ref,
    '--input-type=module',
    '--eval',
    script,
  ]);
  const files = (JSON.parse(stdout) as string[]).sort();
  const sqlite = 'node_modules/node-sqlite3-wasm/';
  for (const needed of ['package.json', 'dist/cli/main.js', `${sqlite}dist/node-sqlite3-wasm.wasm`])
    assert.ok(files.includes(needed), `${needed} in the image's /app (found: ${files.join(', ')})`);
  // A licence file directly in a package's directory, nested node_modules included.
  const licence = /^(node_modules\/(@[^/]+\/)?[^/]+\/)+(licen[cs]e|copying|notice)([-._][^/]*)?$/i;
  const other = files.filter(
    (f) => f !== 'package.json' && f !== 'dist/cli/main.js' && !f.startsWith(sqlite) && !licence.test(f),
  );
  assert.deepEqual(other, [], 'nothing but the bundle, node-sqlite3-wasm and licence files');
  // Every production dependency with code is in the bundle and so ships its licence
  // (kubernetes-types holds only type declarations: nothing of it is bundled).
  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const dep of Object.keys(pkg.dependencies).filter((d) => d !== 'kubernetes-types'))
    assert.ok(
      files.some((f) => f.startsWith(`node_modules/${dep}/`) && licence.test(f)),
      `${dep}'s licence in the image`,
    );
});

test('`raven check` in the image passes the config mounted read-only at /etc/raven', async (t) => {
  const plane = await sharedCluster();
  const { command } = await pod(t, plane, configFor('default'));
  const check = await runRaven(['check', '-c', '/etc/raven/raven.yaml'], { command });
  assert.equal(check.code, 0, check.stderr);
  assert.match(check.stdout, /valid \(1 watcher, 1 sink/);
});

test('`raven run` in the image, as user 10001 on a read-only root filesystem, delivers a ConfigMap made in the cluster to stdout, checkpoints on its volume and exits 0 on SIGTERM', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const { command, state } = await pod(t, plane, configFor(ns));
  // No arguments: the image's own command, `run -c /etc/raven/raven.yaml`.
  const raven = startRaven([], { command });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  await waitReady(raven);

  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'from-the-cluster' },
      data: { greeting: 'hello' },
    }),
  );
  await until(
    'the ConfigMap on the stdout sink',
    () =>
      jsonLines(raven.stdout).some(
        (e) => e.type === 'added' && e.name === 'from-the-cluster' && e.object.data?.greeting === 'hello',
      ),
    { show: () => `stdout:\n${raven.stdout.join('\n')}\nstderr:\n${raven.stderr()}` },
  );

  raven.kill('SIGTERM');
  const exit = await raven.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, raven.stderr());
  assert.equal(raven.logs.at(-1)?.msg, 'stopped', raven.stderr());

  const files = await readdir(state);
  assert.ok(files.includes('raven-state.db'), `the checkpoint on the volume (found: ${files.join(', ')})`);
  assert.equal((await stat(join(state, 'raven-state.db'))).uid, RAVEN_UID, 'written by the raven user');
});
