/**
 * Layers only point down: every relative import in src/ goes to the importing file's own folder
 * or to a folder listed below it in docs/layers.md, the one place the order is defined. The same
 * holds inside src/raven, whose folders have an order of their own. And no import cycle anywhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const src = join(root, 'src');
const raven = join(src, 'raven');

/** The numbered list between `<!-- {marker}:begin -->` and its end in docs/layers.md. */
function layerOrder(marker = 'layers'): string[] {
  const doc = readFileSync(join(root, 'docs', 'layers.md'), 'utf8');
  const block = new RegExp(`<!-- ${marker}:begin -->([\\s\\S]*?)<!-- ${marker}:end -->`).exec(doc)?.[1] ?? '';
  return [...block.matchAll(/^\d+\. `([a-z-]+)`/gm)].map((m) => m[1] ?? '');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** The top folder of a path under `base`, or '' for a file directly in it. */
function layerOf(path: string, base = src): string {
  const parts = relative(base, path).split('/');
  if (parts[0] === '..') return '..';
  return parts.length > 1 ? (parts[0] ?? '') : '';
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;

/** Each relative import of `file`, as the specifier and the path it names. */
function importsOf(file: string): { spec: string; path: string }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => {
    const spec = match[1] ?? match[2] ?? '';
    return { spec, path: resolve(dirname(file), spec) };
  });
}

/**
 * Imports of files under `base` that point to a folder of `base` ranked above the importer's.
 * Files directly in `base` stand above every folder in it.
 */
function upwardImports(base: string, order: readonly string[]): string[] {
  const rank = new Map(order.map((name, i) => [name, i]));
  const upward: string[] = [];
  for (const file of sourceFiles(base)) {
    const from = layerOf(file, base);
    if (from === '') continue;
    for (const { spec, path } of importsOf(file)) {
      const to = layerOf(path, base);
      if (to === '' || to === '..' || to === from) continue;
      if ((rank.get(to) ?? Infinity) > (rank.get(from) ?? -1))
        upward.push(`${relative(root, file)} (${from}) imports ${spec} (${to})`);
    }
  }
  return upward;
}

/** The import graph of `files`: each file with the files it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => [
      relative(root, file),
      importsOf(file)
        .map(({ path }) => path.replace(/\.js$/, '.ts'))
        .filter((path) => existsSync(path))
        .map((path) => relative(root, path)),
    ]),
  );
}

/** The cycles of `graph`: each strongly connected group of more than one module. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative over the graph's nodes, recursive along each path.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

test('the layer order lists every folder under src/ once', () => {
  const order = layerOrder();
  assert.ok(order.length >= 10, `docs/layers.md lists too few layers: ${order.join(', ')}`);
  assert.equal(new Set(order).size, order.length, 'a layer is listed twice');
  assert.deepEqual([...order].sort(), folders(src));
});

test('no module imports from a layer above its own', () => {
  const upward = upwardImports(src, layerOrder());
  assert.deepEqual(upward, [], `imports that point up:\n${upward.join('\n')}`);
});

test('the order inside src/raven lists every folder of src/raven once', () => {
  const order = layerOrder('raven-layers');
  assert.ok(order.length >= 5, `docs/layers.md lists too few layers in src/raven: ${order.join(', ')}`);
  assert.equal(new Set(order).size, order.length, 'a layer of src/raven is listed twice');
  assert.deepEqual([...order].sort(), folders(raven));
});

test('docs/layers.md names every file directly in src/raven, the wiring above its folders', () => {
  const doc = readFileSync(join(root, 'docs', 'layers.md'), 'utf8');
  const intro = /## Inside `src\/raven`([\s\S]*?)<!-- raven-layers:begin -->/.exec(doc)?.[1] ?? '';
  const named = [...intro.matchAll(/`([a-z-]+\.ts)`/g)].map((m) => m[1] ?? '').sort();
  const files = readdirSync(raven, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => entry.name)
    .sort();
  assert.deepEqual(named, files);
});

test('no module in src/raven imports from a folder of src/raven above its own', () => {
  const upward = upwardImports(raven, layerOrder('raven-layers'));
  assert.deepEqual(upward, [], `imports that point up inside src/raven:\n${upward.join('\n')}`);
});

test('no import cycle in src/, type-only imports included', () => {
  const cycles = cyclesOf(importGraph(sourceFiles(src)));
  assert.deepEqual(
    cycles,
    [],
    `modules that import each other:\n${cycles.map((c) => c.join(' → ')).join('\n')}`,
  );
});

test('the check sees an upward import', () => {
  const sample = "import { Daemon } from '../raven/daemon.js';\nexport { x } from './x.js';";
  const specs = [...sample.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
  assert.deepEqual(specs, ['../raven/daemon.js', './x.js']);
});

test('the cycle check sees a cycle through three modules, and no cycle in a chain', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts', 'd.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', []],
  ]);
  assert.deepEqual(cyclesOf(graph), [['a.ts', 'b.ts', 'c.ts']]);
  assert.deepEqual(
    cyclesOf(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', []],
      ]),
    ),
    [],
  );
});
