/**
 * `raven get` as a process against the real control plane: the objects that exist, once, with the
 * server's columns and no EVENT column; `-o name`, `-o json` (a List, or the named object, Secrets
 * redacted); exit 1 for a named object that does not exist, an unknown resource or an apiserver
 * that cannot be reached; "No resources found" with exit 0; 2 for a usage error.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { ok, runRaven, tempDir } from './daemon-process.js';

async function namespaceWith(t: TestContext, plane: ControlPlane): Promise<string> {
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  for (const name of ['beta', 'alpha'])
    await ok(
      plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name, labels: { app: 'get-test' } },
        data: { one: '1', two: '2' },
      }),
    );
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'creds' },
      stringData: { password: 'hunter2' },
    }),
  );
  return ns;
}

test('raven get prints the existing objects once with the server columns, sorted, and exits 0', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const run = await runRaven(['get', 'configmaps', '-n', ns, '-l', 'app=get-test'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.split('\n').filter((l) => l !== '');
  assert.match(lines[0] ?? '', /^NAME\s+DATA\s+AGE$/, 'the server columns, no EVENT column');
  assert.match(lines[1] ?? '', /^alpha\s+2\s+\d+s$/);
  assert.match(lines[2] ?? '', /^beta\s+2\s+\d+s$/);
  assert.equal(lines.length, 3, run.stdout);
  assert.equal(run.stderr, '');

  const names = await runRaven(['get', 'cm', '-n', ns, '-l', 'app=get-test', '-o', 'name'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(names.code, 0, names.stderr);
  assert.equal(names.stdout.trim(), 'configmap/alpha\nconfigmap/beta');
});

test('raven get -o json prints a List, or the named object, with Secret values redacted', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const list = await runRaven(['get', 'cm', '-n', ns, '-l', 'app=get-test', '-o', 'json'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(list.code, 0, list.stderr);
  const parsed = JSON.parse(list.stdout) as { kind: string; items: { metadata: { name: string } }[] };
  assert.equal(parsed.kind, 'List');
  assert.deepEqual(
    parsed.items.map((i) => i.metadata.name),
    ['alpha', 'beta'],
  );

  const secret = await runRaven(['get', 'secret', 'creds', '-n', ns, '-o', 'json'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(secret.code, 0, secret.stderr);
  const object = JSON.parse(secret.stdout) as { kind: string; data: Record<string, string> };
  assert.equal(object.kind, 'Secret');
  assert.ok(!secret.stdout.includes(Buffer.from('hunter2').toString('base64')), 'the value is not shown');
  assert.match(object.data.password ?? '', /^\[redacted\]/);
});

test('raven get exits 1 for a named object that does not exist and for an unknown resource, 0 with a note when nothing matches', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const missing = await runRaven(['get', 'cm', 'nope', '-n', ns], { kubeconfig: plane.kubeconfig });
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error from server (NotFound): configmaps "nope" not found\n');

  const none = await runRaven(['get', 'cm', '-n', ns, '-l', 'app=nothing'], { kubeconfig: plane.kubeconfig });
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, '');
  assert.equal(none.stderr, `No resources found in ${ns} namespace.\n`);

  const unknown = await runRaven(['get', 'configmapz', '-n', ns], { kubeconfig: plane.kubeconfig });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /configmapz/);

  const usage = await runRaven(['get', 'cm', '-o', 'diff'], { kubeconfig: plane.kubeconfig });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /raven watch -o diff/);
});

test('raven get exits 1 naming the address when the apiserver cannot be reached', async (t) => {
  const plane = await sharedCluster();
  // The same kubeconfig, pointing at a loopback port where nothing listens.
  const config = parse(await readFile(plane.kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) c.cluster.server = 'https://127.0.0.1:1';
  const path = join(await tempDir(t), 'kubeconfig');
  await writeFile(path, stringify(config), { mode: 0o600 });
  const run = await runRaven(['get', 'cm', '-n', 'default'], { kubeconfig: path });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /^raven get: .*ECONNREFUSED 127\.0\.0\.1:1/);
});
