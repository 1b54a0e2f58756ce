/**
 * kubectl's documented JSONPath and custom-columns forms, run as `raven get` (a process) against
 * the real apiserver's objects: escaped dots in keys (`{.data.app\.yaml}`), quoted keys, `[*]`,
 * indexes and slices, filters, recursive descent, `{$}`/`{@}`, unions and `{range}`; `raven get`
 * without a name applies the template to one List, as kubectl does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { ok, runRaven } from './daemon-process.js';

const APP_YAML = 'replicas: 3\nmode: fast';

test('raven get -o jsonpath and -o custom-columns print what kubectl prints for each documented form', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  for (const [name, tier] of [
    ['settings', 'web'],
    ['other', 'db'],
  ] as const)
    await ok(
      plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name, labels: { 'app.kubernetes.io/name': name, tier } },
        data: { 'app.yaml': APP_YAML, mode: tier === 'web' ? 'fast' : 'safe' },
      }),
    );
  const stored = await ok<{ metadata: { uid: string } }>(
    plane.adminRequest('GET', `/api/v1/namespaces/${ns}/configmaps/settings`),
  );

  // [arguments after `raven get cm`, template, stdout]
  const cases: [string[], string, string][] = [
    [['settings'], '{.data.app\\.yaml}', APP_YAML],
    [['settings'], "{.data['app\\.yaml']}", APP_YAML],
    [['settings'], "{.data['app.yaml']}", APP_YAML],
    [['settings'], "{['kind']}", 'ConfigMap'],
    [['settings'], '{.metadata.labels.app\\.kubernetes\\.io/name}', 'settings'],
    [['settings'], '{$.metadata.uid}', stored.metadata.uid],
    [['settings'], '{@.metadata.name}', 'settings'],
    [['settings'], 'name={.metadata.name};', 'name=settings;'],
    [['-l', 'tier'], '{.items[*].metadata.name}', 'other settings'],
    [['-l', 'tier'], '{.items[0].metadata.name}', 'other'],
    [['-l', 'tier'], '{.items[-1:].metadata.name}', 'settings'],
    [['-l', 'tier'], '{.items[?(@.data.mode=="safe")].metadata.name}', 'other'],
    [['-l', 'tier'], '{.items[?(@.metadata.labels.tier=="web")].data.mode}', 'fast'],
    [['-l', 'tier'], "{.items[*]['metadata.name', 'data.mode']}", 'other settings safe fast'],
    [
      ['-l', 'tier'],
      '{range .items[*]}{.metadata.name}{"\\t"}{.data.mode}{"\\n"}{end}',
      'other\tsafe\nsettings\tfast',
    ],
    [['-l', 'tier'], "{range .items[*]}{.metadata.name}{'\\t'}{end}", 'other\tsettings\t'],
    [['settings'], '{..mode}', 'fast'],
    [['-l', 'tier'], '{.kind}', 'List'],
    [['settings'], '{.data.missing}', ''],
  ];
  for (const [args, template, expected] of cases) {
    const run = await runRaven(['get', 'cm', ...args, '-n', ns, '-o', `jsonpath=${template}`], {
      kubeconfig: plane.kubeconfig,
    });
    assert.equal(run.code, 0, `${template}: ${run.stderr}`);
    assert.equal(run.stdout.replace(/\n$/, ''), expected, template);
    assert.equal(run.stderr, '', template);
  }

  // The whole object: {$}, {@} and {.items[0]} print it as JSON.
  for (const [args, template] of [
    [['settings'], '{$}'],
    [['settings'], '{@}'],
    [['-l', 'tier=web'], '{.items[0]}'],
  ] as const) {
    const run = await runRaven(['get', 'cm', ...args, '-n', ns, '-o', `jsonpath=${template}`], {
      kubeconfig: plane.kubeconfig,
    });
    assert.equal(run.code, 0, run.stderr);
    const object = JSON.parse(run.stdout) as { metadata: { uid: string }; data: Record<string, string> };
    assert.equal(object.metadata.uid, stored.metadata.uid, template);
    assert.equal(object.data['app.yaml'], APP_YAML, template);
  }

  const columns = await runRaven(
    [
      'get',
      'cm',
      '-l',
      'tier',
      '-n',
      ns,
      '-o',
      "custom-columns=NAME:.metadata.name,APP:.metadata.labels.app\\.kubernetes\\.io/name,MODE:{.data['mode']},BARE:data.mode,NONE:.data.none",
    ],
    { kubeconfig: plane.kubeconfig },
  );
  assert.equal(columns.code, 0, columns.stderr);
  const rows = columns.stdout.split('\n').filter((l) => l !== '');
  assert.match(rows[0] ?? '', /^NAME\s+APP\s+MODE\s+BARE\s+NONE$/);
  assert.match(rows[1] ?? '', /^other\s+other\s+safe\s+safe\s+<none>$/);
  assert.match(rows[2] ?? '', /^settings\s+settings\s+fast\s+fast\s+<none>$/);

  const value = await runRaven(
    ['get', 'cm', 'settings', '-n', ns, '-o', 'custom-columns=YAML:.data.app\\.yaml'],
    {
      kubeconfig: plane.kubeconfig,
    },
  );
  assert.equal(value.code, 0, value.stderr);
  assert.match(value.stdout, /^YAML\nreplicas: 3 mode: fast$/, 'the value on one line, as a cell');
});

test('a JSONPath subscript that does not parse exits 2 naming what would be valid', async () => {
  const plane = await sharedCluster();
  const run = await runRaven(['get', 'cm', '-o', 'jsonpath={.items[abc]}'], { kubeconfig: plane.kubeconfig });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--output jsonpath: \[abc\] .* is not a valid subscript: use \[0\]/);
  assert.equal(run.stdout, '');
});
