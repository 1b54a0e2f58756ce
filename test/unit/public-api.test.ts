/**
 * The public API is a decision, signatures included: every entry point of package.json's
 * `exports` has a report under `api/` (its declarations as the published `.d.ts` files state them,
 * written by scripts/api-report.ts), and any difference from the code fails here. After a
 * deliberate change, run `npm run api:update` and review the reports' diff with the change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { API_DIR, apiReport, type ApiReport, entryPoints, reportFile } from '../../scripts/api-report.js';

/** kube-raven/client-node may pass client-node through whole; no other entry point re-exports a module. */
const PASSED_THROUGH = { entry: 'kube-raven/client-node', line: "export * from '@kubernetes/client-node';" };

let built: ApiReport | undefined;
/** The report takes a declaration emit of src/: build it once for this file's tests. */
function report(): ApiReport {
  built ??= apiReport();
  return built;
}

test('every entry point declares what its report under api/ records', async () => {
  const { reports } = report();
  const stale: string[] = [];
  for (const [entry, text] of reports) {
    const file = reportFile(entry);
    const recorded = await readFile(file, 'utf8').catch(() => undefined);
    if (recorded !== text) stale.push(`api/${basename(file)}`);
  }
  const expected = new Set([...reports.keys()].map((entry) => basename(reportFile(entry))));
  const extra = (await readdir(API_DIR)).filter((f) => f.endsWith('.api.md') && !expected.has(f));
  assert.deepEqual(
    { stale, extra },
    { stale: [], extra: [] },
    'the public API changed: if on purpose, run `npm run api:update` and commit the diff of api/',
  );
});

test('every type an exported signature uses is exported too', () => {
  assert.deepEqual(report().forgotten, []);
});

test('entry points list their names: no `export *` but client-node passed through by kube-raven/client-node', async () => {
  for (const { name, source } of entryPoints()) {
    const text = await readFile(source, 'utf8');
    const rest = name === PASSED_THROUGH.entry ? text.replace(PASSED_THROUGH.line, '') : text;
    assert.doesNotMatch(rest, /export \* from/, `${name} (${source}) re-exports a whole module`);
  }
});

test('the root does not export test helpers, the daemon, the CLI, OpenStack or the translator', () => {
  const rootSources = report().origins.get('kube-raven') ?? [];
  assert.ok(rootSources.length > 0);
  const leaking = rootSources.filter((file) =>
    /^src\/(testing|raven|cli|ui|openstack|translator)\//.test(file),
  );
  assert.deepEqual([...new Set(leaking)], []);
});

test('every index.ts under src/ is an entry point: no barrel that only re-exports for the inside', async () => {
  const root = resolve(import.meta.dirname, '..', '..');
  const entries = await readdir(join(root, 'src'), { recursive: true, withFileTypes: true });
  const barrels = entries
    .filter((e) => e.isFile() && e.name === 'index.ts')
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
  const sources = entryPoints()
    .map(({ source }) => relative(root, source))
    .sort();
  assert.deepEqual(barrels, sources);
});
