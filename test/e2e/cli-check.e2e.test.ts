/**
 * `raven check` as a user runs it, against the real apiserver: every watcher's resource is
 * resolved through discovery, and each name the cluster does not serve is an error on its field
 * with the nearest served names (plural, singular, short name, kind; a CRD too). No reachable
 * cluster is an error that names `--offline`; `--offline` checks the file alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedCluster, kubeconfigVia } from '../harness/test-cluster.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import { runRaven, tempDir, writeConfig } from './daemon-process.js';
import { testCrd } from './test-crd.js';

const sinks = `checkpoint: { type: memory }
sinks:
  - { name: console, type: stdout }
`;

test('raven check resolves every watcher’s resource on the cluster and names each misspelled one with its nearest names', async (t) => {
  const plane = await sharedCluster();
  const { name: crd } = await testCrd(t, plane, {
    plural: 'sprockets',
    singular: 'sprocket',
    kind: 'Sprocket',
    shortNames: ['spr'],
  });
  // [resource, the suggestion: undefined when it is served, null when nothing is close]
  const table: [string, string | null | undefined][] = [
    ['pods', undefined],
    ['pdos', 'did you mean pods?'], // two letters swapped
    ['podz', 'did you mean pods?'],
    ['deploy', undefined], // a short name
    ['dpeloy', 'did you mean deployments.apps?'], // a misspelled short name
    ['Deploymnet', 'did you mean deployments.apps?'], // a misspelled kind
    ['spr', undefined], // the CRD's short name
    ['sprokcets', `did you mean ${crd}?`],
    ['frobnicators', null],
  ];
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `watchers:\n${table.map(([resource], i) => `  - { name: w${i}, resource: ${resource} }\n`).join('')}${sinks}`,
  );

  const check = await runRaven(['check', '-c', config], { kubeconfig: plane.kubeconfig });
  assert.equal(check.code, 1, check.stderr);
  assert.equal(check.stdout, '');
  const errors = check.stderr.split('\n').filter((line) => line.startsWith('error: '));
  const expected = table.flatMap(([resource, says], i) => {
    if (says === undefined) return [];
    const hint = says === null ? '' : `; ${says}`;
    return [
      `error: ${config}: watchers[${i}].resource: the server does not serve a resource named "${resource}"${hint}`,
    ];
  });
  assert.deepEqual(errors, expected);
  assert.match(check.stderr, new RegExp(`^${config}: ${expected.length} errors$`, 'm'));

  // --offline: the same file is valid as a file.
  const offline = await runRaven(['check', '--offline', '-c', config]);
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /: valid \(9 watchers, 1 sink, .*; resources not checked: --offline\)$/m);
});

test('raven check passes a config whose every resource the cluster serves', async (t) => {
  const plane = await sharedCluster();
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `watchers:
  - { name: pods, resource: pods }
  - { name: deploys, resource: apps/v1/deployments }
  - { name: events, type: events }
${sinks}`,
  );
  const check = await runRaven(['check', '-c', config], { kubeconfig: plane.kubeconfig });
  assert.equal(check.code, 0, check.stderr);
  assert.equal(check.stderr, '');
  assert.match(check.stdout, /raven\.yaml: valid \(3 watchers, 1 sink, .*; resources served\)$/m);
});

test('raven check without a reachable cluster fails, saying the resources were not checked and that --offline skips them', async (t) => {
  const plane = await sharedCluster();
  const dir = await tempDir(t);
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: plane.state.ports.apiserver });
  t.after(() => proxy.close());
  proxy.closePort(); // nothing listens: the apiserver is down
  const config = await writeConfig(dir, `watchers:\n  - { name: pods, resource: pods }\n${sinks}`);

  const down = await runRaven(['check', '-c', config], {
    kubeconfig: await kubeconfigVia(plane, proxy, dir),
  });
  assert.equal(down.code, 1, down.stderr);
  assert.equal(down.stdout, '');
  assert.equal(
    down.stderr,
    `error: ${config}: the watchers' resources were not checked: cannot ask https://127.0.0.1:${proxy.port} (connection refused); ` +
      'point to a reachable cluster (--kubeconfig, --context) or check the file alone with --offline\n',
  );

  const none = await runRaven(['check', '-c', config, '--kubeconfig', `${dir}/nowhere`]);
  assert.equal(none.code, 1, none.stderr);
  assert.match(
    none.stderr,
    /^error: \S+raven\.yaml: the watchers' resources were not checked: no cluster to ask \(.*nowhere.*\); .*--offline\n$/,
  );

  const offline = await runRaven(['check', '-c', config, '--offline']);
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /valid \(1 watcher, .*; resources not checked: --offline\)/);
});
