import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors/raven-error.js';
import { loadKubeconfig } from '../../../src/client/kubeconfig.js';
import { parseKubeconfig } from '../../../src/client/kubeconfig-file.js';
import { mergeKubeconfigs } from '../../../src/client/kubeconfig-merge.js';
import { b64, tempDir, write } from './helpers.js';

const first = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority: certs/ca.crt
- name: shared
  cluster:
    server: https://first.example
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team-a
users:
- name: dev-user
  user:
    token: first-token
`;

const second = `
current-context: prod
clusters:
- name: shared
  cluster:
    server: https://second.example
- name: prod-cluster
  cluster:
    server: https://prod.example
    certificate-authority-data: ${b64('PROD CA')}
contexts:
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
- name: dev
  context:
    cluster: shared
users:
- name: prod-user
  user:
    client-certificate: client.crt
    client-key: client.key
`;

async function rejectsConfig(promise: Promise<unknown>, pattern: RegExp): Promise<ConfigError> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    return true;
  });
  assert.ok(caught instanceof ConfigError, `expected a ConfigError, got ${String(caught)}`);
  assert.match(caught.message, pattern);
  return caught;
}

test('several files are merged with the first definition of each name winning', async () => {
  const dir = await tempDir();
  const a = await write(dir, 'a/config', first);
  await write(dir, 'a/certs/ca.crt', 'DEV CA');
  const b = await write(dir, 'b/config', second);
  const merged = mergeKubeconfigs([parseKubeconfig(first, a), parseKubeconfig(second, b)]);
  assert.equal(merged.currentContext?.name, 'dev');
  assert.deepEqual(
    merged.clusters.map((c) => [c.name, c.value.server]),
    [
      ['dev-cluster', 'https://dev.example:6443/'],
      ['shared', 'https://first.example'],
      ['prod-cluster', 'https://prod.example'],
    ],
  );
  assert.deepEqual(
    merged.contexts.map((c) => [c.name, c.value.cluster]),
    [
      ['dev', 'dev-cluster'],
      ['prod', 'prod-cluster'],
    ],
  );
  const config = await loadKubeconfig([a, b], 'KUBECONFIG');
  assert.equal(config.server, 'https://dev.example:6443');
  assert.equal(config.namespace, 'team-a');
  assert.equal(config.tls.ca, 'DEV CA');
  assert.deepEqual(await config.auth.authenticate(), { headers: { authorization: 'Bearer first-token' } });
  assert.deepEqual(config.source, {
    kind: 'kubeconfig',
    origin: 'KUBECONFIG',
    files: [a, b],
    context: 'dev',
    cluster: 'dev-cluster',
    user: 'dev-user',
  });
});

test('current-context comes from the first file that sets it', async () => {
  const dir = await tempDir();
  const a = await write(dir, 'a', 'clusters: []\n');
  const b = await write(dir, 'b', second);
  await write(dir, 'client.crt', 'CERT');
  await write(dir, 'client.key', 'KEY');
  const config = await loadKubeconfig([a, b], 'KUBECONFIG');
  assert.equal(config.source.kind === 'kubeconfig' && config.source.context, 'prod');
  assert.equal(config.namespace, 'default');
  assert.equal(config.tls.ca, 'PROD CA');
});

test('relative file paths resolve against the directory of the file that contains them', async () => {
  const dir = await tempDir();
  const a = await write(dir, 'one/config', first);
  await write(dir, 'one/certs/ca.crt', 'DEV CA');
  const b = await write(dir, 'two/config', second);
  await write(dir, 'two/client.crt', 'CERT TWO');
  await write(dir, 'two/client.key', 'KEY TWO');
  const config = await loadKubeconfig([a, b], 'KUBECONFIG', { context: 'prod' });
  assert.deepEqual(await config.auth.authenticate(), { headers: {}, cert: 'CERT TWO', key: 'KEY TWO' });
  const parsed = parseKubeconfig(second, b);
  assert.equal(parsed.users[0]?.value.clientKey, join(dir, 'two/client.key'));
});

test('missing files in a KUBECONFIG list are skipped but an explicit missing file is an error', async () => {
  const dir = await tempDir();
  const a = await write(dir, 'a', first);
  await write(dir, 'certs/ca.crt', 'CA');
  const config = await loadKubeconfig([join(dir, 'nope'), a], 'KUBECONFIG');
  assert.equal(config.namespace, 'team-a');
  await rejectsConfig(
    loadKubeconfig([join(dir, 'nope')], 'explicit'),
    /nope: cannot read kubeconfig: file not found/,
  );
});

test('malformed YAML is an error naming the file', async () => {
  const dir = await tempDir();
  const bad = await write(dir, 'bad', 'clusters: [\n  - name: x\n   cluster: {');
  const good = await write(dir, 'good', first);
  await rejectsConfig(loadKubeconfig([good, bad], 'KUBECONFIG'), new RegExp(`^${bad}: invalid YAML`));
});

test('a field of the wrong type is an error naming the file and the field path', async () => {
  const dir = await tempDir();
  const file = await write(
    dir,
    'config',
    'users:\n- name: a\n  user: {}\n- name: b\n  user:\n    token: [1, 2]\n',
  );
  const err = await rejectsConfig(
    loadKubeconfig([file], 'explicit'),
    /users\[1\]\.user\.token: expected a string, got a list/,
  );
  assert.equal(err.file, file);
  assert.equal(err.path, 'users[1].user.token');
});

test('a context naming an undefined cluster lists the defined clusters', async () => {
  const dir = await tempDir();
  const file = await write(
    dir,
    'config',
    `current-context: c
