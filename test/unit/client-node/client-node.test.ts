/**
 * kube-raven/client-node without a server: how a client-node KubeConfig becomes Raven's
 * configuration, and the clear errors for what cannot work. No sockets (the watch and informer
 * themselves are tested against the real apiserver in test/e2e/client-node.e2e.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { resolveClientNodeConfig, type KubeConfigLike } from '../../../src/client-node/kube-config.js';
import { makeInformer } from '../../../src/client-node/informer.js';
import { Watch } from '../../../src/client-node/watch.js';

function tokenConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u', namespace: 'shop' }],
    currentContext: 'ctx',
  });
  return kc;
}

test("a client-node KubeConfig resolves to its current context's server, namespace and token", async () => {
  const config = await resolveClientNodeConfig(tokenConfig());
  assert.equal(config.server, 'https://127.0.0.1:6443');
  assert.equal(config.namespace, 'shop');
  const credentials = await config.auth.authenticate();
  assert.equal(credentials.headers.authorization, 'Bearer secret-token');
});

test("loadFromCluster's token file becomes a token file Raven re-reads", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-cn-sa-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sa = join(dir, 'var', 'run', 'secrets', 'kubernetes.io', 'serviceaccount');
  await mkdir(sa, { recursive: true });
  await writeFile(join(sa, 'token'), 'first\n');
  await writeFile(join(sa, 'namespace'), 'team-a');
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1';
  process.env.KUBERNETES_SERVICE_PORT = '443';
  t.after(() => {
    if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
    else process.env.KUBERNETES_SERVICE_HOST = saved.host;
    if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
    else process.env.KUBERNETES_SERVICE_PORT = saved.port;
  });
  const kc = new KubeConfig();
  kc.loadFromCluster(dir);
  // client-node names a CA file that does not exist here; only the user is looked at.
  const exported = JSON.parse(kc.exportConfig()) as { clusters: { cluster: Record<string, unknown> }[] };
  assert.equal((exported.clusters[0]?.cluster as { server?: string }).server, 'https://10.0.0.1:443');
  const text = kc.exportConfig().replace(/"certificate-authority":"[^"]*",?/, '');
  const config = await resolveClientNodeConfig({ exportConfig: () => text });
  assert.equal((await config.auth.authenticate()).headers.authorization, 'Bearer first');
  await writeFile(join(sa, 'token'), 'rotated\n');
  config.auth.invalidate();
  assert.equal((await config.auth.authenticate()).headers.authorization, 'Bearer rotated');
});

test('an auth-provider plugin is refused with a config error that names the alternative', async () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
    users: [{ name: 'u', authProvider: { name: 'oidc', config: { 'id-token': 'x' } } }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  await assert.rejects(resolveClientNodeConfig(kc), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_CONFIG');
    assert.match(err.message, /KubeConfig \(client-node\).*auth-provider.*exec credential plugin/);
    return true;
  });
});

test('something that is not a KubeConfig is refused, saying what is expected', async () => {
  await assert.rejects(
    resolveClientNodeConfig({} as unknown as KubeConfigLike),
    /expected a KubeConfig from @kubernetes\/client-node/,
  );
});

test('an informer refuses a relative path and an unknown event name, naming what is valid', () => {
  const kc = tokenConfig();
  assert.throws(
    () => makeInformer(kc, 'api/v1/pods'),
    /collection path such as '\/api\/v1\/namespaces\/default\/pods'/,
  );
  const informer = makeInformer(kc, '/api/v1/pods');
  assert.throws(
    () => informer.on('added' as 'add', () => undefined),
    /unknown informer event "added"; valid: add, update, delete, change, connect, error/,
  );
});

test("off('change') removes a callback from add, update and delete; list() and get() read an empty cache before start", () => {
  const informer = makeInformer(tokenConfig(), '/api/v1/pods');
  const cb = (): void => undefined;
  informer.on('change', cb);
  informer.off('change', cb);
  informer.off('add', cb); // removing what is not there is a no-op, as in client-node
  assert.deepEqual(informer.list(), []);
  assert.deepEqual(informer.list('shop'), []);
  assert.equal(informer.get('web', 'shop'), undefined);
  assert.equal(informer.latestResourceVersion(), '');
  assert.equal(informer.status().phase, 'stopped');
});

test('a watch with a query parameter it does not support is refused before any request, naming the valid ones', async () => {
  await assert.rejects(
    new Watch(tokenConfig()).watch(
      '/api/v1/pods',
      { limit: 10 },
      () => undefined,
      () => undefined,
    ),
    /query parameter "limit" is not supported; valid: resourceVersion, labelSelector, fieldSelector, allowWatchBookmarks, sendInitialEvents, timeoutSeconds/,
  );
});
