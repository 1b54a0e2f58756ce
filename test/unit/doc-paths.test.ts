/**
 * The documents name only source files that exist: every `src/...` path in docs/*.md and the
 * README is checked against the tree (a glob such as `src/raven/sinks/*.ts` is left out).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

const PATH = /(?<![\w./-])src\/[\w./-]*\w\.(?:ts|json|md)\b/g;

/** The `src/...` paths a text names. */
function pathsIn(text: string): string[] {
  return [...text.matchAll(PATH)].map((m) => m[0]);
}

test('every src/ path named in docs/*.md and README.md exists', () => {
  const docs = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => join('docs', name)),
  ];
  const missing: string[] = [];
  for (const doc of docs)
    for (const path of pathsIn(readFileSync(join(root, doc), 'utf8')))
      if (!existsSync(join(root, path))) missing.push(`${doc}: ${path}`);
  assert.deepEqual(missing, [], `documents name files that do not exist:\n${missing.join('\n')}`);
});

test('the check reads a path, and passes over globs and longer names', () => {
  assert.deepEqual(pathsIn('see `src/raven/daemon.ts` and src/raven/sinks/*.ts, not test/src/x.ts'), [
    'src/raven/daemon.ts',
  ]);
});
