import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../bench/lib/child.js';
import { docBlocks, docsWithFigures, renderDoc } from '../../../bench/lib/doc-figures.js';

test('the docs carry the benchmark figures that the committed result files generate (npm run bench:docs)', async () => {
  const docs = docsWithFigures();
  assert.ok(docs.includes('docs/benchmarks.md'), `docs with generated figures: ${docs.join(', ')}`);
  for (const path of docs) {
    const current = readFileSync(join(repoRoot, path), 'utf8');
    assert.equal(await renderDoc(current, path), current, `${path} is stale: run npm run bench:docs`);
  }
});

test('every generated block is used by a doc, and each names its source file', () => {
  const all = docsWithFigures()
    .map((path) => readFileSync(join(repoRoot, path), 'utf8'))
    .join('\n');
  for (const name of Object.keys(docBlocks))
    assert.ok(all.includes(`<!-- bench:${name} -->`), `block ${name} unused`);
  for (const [name, generate] of Object.entries(docBlocks))
    assert.match(
      generate((path) => readFileSync(join(repoRoot, path), 'utf8')),
      /bench\/results\/[\w-]+\.md/,
      name,
    );
});

test('a figure that differs from its result file is found, and a block of no known name is an error', async () => {
  const path = 'docs/benchmarks.md';
  const current = readFileSync(join(repoRoot, path), 'utf8');
  const start = current.indexOf('<!-- bench:decode -->');
  const edited = `${current.slice(0, start)}<!-- bench:decode -->\n| a figure | typed by hand |\n${current.slice(current.indexOf('<!-- /bench:decode -->'))}`;
  assert.notEqual(edited, current);
  assert.equal(await renderDoc(edited, path), current);
  await assert.rejects(
    renderDoc('<!-- bench:nope -->\n<!-- /bench:nope -->\n', path),
    /unknown block "bench:nope"/,
  );
});
