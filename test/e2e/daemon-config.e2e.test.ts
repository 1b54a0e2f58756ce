/**
 * What an operator sees when starting the daemon: a bad config is refused with a message naming
 * the file and the field (by `raven run` and `raven check`); an unknown resource is named by its
 * field with a suggestion; /healthz, /readyz and /metrics answer on the port picked at start-up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedCluster, freshNamespace, deleteNamespace, kubeconfigVia } from '../harness/test-cluster.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import {
  healthUrl,
  httpGet,
  ok,
  runRaven,
  startRaven,
  tempDir,
  until,
  writeConfig,
} from './daemon-process.js';

test('a bad config is refused by raven run and raven check, naming the file and each field', async (t) => {
  const plane = await sharedCluster();
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
logLevel: warning
watchers:
  - { name: cms, resource: configmaps, events: [added, changed] }
sinks:
  - { name: hook, type: webhook, url: 'http://127.0.0.1:1/x', timeout: 5 }
routes:
  - { watchers: '*', sinks: [hok] }
`,
    'bad.yaml',
  );
  const problems = [
    /bad\.yaml: logLevel: expected one of trace, debug, info, warn, error, got "warning" \(did you mean "warn"\?\)/,
    /bad\.yaml: watchers\[0\]\.events\[1\]: .*"changed"/,
    /bad\.yaml: sinks\[0\]\.timeout: unknown key "timeout" \(did you mean "timeoutSeconds"\?\)/,
    /bad\.yaml: routes\[0\]\.sinks\[0\]: unknown sink "hok" \(did you mean "hook"\?\)/,
  ];

  const run = await runRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /^raven run: .*bad\.yaml: 4 problems in the configuration/);
  for (const problem of problems) assert.match(run.stderr, problem);
  assert.equal(run.stdout, '');

  // The file's errors come first: no cluster is asked.
  const check = await runRaven(['check', '-c', config]);
  assert.equal(check.code, 1, check.stderr);
  for (const problem of problems) assert.match(check.stderr, problem);
  assert.match(check.stderr, /bad\.yaml: 4 errors/);

  const missing = await runRaven(['run', '-c', `${dir}/nowhere.yaml`]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /nowhere\.yaml/);
});

test('an unknown resource is named by its field, with a suggestion', async (t) => {
  const plane = await sharedCluster();
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
watchers:
  - { name: cms, resource: configmaps }
  - { name: deploys, resource: deploymentz }
sinks:
  - { name: console, type: stdout }
`,
  );
  // Valid as a file (--offline); against the cluster, raven check names it as raven run does.
  const offline = await runRaven(['check', '--offline', '-c', config]);
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /valid \(2 watchers, 1 sink\b/);
  const check = await runRaven(['check', '-c', config], { kubeconfig: plane.kubeconfig });
  assert.equal(check.code, 1, check.stdout);
  assert.match(
    check.stderr,
    /^error: \S+\/raven\.yaml: watchers\[1\]\.resource: .*"deploymentz".*did you mean deployments\.apps\?$/m,
  );

  const run = await runRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  assert.equal(run.code, 1, run.stderr);
  assert.match(
    run.stderr,
    /^raven run: \S+\/raven\.yaml: watchers\[1\]\.resource: .*"deploymentz".*did you mean deployments\.apps\?$/m,
  );
  assert.equal(run.stdout, '', 'nothing was watched');
});

test('/healthz answers at once, /readyz is 503 until the watchers synced, /metrics counts events and deliveries', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  // The apiserver is unreachable at first: the daemon serves health while it keeps trying.
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: plane.state.ports.apiserver });
  t.after(() => proxy.close());
  proxy.refuse();
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
watchers:
  - { name: cms, resource: configmaps, namespaces: [${ns}] }
sinks:
  - { name: archive, type: file, path: ./events.jsonl }
`,
  );
  const raven = startRaven(['run', '-c', config], { kubeconfig: await kubeconfigVia(plane, proxy, dir) });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  const url = await healthUrl(raven);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the default address, on the port picked at start-up');
  assert.notEqual(url, 'http://127.0.0.1:0');
  await raven.waitForLog('cannot reach the apiserver for discovery; retrying');

  const healthz = await httpGet(`${url}/healthz`);
  assert.deepEqual(healthz, { status: 200, body: 'ok\n' });
  const notReady = await httpGet(`${url}/readyz`);
  assert.equal(notReady.status, 503);
  assert.deepEqual(JSON.parse(notReady.body), { ready: false, details: { watchers: 'starting' } });

  proxy.accept();
  let ready = { status: 0, body: '' };
  await until(
    '/readyz 200 once synced',
    async () => (ready = await httpGet(`${url}/readyz`)).status === 200,
    { show: () => `${ready.status} ${ready.body}\n${raven.stderr()}` },
  );
  assert.deepEqual(JSON.parse(ready.body), { ready: true, details: {} });

  await ok(plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'one' } }));
  let metrics = '';
  await until(
    'the change counted and delivered',
    async () => (metrics = (await httpGet(`${url}/metrics`)).body).includes('outcome="delivered"'),
    { show: () => metrics },
  );
  assert.match(metrics, /^# TYPE raven_events_total counter$/m);
  assert.match(metrics, /^raven_events_total\{watcher="cms",type="added"\} 1$/m);
  assert.match(metrics, /^# TYPE raven_deliveries_total counter$/m);
  assert.match(metrics, /^raven_deliveries_total\{sink="archive",outcome="delivered"\} 1$/m);
  assert.match(metrics, /^raven_watcher_synced\{watcher="cms"\} 1$/m);
  assert.match(metrics, /^raven_leader 1$/m);
  assert.match(metrics, /^raven_process_resident_memory_bytes \d+/m);
  assert.equal((await httpGet(`${url}/nope`)).status, 404);

  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
});
