import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors/raven-error.js';
import { loadConfig } from '../../../src/client/load-config.js';
import { loadInClusterConfig } from '../../../src/client/in-cluster.js';
import { describeSource } from '../../../src/client/resolved-config.js';
import { tempDir, write } from './helpers.js';

const kubeconfig = (server: string, ns = 'ns1'): string => `current-context: c
clusters: [{ name: a, cluster: { server: "${server}" } }]
contexts: [{ name: c, context: { cluster: a, namespace: ${ns} } }]
`;

async function serviceAccount(dir: string): Promise<string> {
  const sa = join(dir, 'sa');
  await write(sa, 'token', 'sa-token\n');
  await write(sa, 'ca.crt', 'CLUSTER CA');
  await write(sa, 'namespace', 'kube-things\n');
  return sa;
}

test('in-cluster configuration reads the token, CA and namespace from the service account directory', async () => {
  const dir = await tempDir();
  const sa = await serviceAccount(dir);
  const config = await loadInClusterConfig({
    directory: sa,
    env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
  });
  assert.equal(config.server, 'https://10.96.0.1:443');
  assert.equal(config.namespace, 'kube-things');
  assert.equal(config.tls.ca, 'CLUSTER CA');
  assert.deepEqual(await config.auth.authenticate(), { headers: { authorization: 'Bearer sa-token' } });
  assert.match(describeSource(config.source), /in-cluster service account/);
});

test('an IPv6 service host is bracketed in the server URL', async () => {
  const dir = await tempDir();
  const sa = await serviceAccount(dir);
  const config = await loadInClusterConfig({
    directory: sa,
    env: { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '6443' },
  });
  assert.equal(config.server, 'https://[fd00:10:96::1]:6443');
  assert.doesNotThrow(() => new URL(config.server));
});

test('in-cluster configuration without the service environment says what is missing', async () => {
  const dir = await tempDir();
  await assert.rejects(
    loadInClusterConfig({ directory: await serviceAccount(dir), env: {} }),
    (err: unknown) => err instanceof ConfigError && /KUBERNETES_SERVICE_HOST/.test(err.message),
  );
});

test('an explicit kubeconfig wins over KUBECONFIG and the default file', async () => {
  const dir = await tempDir();
  const explicit = await write(dir, 'explicit', kubeconfig('https://explicit'));
  const env = await write(dir, 'env', kubeconfig('https://env'));
  await write(dir, 'home/.kube/config', kubeconfig('https://home'));
  const config = await loadConfig({
    kubeconfig: explicit,
    env: { KUBECONFIG: env, HOME: join(dir, 'home') },
  });
  assert.equal(config.server, 'https://explicit');
  assert.equal(config.source.kind === 'kubeconfig' && config.source.origin, 'explicit');
});

test('KUBECONFIG wins over the default file, and the default file over in-cluster', async () => {
  const dir = await tempDir();
  const sa = await serviceAccount(dir);
  const env = await write(dir, 'env', kubeconfig('https://env'));
  await write(dir, 'home/.kube/config', kubeconfig('https://home', 'from-home'));
  const base = {
    HOME: join(dir, 'home'),
    KUBERNETES_SERVICE_HOST: '10.0.0.1',
    KUBERNETES_SERVICE_PORT: '443',
  };
  const fromEnv = await loadConfig({
    env: { ...base, KUBECONFIG: `${join(dir, 'missing')}:${env}` },
    inClusterDirectory: sa,
  });
  assert.equal(fromEnv.server, 'https://env');
  assert.equal(fromEnv.source.kind === 'kubeconfig' && fromEnv.source.origin, 'KUBECONFIG');
  const fromHome = await loadConfig({ env: base, inClusterDirectory: sa });
  assert.equal(fromHome.server, 'https://home');
  assert.equal(fromHome.namespace, 'from-home');
  const inCluster = await loadConfig({ env: { ...base, HOME: join(dir, 'nohome') }, inClusterDirectory: sa });
  assert.equal(inCluster.source.kind, 'in-cluster');
});

test('when no configuration is found the error explains every source that was tried', async () => {
  const dir = await tempDir();
  await assert.rejects(
    loadConfig({ env: { KUBECONFIG: join(dir, 'a') }, inClusterDirectory: join(dir, 'sa') }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /no cluster configuration found/);
      assert.match(err.message, /KUBECONFIG=.*\/a: none of the files exist/);
      assert.match(err.message, /in-cluster: .*KUBERNETES_SERVICE_HOST/);
      return true;
    },
  );
});

test('a broken default kubeconfig stops the search instead of falling through to in-cluster', async () => {
  const dir = await tempDir();
  const sa = await serviceAccount(dir);
  await write(dir, 'home/.kube/config', 'contexts: 3\n');
  await assert.rejects(
    loadConfig({
      env: { HOME: join(dir, 'home'), KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      inClusterDirectory: sa,
    }),
    /\.kube\/config: contexts: expected a list, got number 3/,
  );
});
