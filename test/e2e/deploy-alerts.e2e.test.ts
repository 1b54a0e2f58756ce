/**
 * The alerting rules (deploy/prometheus/raven-alerts.yaml, and the chart's PrometheusRule): they
 * pass `promtool check rules` and `promtool test rules` (series shaped like Raven's /metrics),
 * every metric they read is one a running `raven run` serves, and the chart renders the same rules
 * (scoped to the release by default), and a ServiceMonitor for the metrics Service, only when asked.
 * promtool comes from Debian's prometheus package (scripts/install-system-packages.sh).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import { exec, rendered, repo, scratch } from './helm-chart.js';
import { httpGet, startRaven, tempDir, waitReady, writeConfig } from './daemon-process.js';
import type { Manifest } from './deploy-manifests.js';

const rulesDir = join(repo, 'deploy', 'prometheus');
const rulesFile = join(rulesDir, 'raven-alerts.yaml');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface Groups {
  groups: { name: string; rules: Rule[] }[];
}

const readRules = async (): Promise<Groups> => parse(await readFile(rulesFile, 'utf8')) as Groups;
const rulesOf = (groups: Groups): Rule[] => groups.groups.flatMap((g) => g.rules);

/** The metric names an expression reads. */
const metricsIn = (expr: string): string[] => [...expr.matchAll(/\braven_[a-z0-9_]+/g)].map((m) => m[0]);

test('the rules pass promtool check rules, and their unit tests pass promtool test rules', async () => {
  const check = await exec('promtool', ['check', 'rules', rulesFile]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /SUCCESS: 7 rules found/);
  const tests = await exec('promtool', ['test', 'rules', join(rulesDir, 'raven-alerts.test.yaml')]);
  assert.equal(tests.code, 0, tests.stdout + tests.stderr);
  assert.match(tests.stdout, /SUCCESS/);
  // Every alert has a unit test and a runbook section.
  const testsText = await readFile(join(rulesDir, 'raven-alerts.test.yaml'), 'utf8');
  const runbooks = await readFile(join(repo, 'docs', 'alerts.md'), 'utf8');
  for (const rule of rulesOf(await readRules())) {
    assert.match(testsText, new RegExp(`alertname: ${rule.alert}\\n`), `${rule.alert} is tested`);
    assert.match(runbooks, new RegExp(`^## ${rule.alert}$`, 'm'), `${rule.alert} has a runbook`);
    assert.equal(rule.annotations?.runbook, `docs/alerts.md#${rule.alert.toLowerCase()}`);
  }
});

test('every metric the rules read is one a running raven run serves on /metrics', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./state/checkpoint.db }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${ns}] }
sinks:
  - { name: console, type: stdout }
`,
  );
  const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  const url = await waitReady(raven);
  const metrics = await httpGet(`${url}/metrics`);
  assert.equal(metrics.status, 200);
  const served = new Map(
    [...metrics.body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  const used = new Set(rulesOf(await readRules()).flatMap((rule) => metricsIn(rule.expr)));
  assert.ok(used.size >= 7, [...used].join(', '));
  for (const name of used) {
    const histogram = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
    if (histogram !== undefined && served.get(histogram) === 'histogram') continue;
    assert.ok(served.has(name), `${name} is served by raven run (served: ${[...served.keys()].join(', ')})`);
  }
});

test('the chart renders the same rules and a ServiceMonitor only when asked, scoped to the release', async (t) => {
  const dir = await scratch(t);
  const kinds = (objects: Manifest[]) => objects.map((m) => m.kind);
  const byDefault = await rendered(dir, {});
  assert.ok(!kinds(byDefault).includes('PrometheusRule') && !kinds(byDefault).includes('ServiceMonitor'));

  const on = { metrics: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } } };
  // Unscoped, with the defaults: exactly the rules file.
  const unscoped = await rendered(dir, {
    metrics: { prometheusRule: { enabled: true, scopeToRelease: false } },
  });
  const rule = unscoped.find((m) => m.kind === 'PrometheusRule') as Manifest & { spec: Groups };
  assert.deepEqual(
    rule.spec,
    await readRules(),
    'deploy/prometheus/raven-alerts.yaml is the chart rules rendered with scopeToRelease: false and the defaults',
  );

  // Scoped (the default), with other bounds: each series of the release's Service only.
  const objects = await rendered(
    dir,
    {
      ...on,
      metrics: {
        ...on.metrics,
        prometheusRule: { enabled: true, deliveryLagSeconds: 30, watcherFailingFor: '2m' },
      },
      leaderElection: { leaseDurationSeconds: 20 },
    },
    'watchers',
  );
  const scoped = objects.find((m) => m.kind === 'PrometheusRule') as Manifest & { spec: Groups };
  const rules = rulesOf(scoped.spec);
  for (const r of rules) {
    const selectors = [...r.expr.matchAll(/\braven_[a-z0-9_]+(\{[^}]*\})?/g)];
    assert.ok(selectors.length > 0);
    for (const [text, braces] of selectors) {
      assert.ok(braces?.startsWith('{namespace="watchers",service="raven-metrics"'), `${r.alert}: ${text}`);
    }
  }
  const named = (alert: string): Rule | undefined => rules.find((r) => r.alert === alert);
  assert.match(named('RavenDeliveryLagHigh')?.expr ?? '', /> 30$/);
  assert.equal(named('RavenWatcherFailing')?.for, '2m');
  assert.equal(named('RavenNoLeader')?.for, '20s');
  // promtool accepts the scoped rules too.
  const file = join(dir, 'scoped.yaml');
  await writeFile(file, stringify(scoped.spec));
  const check = await exec('promtool', ['check', 'rules', file]);
  assert.equal(check.code, 0, check.stdout + check.stderr);

  // The ServiceMonitor selects the metrics Service and scrapes its port by name.
  const service = objects.find((m) => m.kind === 'Service') as Manifest & {
    metadata: { labels: Record<string, string> };
    spec: { ports: { name: string }[] };
  };
  const monitor = objects.find((m) => m.kind === 'ServiceMonitor') as Manifest & {
    spec: {
      namespaceSelector: { matchNames: string[] };
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string; path: string }[];
    };
  };
  assert.deepEqual(monitor.spec.namespaceSelector.matchNames, ['watchers']);
  for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels))
    assert.equal(service.metadata.labels[key], value, `the Service has ${key}=${value}`);
  assert.deepEqual(
    monitor.spec.endpoints.map((e) => [e.port, e.path]),
    [[service.spec.ports[0]?.name, '/metrics']],
  );
});
