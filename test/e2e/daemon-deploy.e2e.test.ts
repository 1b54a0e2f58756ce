/**
 * The manifests in deploy/ are valid and sufficient. There is no kubelet here to run the pod, so:
 * every manifest passes the apiserver's own validation and admission in a server-side dry run
 * (strict field validation); the RBAC printed by deploy/rbac-from-config.ts matches deploy/rbac.yaml;
 * and the daemon, run as the ServiceAccount with only that RBAC and the deployed raven.yaml, watches
 * across the cluster, takes its Lease and delivers, with nothing forbidden.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import {
  ok,
  runRaven,
  startRaven,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
  daemonFixture,
} from './daemon-process.js';
import { readRules, leaseRules, type PolicyRule } from '../../deploy/rbac-from-config.js';
import { byKind, collectionPath, collections, relocate, type Manifest } from './deploy-manifests.js';

const deploy = resolve(import.meta.dirname, '..', '..', 'deploy');

async function manifests(): Promise<Map<string, Manifest[]>> {
  const out = new Map<string, Manifest[]>();
  for (const file of (await readdir(deploy)).sort()) {
    if (!file.endsWith('.yaml') || file === 'kustomization.yaml' || file === 'raven.yaml') continue;
    const docs = parseAllDocuments(await readFile(join(deploy, file), 'utf8')).map((d) => {
      assert.deepEqual(d.errors, [], `${file} parses`);
      return d.toJS() as Manifest;
    });
    out.set(file, docs);
  }
  return out;
}

const rulesOf = (m: Manifest | undefined): PolicyRule[] =>
  (m as { rules?: PolicyRule[] } | undefined)?.rules ?? [];

test('every manifest in deploy/ passes a server-side dry run with strict field validation', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const files = await manifests();
  const all = [...files.values()].flat();

  // The kustomization lists every manifest but the example Secret (never overwrite the real one).
  const kustomization = parse(await readFile(join(deploy, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  assert.deepEqual(
    [...kustomization.resources].sort(),
    [...files.keys()].filter((f) => f !== 'secret.example.yaml').sort(),
  );
  // The ConfigMap holds deploy/raven.yaml, word for word.
  const [configMap] = byKind(all, 'ConfigMap');
  assert.equal(
    (configMap as { data?: Record<string, string> } | undefined)?.data?.['raven.yaml'],
    await readFile(join(deploy, 'raven.yaml'), 'utf8'),
  );

  for (const m of all) {
    const moved = relocate(m, ns);
    const { status, body } = await plane.adminRequest(
      'POST',
      `${collectionPath(moved)}?dryRun=All&fieldValidation=Strict`,
      moved,
    );
    assert.equal(status, 201, `${m.kind} ${m.metadata.name}: ${body}`);
  }
  // Nothing was created.
  const { status } = await plane.adminRequest('GET', `/apis/apps/v1/namespaces/${ns}/deployments/raven`);
  assert.equal(status, 404);

  // What the Deployment promises, checked on the manifest itself.
  const [deployment] = byKind(all, 'Deployment') as unknown as {
    spec: {
      template: {
        spec: {
          terminationGracePeriodSeconds: number;
          securityContext: { runAsNonRoot: boolean };
          containers: {
            securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
            livenessProbe: { httpGet: { path: string } };
            readinessProbe: { httpGet: { path: string } };
            envFrom: { secretRef: { name: string } }[];
            resources: { requests: object; limits: object };
            volumeMounts: { mountPath: string; readOnly?: boolean }[];
          }[];
        };
      };
    };
  }[];
  assert.ok(deployment);
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  assert.ok(container);
  const ravenConfig = parse(await readFile(join(deploy, 'raven.yaml'), 'utf8')) as {
    shutdown: { drainTimeoutSeconds: number };
    checkpoint: { path: string };
  };
  assert.ok(pod.terminationGracePeriodSeconds > ravenConfig.shutdown.drainTimeoutSeconds);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.envFrom[0]?.secretRef.name, 'raven-secrets');
  assert.ok(
    container.volumeMounts.some(
      (v) => ravenConfig.checkpoint.path.startsWith(`${v.mountPath}/`) && v.readOnly !== true,
    ),
    'the checkpoint is on a writable volume',
  );
});

test('deploy/rbac-from-config.ts prints the rules of deploy/rbac.yaml for deploy/raven.yaml', async () => {
  const plane = await sharedCluster();
  const printed = await runGenerator(plane.kubeconfig);
  assert.equal(printed.code, 0, printed.stderr);
  const generated = parseAllDocuments(printed.stdout).map((d) => d.toJS() as Manifest);
  const committed = [...(await manifests()).values()].flat();
  assert.deepEqual(
    rulesOf(byKind(generated, 'ClusterRole')[0]),
    rulesOf(byKind(committed, 'ClusterRole')[0]),
  );
  assert.deepEqual(rulesOf(byKind(generated, 'Role')[0]), rulesOf(byKind(committed, 'Role')[0]));
  assert.equal(byKind(generated, 'Role')[0]?.metadata.namespace, 'raven');
  // Only read verbs on watched resources; nothing on secrets.
  for (const rule of rulesOf(byKind(committed, 'ClusterRole')[0])) {
    assert.deepEqual(rule.verbs, ['get', 'list', 'watch']);
    assert.ok(!rule.resources.includes('secrets'));
  }
  // Short names and aliases resolve to the same rule; groups are merged and sorted.
  assert.deepEqual(
    readRules([
      { group: 'apps', resource: 'deployments' },
      { group: '', resource: 'pods' },
      { group: 'apps', resource: 'deployments' },
    ]),
    [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
    ],
  );
  assert.deepEqual(leaseRules('x')[1]?.resourceNames, ['x']);
});

async function runGenerator(
  kubeconfig: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'deploy/rbac-from-config.ts', 'deploy/raven.yaml'],
    {
      cwd: resolve(deploy, '..'),
      env: { ...process.env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return { code, stdout, stderr };
}

test('the deployed config runs as the ServiceAccount with only the RBAC of deploy/rbac.yaml', async (t) => {
  const { plane, ns, dir, hook } = await daemonFixture(t);

  const all = [...(await manifests()).values()].flat();
  for (const m of all.filter((m) =>
    ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(m.kind),
  )) {
    const moved = relocate(m, ns);
    await ok(plane.adminRequest('POST', collectionPath(moved), moved));
    if (collections[moved.kind]?.namespaced === false)
      t.after(() => plane.adminRequest('DELETE', `${collectionPath(moved)}/${moved.metadata.name}`));
  }
  const token = await ok<{ status: { token: string } }>(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/serviceaccounts/raven/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    }),
  );
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: plane.state.server, 'certificate-authority': plane.state.pki.caCert },
        },
      ],
      users: [{ name: 'raven', user: { token: token.status.token } }],
      contexts: [{ name: 'raven', context: { cluster: 'c', user: 'raven' } }],
      'current-context': 'raven',
    }),
  );

  // deploy/raven.yaml as it is, but for what a pod would provide: its namespace, writable paths, a port.
  const config = parse(await readFile(join(deploy, 'raven.yaml'), 'utf8')) as Record<string, unknown> & {
    sinks: { name: string; delivery?: { deadLetterPath?: string } }[];
  };
  config.server = { address: '127.0.0.1', port: 0 };
  config.checkpoint = { path: join(dir, 'raven-state.db') };
  config.leaderElection = { ...(config.leaderElection as object), namespace: ns };
  for (const sink of config.sinks)
    if (sink.delivery?.deadLetterPath !== undefined) sink.delivery.deadLetterPath = join(dir, 'dead.jsonl');
  const file = await writeConfig(dir, stringify(config));
  const env = {
    WEBHOOK_URL: hook.url('/audit'),
    WEBHOOK_SECRET: 'not-a-real-secret',
    SLACK_WEBHOOK_URL: hook.url('/chat'),
  };
  const check = await runRaven(['check', '-c', join(deploy, 'raven.yaml')], { kubeconfig, env });
  assert.equal(check.code, 0, check.stderr);

  const raven = startRaven(['run', '-c', file], { kubeconfig, env });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  await waitReady(raven);
  await raven.waitForLog('synced', 5);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'deployed' } }),
  );
  await until(
    'the change delivered to the audit webhook',
    () => hook.requests.some((r) => r.path === '/audit' && (r.json as DeliveredEvent).name === 'deployed'),
    { show: () => raven.stderr() },
  );
  const lease = await ok<{ spec: { holderIdentity?: string } }>(
    plane.adminRequest('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/raven`),
  );
  assert.ok(lease.spec.holderIdentity, 'the Lease is held');
  assert.doesNotMatch(raven.stderr(), /forbidden/i, 'no request was refused');

  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
});
