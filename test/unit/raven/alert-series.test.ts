/**
 * The promtool unit tests of the alerting rules (deploy/prometheus/raven-alerts.test.yaml) feed
 * series "shaped like a Raven daemon's /metrics". This holds them to it: every input series is a
 * metric the daemon's registry declares, of the type its suffix implies, with exactly the labels
 * the daemon puts on it, plus what a scrape adds (job, instance, and a Kubernetes service
 * discovery's namespace and pod) and `le` on a histogram's buckets. deploy-alerts.e2e checks the
 * metric names against a running daemon's /metrics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { RavenMetrics } from '../../../src/raven/metrics/metrics.js';

const root = resolve(import.meta.dirname, '..', '..', '..');
const SCRAPE_LABELS = new Set(['job', 'instance', 'namespace', 'pod']);

interface TestFile {
  tests: { name: string; input_series: { series: string }[] }[];
}

/** `name{a="x",b="y"}` → the name and the label names. */
function parseSeries(series: string): { name: string; labels: string[] } {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$/.exec(series);
  assert.ok(match?.[1] !== undefined, `a series selector: ${series}`);
  const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"(?:[^"\\]|\\.)*"/g)].map(
    (m) => m[1] ?? '',
  );
  return { name: match[1], labels };
}

test("every input series of the rules' promtool tests has a name, type and labels the daemon serves", async () => {
  const file = parse(
    await readFile(join(root, 'deploy', 'prometheus', 'raven-alerts.test.yaml'), 'utf8'),
  ) as TestFile;
  const { registry } = new RavenMetrics(() => new Map());
  const series = file.tests.flatMap((t) =>
    t.input_series.map((s) => ({ test: t.name, ...parseSeries(s.series) })),
  );
  assert.ok(series.length >= 7, `${series.length} input series`);
  for (const s of series) {
    const histogram = /^(.*)_(bucket|sum|count)$/.exec(s.name)?.[1];
    const metric = registry.getSingleMetric(histogram ?? s.name) ?? registry.getSingleMetric(s.name);
    assert.ok(metric !== undefined, `${s.name} (in "${s.test}") is a metric the daemon declares`);
    const type = (await metric.get()).type;
    if (histogram !== undefined && registry.getSingleMetric(histogram) !== undefined)
      assert.equal(type, 'histogram', `${s.name}: a histogram's series`);
    const names: unknown = 'labelNames' in metric ? metric.labelNames : undefined;
    const declared = Array.isArray(names) ? names.map(String) : [];
    const own = s.labels.filter((l) => !SCRAPE_LABELS.has(l) && !(s.name.endsWith('_bucket') && l === 'le'));
    assert.deepEqual(
      [...own].sort(),
      [...declared].sort(),
      `${s.name} (in "${s.test}"): the labels the daemon puts on it`,
    );
  }
});
