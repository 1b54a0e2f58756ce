/**
 * The client authenticates against a real apiserver in every way the local control plane serves:
 * a client certificate, a static bearer token (inline, from a tokenFile, and from an exec
 * credential plugin) and a service-account token from the TokenRequest API. Each is proven by a
 * SelfSubjectReview naming the expected user; rejected credentials surface as ApiErrors carrying
 * the apiserver's Status (401 for a wrong token, 403 naming the missing permission for a token
 * that lacks RBAC).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import type { ConfigMap, ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { SelfSubjectReview, TokenRequest } from 'kubernetes-types/authentication/v1.js';
import type { Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { ApiError } from '../../src/errors/api-error.js';
import { isForbidden, isUnauthorized } from '../../src/errors/classify.js';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import type { ControlPlane } from '../harness/control-plane.js';

const configMaps = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

/** Who the apiserver thinks the client is. */
async function whoAmI(client: KubeClient): Promise<{ username: string; groups: string[] }> {
  const review = await client.request<SelfSubjectReview>({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} },
  });
  return {
    username: review.status?.userInfo?.username ?? '',
    groups: review.status?.userInfo?.groups ?? [],
  };
}

/** A temp directory and the namespace of one test, both removed afterwards. */
async function setUp(t: {
  after: (fn: () => Promise<void>) => void;
}): Promise<{ plane: ControlPlane; ns: string; dir: string }> {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  const dir = await mkdtemp(join(tmpdir(), 'raven-e2e-auth-'));
  t.after(async () => {
    await deleteNamespace(plane, ns);
    await rm(dir, { recursive: true, force: true });
  });
  return { plane, ns, dir };
}

/** A kubeconfig for the plane's cluster with the given `user:` body (YAML lines, indented 4). */
async function kubeconfigWithUser(
  plane: ControlPlane,
  dir: string,
  ns: string,
  user: string,
): Promise<string> {
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${plane.server}
    certificate-authority: ${plane.state.pki.caCert}
users:
- name: someone
  user:
${user}
contexts:
- name: local
  context: { cluster: local, user: someone, namespace: ${ns} }
current-context: local
`,
    { mode: 0o600 },
  );
  return path;
}

/** Create a ServiceAccount and ask the TokenRequest subresource (serviceaccounts/<name>/token) for a token. */
async function serviceAccountToken(admin: KubeClient, ns: string, name: string): Promise<string> {
  const serviceAccount = { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true };
  await new ResourceClient<ServiceAccount>(admin, serviceAccount).create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace: ns },
  });
  const tokenRequest = await new ResourceClient<TokenRequest>(admin, serviceAccount).create(
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { name, namespace: ns },
      spec: { audiences: [], expirationSeconds: 3600 },
    },
    { subresource: 'token' },
  );
  const token = tokenRequest.status?.token ?? '';
  assert.notEqual(token, '', 'the TokenRequest answered a token');
  return token;
}

/** A client that is destroyed when the test ends. */
function clientFor(t: { after: (fn: () => Promise<void>) => void }, client: KubeClient): KubeClient {
  t.after(() => client.destroy());
  return client;
}

/** Create a ConfigMap and read it back: proof that the credentials work for real requests. */
async function roundTrip(client: KubeClient, ns: string, name: string): Promise<void> {
  const cms = new ResourceClient<ConfigMap>(client, configMaps);
  const created = await cms.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { a: '1' },
  });
  assert.equal(created.metadata?.namespace, ns);
  const got = await cms.get(name);
  assert.equal(got.metadata?.uid, created.metadata.uid);
}

test('a client certificate authenticates as raven-admin in system:masters', async (t) => {
  const { plane, ns } = await setUp(t);
  const client = clientFor(
    t,
    new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig, context: 'raven-local' })),
  );
  assert.equal(client.server, plane.server);
  const cms = new ResourceClient<ConfigMap>(client, configMaps);
  await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cert', namespace: ns } });
  assert.equal((await cms.get('cert', { namespace: ns })).metadata?.name, 'cert');
  const me = await whoAmI(client);
  assert.equal(me.username, 'raven-admin');
  assert.ok(me.groups.includes('system:masters'), `groups: ${me.groups.join(', ')}`);
});

test('an inline bearer token authenticates as raven-token-admin', async (t) => {
  const { plane, ns } = await setUp(t);
  const config = await loadConfig({ kubeconfig: plane.kubeconfig, context: 'raven-local-token' });
  assert.equal(config.auth.kind, 'token');
  const client = clientFor(t, new KubeClient(config));
  const cms = new ResourceClient<ConfigMap>(client, configMaps);
  await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'token', namespace: ns } });
  assert.equal((await cms.get('token', { namespace: ns })).metadata?.name, 'token');
  assert.equal((await whoAmI(client)).username, 'raven-token-admin');
});

test('a bearer token read from a tokenFile authenticates as raven-token-admin', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, `${plane.state.token}\n`, { mode: 0o600 });
  const config = await loadConfig({
    kubeconfig: await kubeconfigWithUser(plane, dir, ns, `    tokenFile: ${tokenFile}`),
  });
  assert.equal(config.auth.kind, 'token-file');
  const client = clientFor(t, new KubeClient(config));
  await roundTrip(client, ns, 'token-file');
  assert.equal((await whoAmI(client)).username, 'raven-token-admin');
});

test('an exec credential plugin supplies the token and receives a v1 ExecCredential request', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  const infoFile = join(dir, 'exec-info.json');
  const runsFile = join(dir, 'runs');
  const expires = new Date(Date.now() + 3_600_000).toISOString();
  const plugin = join(dir, 'credential-plugin.sh');
  await writeFile(
    plugin,
    `#!/bin/sh
printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO_FILE"
echo run >> "$RUNS_FILE"
cat <<EOF
{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"$PLUGIN_TOKEN","expirationTimestamp":"${expires}"}}
EOF
`,
  );
  await chmod(plugin, 0o700);
  const config = await loadConfig({
    kubeconfig: await kubeconfigWithUser(
      plane,
      dir,
      ns,
      `    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${plugin}
      interactiveMode: Never
      env:
      - { name: PLUGIN_TOKEN, value: "${plane.state.token}" }
      - { name: INFO_FILE, value: "${infoFile}" }
      - { name: RUNS_FILE, value: "${runsFile}" }`,
    ),
  });
  assert.equal(config.auth.kind, 'exec');
  const client = clientFor(t, new KubeClient(config));
  // Concurrent first requests share one run of the plugin.
  const users = await Promise.all(Array.from({ length: 5 }, () => whoAmI(client)));
  assert.deepEqual(new Set(users.map((u) => u.username)), new Set(['raven-token-admin']));
  await roundTrip(client, ns, 'exec');

  const info = JSON.parse(await readFile(infoFile, 'utf8')) as {
    apiVersion?: string;
    kind?: string;
    spec?: { interactive?: boolean };
  };
  assert.deepEqual(info, {
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    spec: { interactive: false },
  });
  // The credential is valid for an hour, so every request above shared one run of the plugin.
  assert.equal((await readFile(runsFile, 'utf8')).trim().split('\n').length, 1);
});

test('a wrong bearer token is a 401 ApiError carrying the apiserver Status', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  const config = await loadConfig({
    kubeconfig: await kubeconfigWithUser(plane, dir, ns, '    token: not-a-valid-token'),
  });
  const client = clientFor(t, new KubeClient(config));
  const err = await new ResourceClient<ConfigMap>(client, configMaps).list({ namespace: ns }).then(
    () => assert.fail('a wrong token was accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
  assert.ok(isUnauthorized(err));
  assert.equal(err.statusCode, 401);
  assert.equal(err.status.kind, 'Status');
  assert.equal(err.status.code, 401);
  assert.equal(err.reason, 'Unauthorized');
  assert.deepEqual(err.request, { method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps` });
  assert.ok(!err.message.includes('not-a-valid-token'), 'the message does not leak the token');
});

