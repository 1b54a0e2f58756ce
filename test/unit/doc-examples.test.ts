/**
 * Every import a document shows is one a user can write: the TypeScript and JavaScript blocks of
 * README.md and docs/*.md import the package (`kube-raven`, `kube-raven/<subpath>`), never a
 * source path, and their imports type-check against the built package (dist/, through
 * package.json's `exports`, as an installed copy resolves them). Every `@example` in src/ is
 * compiled against its own module's exports and the package's; see `example-check.ts` for what a
 * snippet may leave undeclared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..', '..');

/** Documents for contributors, whose blocks import the test harness: not the package's API. */
const CONTRIBUTOR_DOCS = new Set(['docs/openstack-lab.md']);

interface Block {
  where: string;
  code: string;
}

async function docBlocks(): Promise<Block[]> {
  const docs = ['README.md', ...(await readdir(join(root, 'docs'))).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith('.md'),
  );
  const blocks: Block[] = [];
  for (const doc of docs) {
    const text = await readFile(join(root, doc), 'utf8');
    for (const match of text.matchAll(/^```(ts|typescript|js|javascript|mjs)\n([\s\S]*?)^```/gm)) {
      const line = text.slice(0, match.index).split('\n').length;
      blocks.push({ where: `${doc}:${line}`, code: match[2] ?? '' });
    }
  }
  return blocks;
}

function importsOf(code: string): ts.ImportDeclaration[] {
  const file = ts.createSourceFile('block.ts', code, ts.ScriptTarget.ES2022, true);
  return file.statements.filter(ts.isImportDeclaration);
}

function specifier(declaration: ts.ImportDeclaration): string {
  return (declaration.moduleSpecifier as ts.StringLiteral).text;
}

async function withConsumer<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  assert.ok(existsSync(join(root, 'dist', 'index.d.ts')), 'dist/ is missing: run `npm run build` first');
  const dir = await mkdtemp(join(tmpdir(), 'raven-doc-imports-'));
  try {
    await mkdir(join(dir, 'node_modules'));
    await symlink(root, join(dir, 'node_modules', 'kube-raven'), 'dir');
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Type-check files (name → text) in a consumer directory; one message per diagnostic. */
function compile(dir: string, files: Map<string, string>): string[] {
  const program = ts.createProgram(
    [...files.keys()].map((name) => join(dir, name)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
    },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file === undefined ? '' : `${relative(dir, d.file.fileName)}: `;
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

test('documents import the package, never a source path', async () => {
  const offending: string[] = [];
  for (const block of await docBlocks()) {
    if (CONTRIBUTOR_DOCS.has(block.where.split(':')[0] ?? '')) continue;
    for (const declaration of importsOf(block.code)) {
      const from = specifier(declaration);
      if (from.startsWith('.') || from.startsWith('/')) offending.push(`${block.where}: ${from}`);
    }
  }
  assert.deepEqual(offending, []);
});

test('every import of kube-raven in README.md and docs/ type-checks against the built package', async () => {
  const blocks = await docBlocks();
  const files = new Map<string, string>();
  for (const [i, block] of blocks.entries()) {
    const imports = importsOf(block.code).filter((d) => /^kube-raven(\/|$)/.test(specifier(d)));
    if (imports.length === 0) continue;
    files.set(
      `block-${i}.ts`,
      `// ${block.where}\n${imports.map((d) => d.getText()).join('\n')}\nexport {};\n`,
    );
  }
  assert.ok(files.size >= 5, `found only ${files.size} blocks importing kube-raven`);
  const errors = await withConsumer(async (dir) => {
    for (const [name, text] of files) await writeFile(join(dir, name), text);
    return compile(dir, files).map((message) => {
      const file = /^(block-\d+\.ts)/.exec(message)?.[1];
      const where = file === undefined ? '' : (files.get(file)?.split('\n')[0] ?? '');
      return `${where} ${message}`;
    });
  });
  assert.deepEqual(errors, []);
});
