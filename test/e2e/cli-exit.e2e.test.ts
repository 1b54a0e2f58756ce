/**
 * How `raven watch` ends, as a process with an exit status, against the real control plane: on a
 * failure that cannot heal it exits 1 with the apiserver's message (a rejected field selector, a
 * resource that is not or no longer served, credentials refused, 403 without --wait-for-rbac);
 * across failures that heal (403 with --wait-for-rbac until access is granted, an apiserver
 * restart) it keeps running and prints the changes made afterwards.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeClient } from '../../src/client/kube-client.js';
import { loadConfig } from '../../src/client/load-config.js';
import { watch } from '../../src/watch/watcher.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, privateCluster, sharedCluster } from '../harness/test-cluster.js';
import { ok, runRaven, startRaven, tempDir, until, type RavenProcess } from './daemon-process.js';
import { testCrd } from './test-crd.js';

/** Safety net for waits that span backoff (capped at 30 s) and an apiserver restart: never the verdict. */
const patientMs = 180_000;

async function namespaceOn(t: TestContext, plane: ControlPlane): Promise<string> {
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  return ns;
}

/**
 * A kubeconfig for a new ServiceAccount in `ns` holding the built-in `view` role there (which
 * reads most things, but not Secrets), with a token from the TokenRequest API.
 */
