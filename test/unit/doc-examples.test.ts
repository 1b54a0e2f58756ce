/**
 * Every import a document shows is one a user can write: the TypeScript and JavaScript blocks of
 * README.md and docs/*.md import the package (`kube-raven`, `kube-raven/<subpath>`), never a
 * source path, and their imports type-check against the built package (dist/, through
 * package.json's `exports`, as an installed copy resolves them). Every `@example` in src/ is
 * compiled against its own module's exports (from dist/) and the package's.
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
    for (const match of text.matchAll(
      /^```(ts|typescript|js|javascript|mjs)(?: program)?\n([\s\S]*?)^```/gm,
    )) {
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

/** Type-check files (name → text) in a consumer directory. */
function diagnostics(dir: string, files: Map<string, string>): readonly ts.Diagnostic[] {
  const program = ts.createProgram(
    [...files.keys()].map((name) => join(dir, name)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      // Node's globals only: the DOM's (such as `event`) would stand in for names a snippet leaves free
      lib: ['lib.es2022.d.ts'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
    },
  );
  return ts.getPreEmitDiagnostics(program);
}

/** One message per diagnostic, starting with the file's name. */
function compile(dir: string, files: Map<string, string>): string[] {
  return diagnostics(dir, files).map((d) => {
    const where = d.file === undefined ? '' : `${relative(dir, d.file.fileName)}: `;
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

/** The local names an import declaration binds. */
function namesOf(declaration: ts.ImportDeclaration): string[] {
  const clause = declaration.importClause;
  if (clause === undefined) return [];
  const names = clause.name === undefined ? [] : [clause.name.text];
  const bindings = clause.namedBindings;
  if (bindings === undefined) return names;
  if (ts.isNamespaceImport(bindings)) return [...names, bindings.name.text];
  return [...names, ...bindings.elements.map((e) => e.name.text)];
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

interface Example {
  where: string;
  module: string;
  code: string;
}

async function srcExamples(): Promise<Example[]> {
  const entries = await readdir(join(root, 'src'), { withFileTypes: true, recursive: true });
  const examples: Example[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, 'utf8');
    for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const lines = comment[0].split('\n').map((l) => l.replace(/^\s*\/?\*\*?\/?\s?/, ''));
      let at = lines.findIndex((l) => l.startsWith('@example'));
      while (at !== -1) {
        const end = lines.findIndex((l, i) => i > at && l.startsWith('@'));
        const body = lines
          .slice(at + 1, end === -1 ? undefined : end)
          .join('\n')
          .trim();
        const line = text.slice(0, comment.index).split('\n').length;
        if (body !== '')
          examples.push({ where: `${relative(root, file)}:${line}`, module: file, code: body });
        at = end === -1 ? -1 : lines.findIndex((l, i) => i >= end && l.startsWith('@example'));
      }
    }
  }
  return examples;
}

/** The value and type names a module exports (from its source, which dist/ is built from). */
function exportedNames(program: ts.Program, file: string): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  return symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name);
}

test('every @example in src/ compiles against its module and the package', async () => {
  const examples = await srcExamples();
  assert.ok(examples.length > 50, `found only ${examples.length} @example blocks`);
  const modules = [...new Set(examples.map((e) => e.module))];
  const program = ts.createProgram([join(root, 'src', 'index.ts'), ...modules], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  });
  const rootNames = new Set(exportedNames(program, join(root, 'src', 'index.ts')));
  const errors = await withConsumer(async (dir) => {
    const files = new Map<string, string>();
    const free = new Map<string, Set<string>>();
    const render = (i: number, example: Example): string => {
      const own = new Set(importsOf(example.code).flatMap((d) => namesOf(d)));
      const moduleNames = exportedNames(program, example.module).filter((n) => !own.has(n));
      const dist = join(root, 'dist', relative(join(root, 'src'), example.module)).replace(/\.ts$/, '.js');
      const fromRoot = [...rootNames].filter((n) => !own.has(n) && !moduleNames.includes(n));
      const declared = [...(free.get(`example-${i}.ts`) ?? [])]
        .map((n) => `declare const ${n}: any;\ntype ${n} = any;`)
        .join('\n');
      return [
        `// ${example.where}`,
        ...importsOf(example.code).map((d) => d.getText()),
        moduleNames.length === 0 ? '' : `import { ${moduleNames.join(', ')} } from '${dist}';`,
        fromRoot.length === 0 ? '' : `import { ${fromRoot.join(', ')} } from 'kube-raven';`,
        declared,
        `export async function example() {\n${example.code.replace(/^import .*$/gm, '')}\n}`,
      ].join('\n');
    };
    const write = async (): Promise<void> => {
      for (const [i, example] of examples.entries()) files.set(`example-${i}.ts`, render(i, example));
      for (const [name, text] of files) await writeFile(join(dir, name), text);
    };
    // Names a snippet uses without declaring them (the objects it works on: `client`, `pods`,
    // `signal`) are declared `any` in a second round; a name it calls or constructs is not, so an
    // example calling a function the module and the package do not have still fails.
    await write();
    for (const d of diagnostics(dir, files)) {
      if (
        (d.code !== 2304 && d.code !== 2552 && d.code !== 18004) ||
        d.file === undefined ||
        d.start === undefined
      )
        continue;
      const file = relative(dir, d.file.fileName);
      const name = /^[A-Za-z_$][\w$]*/.exec(d.file.text.slice(d.start))?.[0] ?? '';
      const code = examples[Number(/example-(\d+)/.exec(file)?.[1])]?.code ?? '';
      const called = new RegExp(`(\\bnew\\s+${name}\\b|(^|[^.\\w])${name}\\s*(<[^>]*>)?\\()`).test(code);
      if (name !== '' && !called) free.set(file, (free.get(file) ?? new Set()).add(name));
    }
    await write();
    return compile(dir, files).map((message) => {
      const file = /^(example-\d+\.ts)/.exec(message)?.[1];
      return `${file === undefined ? '' : (files.get(file)?.split('\n')[0] ?? '')} ${message}`;
    });
  });
  assert.deepEqual(errors, []);
});