test('a service-account token without RBAC is forbidden, naming the permission, until a RoleBinding grants it', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  const admin = clientFor(t, new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig })));
  const token = await serviceAccountToken(admin, ns, 'reader');

  const config = await loadConfig({
    kubeconfig: await kubeconfigWithUser(plane, dir, ns, `    token: ${token}`),
  });
  const client = clientFor(t, new KubeClient(config));
  assert.equal((await whoAmI(client)).username, `system:serviceaccount:${ns}:reader`);
  const cms = new ResourceClient<ConfigMap>(client, configMaps);
  const err = await cms.list({ namespace: ns }).then(
    () => assert.fail('a token without RBAC listed configmaps'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
  assert.ok(isForbidden(err));
  assert.equal(err.reason, 'Forbidden');
  assert.equal(err.status.details?.kind, 'configmaps');
  assert.match(
    err.status.message ?? '',
    new RegExp(
      `system:serviceaccount:${ns}:reader.* cannot list resource "configmaps" in API group "" in the namespace "${ns}"`,
    ),
  );

  const rbac = { group: 'rbac.authorization.k8s.io', version: 'v1', namespaced: true };
  await new ResourceClient<Role>(admin, { ...rbac, resource: 'roles' }).create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'configmap-reader', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
  });
  await new ResourceClient<RoleBinding>(admin, { ...rbac, resource: 'rolebindings' }).create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'reader-reads-configmaps', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
  });

  // The authorizer sees new bindings through its informers: wait for it to catch up (the deadline
  // is a safety net; it takes well under a second on a quiet machine).
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const list = await cms.list({ namespace: ns });
      assert.ok(list.items.some((cm) => cm.metadata?.name === 'kube-root-ca.crt'));
      break;
    } catch (e) {
      if (!isForbidden(e) || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  // The grant is exactly what the Role says: reading, not writing.
  await assert.rejects(
    cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nope', namespace: ns } }),
    (e: unknown) => isForbidden(e) && /cannot create resource "configmaps"/.test((e as ApiError).message),
  );
});

