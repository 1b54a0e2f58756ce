/**
 * The public API is a decision: every name each entry point of package.json's `exports` offers
 * is recorded in `public-api.snapshot.txt`, and any difference fails this test. After a
 * deliberate change, regenerate the file with `RAVEN_UPDATE_API_SNAPSHOT=1 npx tsx
 * scripts/test.ts test/unit/public-api.test.ts` and review its diff with the change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..', '..');
const snapshotFile = join(root, 'test', 'unit', 'public-api.snapshot.txt');
/**
 * The one module an entry point may re-export whole: kube-raven/client-node passes client-node's
 * names through (declared under node_modules: client-node's and those it re-exports itself).
 */
const PASSED_THROUGH_MODULE = '@kubernetes/client-node';
const PASSED_THROUGH_ENTRY = 'kube-raven/client-node';
const DEPENDENCY = /[/\\]node_modules[/\\]/;

interface PackageJson {
  exports: Record<string, string | { types: string; default: string }>;
}

/** Each subpath of `exports` with the source file its types are built from. */
async function entryPoints(): Promise<[string, string][]> {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as PackageJson;
  return Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      assert.ok(typeof target === 'object', `exports["${subpath}"] names its types and its code`);
      assert.match(target.types, /^\.\/dist\/.*\.d\.ts$/);
      const source = target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts');
      return [subpath === '.' ? 'kube-raven' : `kube-raven/${subpath.slice(2)}`, join(root, source)];
    });
}

/** `<entry point> <value|type> <name>`, one line per exported name, sorted. */
function exportLines(entries: [string, string][]): { lines: string[]; sources: Map<string, string[]> } {
  const program = ts.createProgram(
    entries.map(([, file]) => file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const lines: string[] = [];
  const sources = new Map<string, string[]>();
  for (const [name, file] of entries) {
    const sourceFile = program.getSourceFile(file);
    assert.ok(sourceFile !== undefined, `${file} exists for ${name}`);
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
    assert.ok(moduleSymbol !== undefined, `${file} is a module`);
    const origins: string[] = [];
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const declarations = target.declarations ?? [];
      const passedThrough = declarations.every((d) => DEPENDENCY.test(d.getSourceFile().fileName));
      if (name === PASSED_THROUGH_ENTRY && passedThrough) continue;
      const kind = target.flags & ts.SymbolFlags.Value ? 'value' : 'type';
      lines.push(`${name} ${kind} ${symbol.name}`);
      for (const declaration of target.declarations ?? []) origins.push(declaration.getSourceFile().fileName);
    }
    sources.set(name, origins);
  }
  return { lines: lines.sort(), sources };
}

test('every exported name of every entry point is the one recorded in public-api.snapshot.txt', async () => {
  const { lines } = exportLines(await entryPoints());
  const current = `${lines.join('\n')}\n`;
  if (process.env.RAVEN_UPDATE_API_SNAPSHOT === '1') await writeFile(snapshotFile, current);
  const recorded = await readFile(snapshotFile, 'utf8');
  const was = new Set(recorded.trim().split('\n'));
  const now = new Set(lines);
  const added = lines.filter((line) => !was.has(line));
  const removed = [...was].filter((line) => !now.has(line));
  assert.deepEqual(
    { added, removed },
    { added: [], removed: [] },
    'the public API changed: if on purpose, regenerate test/unit/public-api.snapshot.txt (see this file) and commit it',
  );
});

test('entry points list their names: no `export *` but client-node passed through by kube-raven/client-node', async () => {
  for (const [name, file] of await entryPoints()) {
    const text = await readFile(file, 'utf8');
    const allowed = name === PASSED_THROUGH_ENTRY ? `export * from '${PASSED_THROUGH_MODULE}';` : undefined;
    const rest = allowed === undefined ? text : text.replace(allowed, '');
    assert.doesNotMatch(rest, /export \* from/, `${name} (${file}) re-exports a whole module`);
  }
});

test('the root does not export test helpers or the daemon', async () => {
  const { sources } = exportLines(await entryPoints());
  const rootSources = sources.get('kube-raven') ?? [];
  assert.ok(rootSources.length > 0);
  const leaking = rootSources.filter((file) =>
    /[/\\](src[/\\](testing|raven|cli|ui|openstack|translator)|test)[/\\]/.test(file),
  );
  assert.deepEqual([...new Set(leaking)], []);
});