async function viewerKubeconfig(
  t: TestContext,
  plane: ControlPlane,
  ns: string,
  name = 'viewer',
): Promise<string> {
  await ok(plane.adminRequest('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } }));
  await ok(
    plane.adminRequest('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: `${name}-view` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    }),
  );
  const token = await ok<{ status: { token: string } }>(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    }),
  );
  return kubeconfigWithToken(t, plane, ns, token.status.token);
}

async function kubeconfigWithToken(
  t: TestContext,
  plane: ControlPlane,
  ns: string,
  token: string,
): Promise<string> {
  const path = join(await tempDir(t), 'kubeconfig');
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: { server: "${plane.server}", certificate-authority: ${plane.state.pki.caCert} }
users:
- name: someone
  user: { token: ${token} }
contexts:
- name: local
  context: { cluster: local, user: someone, namespace: ${ns} }
current-context: local
`,
    { mode: 0o600 },
  );
  return path;
}

/**
 * Authorization requests the apiserver refused so far, from its own metrics. RBAC is its only
 * authorizer, so every 403 is an RBAC `no-opinion` (or `denied`). The count is cluster-wide:
 * other tests' refusals can only make a wait on it shorter, never fail it.
 */
async function refusedAuthorizations(plane: ControlPlane): Promise<number> {
  const { status, body } = await plane.adminRequest('GET', '/metrics');
  assert.equal(status, 200, `GET /metrics: ${status}`);
  return body
    .split('\n')
    .filter((l) => /^authorization_attempts_total\{result="(no-opinion|denied)"\}/.test(l))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Wait for a stdout line matching `pattern`; fails at once if the process exits first. */
async function waitForLine(raven: RavenProcess, what: string, pattern: RegExp): Promise<void> {
  const seen = (): boolean => raven.stdout.some((l) => pattern.test(l));
  await until(what, () => seen() || raven.exitedYet(), {
    timeoutMs: patientMs,
    show: () => `stdout:\n${raven.stdout.join('\n')}\nstderr:\n${raven.stderr()}`,
  });
  assert.ok(
    seen(),
    `raven watch exited before ${what}:\nstdout:\n${raven.stdout.join('\n')}\nstderr:\n${raven.stderr()}`,
  );
}

async function interrupt(raven: RavenProcess): Promise<number | null> {
  raven.kill('SIGINT');
  return (await raven.exited).code;
}

test('a field selector the server rejects ends raven watch with status 1 and the 400 message', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const run = await runRaven(['watch', 'pods', '-n', ns, '--field-selector', 'spec.foo=bar'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /^raven watch: 400 BadRequest: .*field label not supported: spec\.foo/m);
  assert.doesNotMatch(run.stderr, /retrying/);
});

test('a resource the server never served ends raven watch with status 1 before any watch', async () => {
  const plane = await sharedCluster();
  const run = await runRaven(['watch', 'widgets.nowhere.raven.test'], { kubeconfig: plane.kubeconfig });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /does not serve a resource named "widgets\.nowhere\.raven\.test"/);
});

test('a CRD deleted while it is watched ends raven watch with status 1 once discovery no longer lists it', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const {
    group,
    name: crd,
    crdPath,
    path,
  } = await testCrd(t, plane, {
    plural: 'widgets',
    singular: 'widget',
    kind: 'Widget',
  });
  const widgets = path(ns);
  await ok(
    plane.adminRequest('POST', widgets, {
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
    }),
  );

  const raven = startRaven(['watch', crd, '-n', ns], { kubeconfig: plane.kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  await waitForLine(raven, 'the existing widget is listed', /^EXISTING\s+w1\b/);
  await ok(plane.adminRequest('DELETE', crdPath));

  await until('raven watch exits', () => raven.exitedYet(), {
    timeoutMs: patientMs,
    show: () => raven.stderr(),
  });
  const { code } = await raven.exited;
  assert.equal(code, 1, raven.stderr());
  assert.match(
    raven.stderr(),
    new RegExp(`^raven watch: the server no longer serves ${crd.replaceAll('.', '\\.')}: 404`, 'm'),
  );
});

test('a token the apiserver refuses ends raven watch with status 1 and the 401 message', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const kubeconfig = await kubeconfigWithToken(t, plane, ns, 'not-a-valid-token');
  const run = await runRaven(['watch', 'configmaps'], { kubeconfig });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /401 Unauthorized/);
  assert.ok(!run.stderr.includes('not-a-valid-token'), 'the token is not printed');
});

test('a 403 ends raven watch with status 1, the apiserver message and the flag that would wait', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const kubeconfig = await viewerKubeconfig(t, plane, ns);
  const run = await runRaven(['watch', 'secrets'], { kubeconfig });
  assert.equal(run.code, 1, run.stderr);
  assert.match(
    run.stderr,
    new RegExp(
      `^raven watch: 403 Forbidden: secrets is forbidden: User "system:serviceaccount:${ns}:viewer" cannot (list|watch) resource "secrets".*--wait-for-rbac`,
      'm',
    ),
  );
});

test('with --wait-for-rbac a 403 is reported once and raven watch goes on until access is granted', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const kubeconfig = await viewerKubeconfig(t, plane, ns);
  const refusedBefore = await refusedAuthorizations(plane);
  const raven = startRaven(['watch', 'secrets', '--wait-for-rbac'], { kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  const show = (): string => raven.stderr();

  // Several refusals (counted by the apiserver), while the process keeps running.
  await until(
    'three refused requests',
    async () => raven.exitedYet() || (await refusedAuthorizations(plane)) - refusedBefore >= 3,
    { timeoutMs: patientMs, show },
  );
  assert.equal(raven.exitedYet(), false, `raven watch exited while waiting for RBAC:\n${show()}`);

  await ok(
    plane.adminRequest('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      metadata: { name: 'secret-reader' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    }),
  );
  await ok(
    plane.adminRequest('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'viewer-secrets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: ns }],
    }),
  );
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'after-grant' },
      stringData: { a: '1' },
    }),
  );
  await waitForLine(
    raven,
    'the secret created after the grant',
    /^(EXISTING|ADDED)\s+(\d\d:\d\d:\d\d\s+)?after-grant\b/,
  );

  const refusals = raven.stderr().match(/403 Forbidden/g) ?? [];
  assert.equal(refusals.length, 1, `the 403 is reported once:\n${show()}`);
  assert.match(show(), /waiting for access to be granted \(--wait-for-rbac\)/);
  assert.equal(await interrupt(raven), 0, 'Ctrl-C exits 0');
});

test('raven watch keeps running across an apiserver restart and prints a change made after it', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  // The plane and everything in it go when the test ends: no namespace to delete.
  const ns = await freshNamespace(plane);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } }),
  );
  const raven = startRaven(['watch', 'configmaps', '-n', ns], { kubeconfig: plane.kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  await waitForLine(raven, 'the existing ConfigMap is listed', /^EXISTING\s+before\b/);

  await plane.restartApiserver({ downMs: 5_000 });
  assert.equal(raven.exitedYet(), false, `raven watch exited during the restart:\n${raven.stderr()}`);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'after' } }),
  );
  await waitForLine(raven, 'the ConfigMap created after the restart', /^ADDED\s+\d\d:\d\d:\d\d\s+after\b/);

  assert.match(raven.stderr(), /^raven watch: .*; retrying/m, 'the outage was reported on stderr');
  assert.equal(await interrupt(raven), 0, 'Ctrl-C exits 0');
});

test('raven watch ends with status 1 and the 401 message when its credentials stop working mid-watch', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  // The plane and everything in it go when the test ends: no namespace to delete.
  const ns = await freshNamespace(plane);
  const kubeconfig = await viewerKubeconfig(t, plane, ns, 'short-lived');
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } }),
  );
  const raven = startRaven(['watch', 'configmaps'], { kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  await waitForLine(raven, 'the existing ConfigMap is listed', /^EXISTING\s+before\b/);

  // A deleted ServiceAccount's tokens are refused; the open stream survives until the restart.
  await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${ns}/serviceaccounts/short-lived`));
  await plane.restartApiserver();

  await until('raven watch exits', () => raven.exitedYet(), {
    timeoutMs: patientMs,
    show: () => raven.stderr(),
  });
  const { code } = await raven.exited;
  assert.equal(code, 1, raven.stderr());
  assert.match(raven.stderr(), /^raven watch: 401 Unauthorized: .*refused after refreshing them/m);
});

