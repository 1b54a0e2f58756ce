/**
 * Layers only point down: every relative import in src/ goes to the importing file's own folder
 * or to a folder listed below it in docs/layers.md, the one place the order is defined.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function layerOrder(): string[] {
  const doc = readFileSync(join(root, 'docs', 'layers.md'), 'utf8');
  const block = /<!-- layers:begin -->([\s\S]*?)<!-- layers:end -->/.exec(doc)?.[1] ?? '';
  return [...block.matchAll(/^\d+\. `([a-z-]+)`/gm)].map((m) => m[1] ?? '');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The top folder of a path under src/, or '' for src/index.ts itself. */
function layerOf(path: string): string {
  const parts = relative(src, path).split('/');
  return parts.length > 1 ? (parts[0] ?? '') : '';
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;

test('the layer order lists every folder under src/ once', () => {
  const order = layerOrder();
  assert.ok(order.length >= 10, `docs/layers.md lists too few layers: ${order.join(', ')}`);
  assert.equal(new Set(order).size, order.length, 'a layer is listed twice');
  const folders = readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  assert.deepEqual([...order].sort(), folders);
});

test('no module imports from a layer above its own', () => {
  const order = layerOrder();
  const rank = new Map(order.map((name, i) => [name, i]));
  const upward: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = layerOf(file);
    if (from === '') continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? '';
      const to = layerOf(resolve(dirname(file), spec));
      if (to === '' || to === from) continue;
      if ((rank.get(to) ?? Infinity) > (rank.get(from) ?? -1))
        upward.push(`${relative(root, file)} (${from}) imports ${spec} (${to})`);
    }
  }
  assert.deepEqual(upward, [], `imports that point up:\n${upward.join('\n')}`);
});

test('the check sees an upward import', () => {
  const sample = "import { Daemon } from '../raven/daemon.js';\nexport { x } from './x.js';";
  const specs = [...sample.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
  assert.deepEqual(specs, ['../raven/daemon.js', './x.js']);
});