clusters:
- name: a
  cluster: { server: https://a }
- name: b
  cluster: { server: https://b }
contexts:
- name: c
  context: { cluster: foo }
`,
  );
  await rejectsConfig(
    loadKubeconfig([file], 'explicit'),
    new RegExp(
      `^${file}: contexts\\[0\\]\\.context\\.cluster: cluster "foo" is not defined; defined clusters: a, b$`,
    ),
  );
});

test('a missing client certificate file is reported with the user field path', async () => {
  const dir = await tempDir();
  const file = await write(
    dir,
    'config',
    `current-context: c
clusters: [{ name: a, cluster: { server: "https://a" } }]
contexts: [{ name: c, context: { cluster: a, user: u2 } }]
users:
- name: u1
  user: {}
- name: u2
  user: { client-certificate: /x/y.crt, client-key: /x/y.key }
`,
  );
  await rejectsConfig(
    loadKubeconfig([file], 'explicit'),
    new RegExp(`^${file}: users\\[1\\]\\.user\\.client-certificate: file not found: /x/y.crt$`),
  );
});

test('an explicit context overrides current-context and an unknown one lists the contexts', async () => {
  const dir = await tempDir();
  const file = await write(dir, 'config', second);
  await write(dir, 'client.crt', 'C');
  await write(dir, 'client.key', 'K');
  const config = await loadKubeconfig([file], 'explicit', { context: 'dev' });
  assert.equal(config.server, 'https://second.example');
  await rejectsConfig(
    loadKubeconfig([file], 'explicit', { context: 'staging' }),
    /context "staging" is not defined; defined contexts: prod, dev/,
  );
});

test('TLS options, basic auth and insecure mode with a warning are resolved', async () => {
  const dir = await tempDir();
  const file = await write(
    dir,
    'config',
    `current-context: c
clusters:
- name: a
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
    tls-server-name: api.internal
    proxy-url: http://proxy.local:3128
contexts: [{ name: c, context: { cluster: a, user: u } }]
users: [{ name: u, user: { username: admin, password: s3cret } }]
`,
  );
  const warnings: string[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_obj: object, msg?: string) => warnings.push(msg ?? ''),
    error: () => undefined,
    child() {
      return logger;
    },
  };
  const config = await loadKubeconfig([file], 'explicit', { logger });
  assert.deepEqual(config.tls, { insecureSkipTlsVerify: true, serverName: 'api.internal' });
  assert.equal(config.proxyUrl, 'http://proxy.local:3128');
  assert.deepEqual(await config.auth.authenticate(), {
    headers: { authorization: `Basic ${b64('admin:s3cret')}` },
  });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /insecure-skip-tls-verify/);
});

test('an unsupported proxy scheme, two auth methods and auth-provider are config errors', async () => {
  const dir = await tempDir();
  const make = (cluster: string, user: string): Promise<string> =>
    write(
      dir,
      `c${Math.random()}`,
      `current-context: c
clusters: [{ name: a, cluster: { server: "https://a", ${cluster} } }]
contexts: [{ name: c, context: { cluster: a, user: u } }]
users: [{ name: u, user: { ${user} } }]
`,
    );
  await rejectsConfig(
    loadKubeconfig([await make('proxy-url: "ftp://p"', 'token: t')], 'explicit'),
    /clusters\[0\]\.cluster\.proxy-url: unsupported proxy "ftp:\/\/p"/,
  );
  await rejectsConfig(
    loadKubeconfig([await make('', 'token: t, username: a, password: b')], 'explicit'),
    /users\[0\]\.user: more than one authentication method is set \(token, username\/password\)/,
  );
  await rejectsConfig(
    loadKubeconfig([await make('', 'auth-provider: { name: gcp }')], 'explicit'),
    /users\[0\]\.user\.auth-provider: auth-provider plugins are not supported/,
  );
  await rejectsConfig(
    loadKubeconfig(
      [await make('', 'exec: { apiVersion: client.authentication.k8s.io/v1, command: x }')],
      'explicit',
    ),
    /users\[0\]\.user\.exec\.interactiveMode: is required for client.authentication.k8s.io\/v1/,
  );
  await rejectsConfig(
    loadKubeconfig([await make('certificate-authority-data: "!!notbase64"', '')], 'explicit'),
    /clusters\[0\]\.cluster\.certificate-authority-data: is not valid base64/,
  );
});

test('a token file and a client certificate in the same user are both used', async () => {
  const dir = await tempDir();
  await write(dir, 'token', 'file-token\n');
  const file = await write(
    dir,
    'config',
    `current-context: c
clusters: [{ name: a, cluster: { server: "https://a" } }]
contexts: [{ name: c, context: { cluster: a, user: u } }]
users:
- name: u
  user:
    tokenFile: token
    client-certificate-data: ${b64('CERT')}
    client-key-data: ${b64('KEY')}
`,
  );
  const config = await loadKubeconfig([file], 'explicit');
  assert.deepEqual(await config.auth.authenticate(), {
    headers: { authorization: 'Bearer file-token' },
    cert: 'CERT',
    key: 'KEY',
  });
});