test('without the streaming initial list (WatchList off) a watcher asked for it falls back by itself, raven watch lists and watches quietly, and a rejected selector still ends it', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  const ns = await freshNamespace(plane);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } }),
  );
  // An apiserver that answers sendInitialEvents with 422, as servers without the WatchList feature do.
  plane.state.argv.apiserver.push('--feature-gates=WatchList=false');
  await plane.restartApiserver();

  // On 1.33 and later the default initial list is a list, so only a watcher asked for the
  // streaming list meets the refusal: it lists instead, and stays synced on a plain watch.
  const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
  t.after(() => client.destroy());
  const streaming = watch({
    transport: client,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    watchList: true,
  });
  const initial: string[] = [];
  for await (const event of streaming) {
    if (event.type === 'initial') initial.push(event.object.metadata?.name ?? '');
    if (event.type === 'error') assert.fail(`the fallback is not an error: ${event.error.message}`);
    if (event.type === 'synced') break;
  }
  streaming.close();
  assert.ok(initial.includes('before'), initial.join(' '));
  assert.equal(streaming.status().watchList, false, 'the watcher turned the streaming list off');

  const raven = startRaven(['watch', 'configmaps', '-n', ns], { kubeconfig: plane.kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  await waitForLine(raven, 'the existing ConfigMap is listed', /^EXISTING\s+before\b/);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'after' } }),
  );
  await waitForLine(raven, 'the ConfigMap created while watching', /^ADDED\s+\d\d:\d\d:\d\d\s+after\b/);
  assert.equal(await interrupt(raven), 0, 'Ctrl-C exits 0');
  assert.equal(raven.stderr(), '', 'falling back to list+watch is not a failure to report');

  const rejected = await runRaven(['watch', 'pods', '-n', ns, '--field-selector', 'spec.foo=bar'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(rejected.code, 1, rejected.stderr);
  assert.match(rejected.stderr, /^raven watch: 400 BadRequest: .*field label not supported: spec\.foo/m);
  assert.doesNotMatch(
    rejected.stderr,
    /sendInitialEvents/,
    'the message is the plain list’s, not the fallback’s',
  );
});