test('an in-cluster configuration authenticates with the mounted service-account token', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  const admin = clientFor(t, new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig })));
  const token = await serviceAccountToken(admin, ns, 'in-pod');
  // What the kubelet mounts into a pod.
  const mount = join(dir, 'serviceaccount');
  await mkdir(mount);
  await writeFile(join(mount, 'token'), token);
  await writeFile(join(mount, 'ca.crt'), await readFile(plane.state.pki.caCert));
  await writeFile(join(mount, 'namespace'), ns);
  const { port } = new URL(plane.server);
  // No HOME and no KUBECONFIG: only the in-cluster source is left.
  const config = await loadConfig({
    env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port },
    inClusterDirectory: mount,
  });
  assert.equal(config.source.kind, 'in-cluster');
  const client = clientFor(t, new KubeClient(config));
  assert.equal(client.namespace, ns);
  assert.equal((await whoAmI(client)).username, `system:serviceaccount:${ns}:in-pod`);
});

test('a token file rotated on disk is read again after the apiserver rejects the old token', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, 'revoked-token');
  const config = await loadConfig({
    kubeconfig: await kubeconfigWithUser(plane, dir, ns, `    tokenFile: ${tokenFile}`),
  });
  const client = clientFor(t, new KubeClient(config));
  // Re-reading an unchanged file cannot help: the 401 reaches the caller.
  await assert.rejects(whoAmI(client), isUnauthorized);
  await writeFile(tokenFile, plane.state.token);
  // The cached token is rejected once, the file is read again, and the request succeeds.
  assert.equal((await whoAmI(client)).username, 'raven-token-admin');
});

/** A plugin printing line n of $TOKENS_FILE on its n-th run (the last line from then on). */
async function rotatingPlugin(dir: string, expirationTimestamp: string): Promise<string> {
  const plugin = join(dir, 'rotating-plugin.sh');
  const credential = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token: 'TOKEN', expirationTimestamp },
  });
  await writeFile(
    plugin,
    [
      '#!/bin/sh',
      'echo run >> "$RUNS_FILE"',
      'runs=$(wc -l < "$RUNS_FILE")',
      'lines=$(wc -l < "$TOKENS_FILE")',
      '[ "$runs" -gt "$lines" ] && runs=$lines',
      'token=$(sed -n "${runs}p" "$TOKENS_FILE")',
      `printf '%s\\n' '${credential}' | sed "s/TOKEN/$token/"`,
      '',
    ].join('\n'),
  );
  await chmod(plugin, 0o700);
  return plugin;
}

/** The kubeconfig `user:` body running `plugin` with its state files in `dir`. */
function execUser(plugin: string, dir: string): string {
  return [
    '    exec:',
    '      apiVersion: client.authentication.k8s.io/v1',
    `      command: ${plugin}`,
    '      interactiveMode: Never',
    '      env:',
    `      - { name: RUNS_FILE, value: "${join(dir, 'runs')}" }`,
    `      - { name: TOKENS_FILE, value: "${join(dir, 'tokens')}" }`,
  ].join('\n');
}

const runsOf = async (dir: string): Promise<number> =>
  (await readFile(join(dir, 'runs'), 'utf8')).trim().split('\n').length;

test('an exec plugin is run again when the apiserver rejects its token', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  await writeFile(join(dir, 'tokens'), `stale-token\n${plane.state.token}\n`);
  const plugin = await rotatingPlugin(dir, new Date(Date.now() + 3_600_000).toISOString());
  const kubeconfig = await kubeconfigWithUser(plane, dir, ns, execUser(plugin, dir));
  const client = clientFor(t, new KubeClient(await loadConfig({ kubeconfig })));
  assert.equal((await whoAmI(client)).username, 'raven-token-admin');
  assert.equal(await runsOf(dir), 2, 'one run for the stale token, one after the 401');
  await roundTrip(client, ns, 'after-401');
  assert.equal(await runsOf(dir), 2, 'the fresh credential is cached');
});

test('an exec credential past its expirationTimestamp is fetched again before the next request', async (t) => {
  const { plane, ns, dir } = await setUp(t);
  await writeFile(join(dir, 'tokens'), `${plane.state.token}\n`);
  const plugin = await rotatingPlugin(dir, new Date(Date.now() - 60_000).toISOString());
  const kubeconfig = await kubeconfigWithUser(plane, dir, ns, execUser(plugin, dir));
  const client = clientFor(t, new KubeClient(await loadConfig({ kubeconfig })));
  assert.equal((await whoAmI(client)).username, 'raven-token-admin');
  assert.equal((await whoAmI(client)).username, 'raven-token-admin');
  assert.equal(await runsOf(dir), 2, 'an expired credential is never reused');
});
