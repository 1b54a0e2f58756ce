/**
 * `raven watch` prints the apiserver's own columns (the Table form), as a process against the real
 * control plane: Events' TYPE/REASON/OBJECT/MESSAGE, a Service's TYPE/CLUSTER-IP/PORT(S), a CRD's
 * additionalPrinterColumns (no AGE unless the CRD lists it, as the server prints them), and with `-o wide` the columns of priority > 0; rows printed for
 * changes carry the cells of the new state.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { ok, runRaven, startRaven, until, type RavenProcess } from './daemon-process.js';
import { testCrd } from './test-crd.js';

async function namespaceOn(t: TestContext, plane: ControlPlane): Promise<string> {
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  return ns;
}

async function watchUntil(t: TestContext, raven: RavenProcess, what: string, line: RegExp): Promise<void> {
  t.after(() => raven.kill('SIGKILL'));
  await until(what, () => raven.stdout.some((l) => line.test(l)) || raven.exitedYet(), {
    show: () => `${raven.stdout.join('\n')}\n${raven.stderr()}`,
  });
  assert.ok(
    raven.stdout.some((l) => line.test(l)),
    `${what}:\n${raven.stdout.join('\n')}\n${raven.stderr()}`,
  );
}

async function interrupt(raven: RavenProcess): Promise<void> {
  raven.kill('SIGINT');
  const exit = await raven.exited;
  assert.equal(exit.code, 0, raven.stderr());
}

test('raven watch events shows the type, reason, object and message the server prints', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/events`, {
      metadata: { name: 'web.1' },
      involvedObject: { kind: 'Pod', name: 'web-0', namespace: ns },
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      type: 'Warning',
      firstTimestamp: new Date().toISOString(),
      lastTimestamp: new Date().toISOString(),
      count: 3,
    }),
  );
  const raven = startRaven(['watch', 'events', '-n', ns], { kubeconfig: plane.kubeconfig });
  await watchUntil(
    t,
    raven,
    'the event row',
    /^EXISTING\s.*Warning\s+BackOff\s+pod\/web-0\s+Back-off restarting/,
  );
  assert.match(raven.stdout[0] ?? '', /^EVENT\s+TIME\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
  await interrupt(raven);
});

test('raven watch services shows the cluster IP and ports, and a change prints the new state', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80 }], selector: { app: 'web' } },
    }),
  );
  const raven = startRaven(['watch', 'svc', '-n', ns], { kubeconfig: plane.kubeconfig });
  await watchUntil(
    t,
    raven,
    'the service row',
    /^EXISTING\s+web\s+ClusterIP\s+[\d.]+\s+<none>\s+80\/TCP\s+\d+s$/,
  );
  assert.match(
    raven.stdout[0] ?? '',
    /^EVENT\s+TIME\s+NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/,
  );
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/services/web`, {
      spec: {
        ports: [
          { port: 80, name: 'http' },
          { port: 8080, name: 'alt' },
        ],
      },
    }),
  );
  await watchUntil(
    t,
    raven,
    'the modified row',
    /^MODIFIED\s+\d\d:\d\d:\d\d\s+web\s+ClusterIP\s+.*80\/TCP,8080\/TCP/,
  );
  await interrupt(raven);
});

test('raven watch shows a CRD’s printer columns, and -o wide adds those of priority 1', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const {
    group,
    name: crd,
    path,
  } = await testCrd(t, plane, { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' }, [
    { name: 'Colour', type: 'string', jsonPath: '.spec.colour' },
    { name: 'Size', type: 'integer', jsonPath: '.spec.size', priority: 1 },
  ]);
  const gadgets = path(ns);
  await ok(
    plane.adminRequest('POST', gadgets, {
      apiVersion: `${group}/v1`,
      kind: 'Gadget',
      metadata: { name: 'g1' },
      spec: { colour: 'teal', size: 7 },
    }),
  );

  const plain = startRaven(['watch', crd, '-n', ns], { kubeconfig: plane.kubeconfig });
  await watchUntil(t, plain, 'the default columns', /^EXISTING\s+g1\s+teal$/);
  assert.match(plain.stdout[0] ?? '', /^EVENT\s+TIME\s+NAME\s+COLOUR$/);
  const wide = startRaven(['watch', crd, '-n', ns, '-o', 'wide'], { kubeconfig: plane.kubeconfig });
  await watchUntil(t, wide, 'the wide columns', /^EXISTING\s+g1\s+teal\s+7$/);
  assert.match(wide.stdout[0] ?? '', /^EVENT\s+TIME\s+NAME\s+COLOUR\s+SIZE$/);
  await Promise.all([interrupt(plain), interrupt(wide)]);
});

test('raven watch -o name, -o jsonpath and -o custom-columns print each object as asked', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'settings', labels: { tier: 'web' } },
      data: { mode: 'fast' },
    }),
  );
  const name = startRaven(['watch', 'cm', 'settings', '-n', ns, '-o', 'name'], {
    kubeconfig: plane.kubeconfig,
  });
  const path = startRaven(
    ['watch', 'cm', 'settings', '-n', ns, '-o', 'jsonpath={.metadata.name}{"\\t"}{.data.mode}'],
    { kubeconfig: plane.kubeconfig },
  );
  const columns = startRaven(
    [
      'watch',
      'cm',
      'settings',
      '-n',
      ns,
      '-o',
      'custom-columns=NAME:.metadata.name,TIER:.metadata.labels.tier,MISSING:.data.none',
    ],
    { kubeconfig: plane.kubeconfig },
  );
  await watchUntil(t, name, 'the name', /^configmap\/settings$/);
  await watchUntil(t, path, 'the template', /^settings\tfast$/);
  await watchUntil(t, columns, 'the row', /^settings\s+web\s+<none>$/);
  assert.match(columns.stdout[0] ?? '', /^NAME\s+TIER\s+MISSING$/);
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/settings`, { data: { mode: 'safe' } }),
  );
  await watchUntil(t, path, 'the template for the change', /^settings\tsafe$/);
  await until(
    'a second name line',
    () => name.stdout.filter((l) => l === 'configmap/settings').length === 2,
    {
      show: () => name.stdout.join('\n'),
    },
  );
  await Promise.all([interrupt(name), interrupt(path), interrupt(columns)]);
});

test('an --output that does not parse exits 2 naming the option and what is valid', async () => {
  const plane = await sharedCluster();
  const run = await runRaven(['watch', 'cm', '-o', 'jsonpath={.metadata.name'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /--output jsonpath: unclosed "\{" at position 1/);
  const unknown = await runRaven(['watch', 'cm', '-o', 'xml'], { kubeconfig: plane.kubeconfig });
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /--output must be one of .*jsonpath=TEMPLATE, custom-columns=SPEC; got "xml"/);
});

test('a change on line 21 of a 40-line ConfigMap value shows as that line, in the table and with -o diff', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceOn(t, plane);
  const lines = Array.from({ length: 40 }, (_, i) => `option_${i + 1}: ${'x'.repeat(20)}`);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'app' },
      data: { 'app.yaml': `${lines.join('\n')}\n` },
    }),
  );
  const table = startRaven(['watch', 'cm', 'app', '-n', ns], { kubeconfig: plane.kubeconfig });
  const diff = startRaven(['watch', 'cm', 'app', '-n', ns, '-o', 'diff'], { kubeconfig: plane.kubeconfig });
  await watchUntil(t, table, 'the existing row', /^EXISTING\s+app\b/);
  await watchUntil(t, diff, 'the existing row', /^EXISTING\s+app\b/);
  const edited = lines.map((l, i) => (i === 20 ? 'option_21: edited' : l));
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/app`, {
      data: { 'app.yaml': `${edited.join('\n')}\n` },
    }),
  );
  for (const raven of [table, diff]) {
    await watchUntil(t, raven, 'the new line', /^\s+\+option_21: edited$/);
    const at = raven.stdout.findIndex((l) => /^MODIFIED\s+\d\d:\d\d:\d\d\s+app\b/.test(l));
    const shown = raven.stdout.slice(at + 1, at + 7).map((l) => l.trim());
    // The path's line names who made the change (the harness's requests name no field manager).
    const by = / {2}by \S+ \(Update\) at \d\d:\d\d:\d\d$/;
    assert.match(shown[0] ?? '', by);
    assert.deepEqual(
      shown.map((l) => l.replace(by, '')),
      [
        'data["app.yaml"]: text changed (40 → 40 lines)',
        '@@ -18,7 +18,7 @@',
        `option_18: ${'x'.repeat(20)}`,
        `option_19: ${'x'.repeat(20)}`,
        `option_20: ${'x'.repeat(20)}`,
        `-option_21: ${'x'.repeat(20)}`,
      ],
    );
  }
  await Promise.all([interrupt(table), interrupt(diff)]);
});
