/**
 * Test helpers for end-to-end tests against the real control plane.
 *
 * - {@link sharedCluster}: the one control plane of this test run (started by scripts/test.ts and
 *   found through RAVEN_TEST_CLUSTER_DIR); when a test file is run on its own, it starts one and
 *   stops it when the process exits.
 * - {@link privateCluster}: a control plane of the test's own, for tests that restart the apiserver
 *   or compact etcd and would disturb the others.
 * - {@link freshNamespace}: a new namespace per test, deleted afterwards.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensureBinaries, isAlive } from './binaries.js';
import { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import type { TcpProxy } from './tcp-proxy.js';

let shared: Promise<ControlPlane> | undefined;
const owned = new Set<ControlPlane>();

process.on('exit', () => {
  // Last resort for planes this process started: never leave apiservers running behind a test.
  for (const plane of owned) {
    for (const pid of Object.values(plane.state.pids)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
});

/** The control plane shared by every test of this run. */
export function sharedCluster(): Promise<ControlPlane> {
  shared ??= (async () => {
    const dir = process.env.RAVEN_TEST_CLUSTER_DIR;
    if (dir !== undefined && ControlPlane.exists(dir)) return ControlPlane.attach(dir);
    return startOwned();
  })();
  return shared;
}

/** A control plane of the caller's own; stop it with `plane.stop()` when done. */
export async function privateCluster(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  return startOwned(options);
}

async function startOwned(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binaries = await ensureBinaries((line) => process.stderr.write(`${line}\n`));
  const dir = await mkdtemp(join(tmpdir(), 'raven-cp-'));
  const plane = await ControlPlane.start(dir, binaries, undefined, options);
  owned.add(plane);
  const stop = plane.stop.bind(plane);
  Object.assign(plane, {
    stop: async () => {
      await stop();
      owned.delete(plane);
      await rm(dir, { recursive: true, force: true });
    },
  });
  return plane;
}

/** Create a namespace with a random name (and wait for its default service account). */
export async function freshNamespace(plane: ControlPlane, prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const created = await plane.adminRequest('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'raven.test/e2e': 'true' } },
  });
  if (created.status !== 201)
    throw new Error(`creating namespace ${name}: ${created.status} ${created.body}`);
  // Pods are refused until the controller-manager has made the namespace's default service account
  // (within a second on a quiet machine; the two minutes are a safety net).
  for (const giveUp = Date.now() + 120_000; Date.now() < giveUp;) {
    const sa = await plane.adminRequest('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`);
    if (sa.status === 200) return name;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `namespace ${name}: default service account never appeared (is the controller-manager running?)`,
  );
}

/** Delete a namespace (does not wait for it to finish terminating). */
export async function deleteNamespace(plane: ControlPlane, name: string): Promise<void> {
  await plane.adminRequest('DELETE', `/api/v1/namespaces/${name}`);
}

/** Write a kubeconfig whose server is the given proxy (same CA and admin credentials). */
export async function kubeconfigVia(plane: ControlPlane, proxy: TcpProxy, dir: string): Promise<string> {
  const path = join(dir, `kubeconfig-proxy-${proxy.port}`);
  const { pki } = plane.state;
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: proxied
  cluster: { server: "https://127.0.0.1:${proxy.port}", certificate-authority: ${pki.caCert} }
users:
- name: admin
  user: { client-certificate: ${pki.adminCert}, client-key: ${pki.adminKey} }
contexts:
- name: proxied
  context: { cluster: proxied, user: admin, namespace: default }
current-context: proxied
`,
  );
  return path;
}
