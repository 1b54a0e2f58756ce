/**
 * The API report: what each entry point of package.json's `exports` declares, as the published
 * declaration files say it (the `.d.ts` text `tsc` emits, comments dropped), one file per entry
 * point under `api/`. `test/unit/public-api.test.ts` compares it with the committed files, so a
 * changed signature, not only a changed name, is a decision reviewed in the diff.
 *
 *   npm run api:update     rewrite api/*.api.md after a deliberate change
 *
 * It also finds the forgotten exports: a type an exported declaration uses (a parameter, a
 * return type, a property, a base class) that no entry point exports, so a user could not name it.
 * The declarations are emitted in memory; nothing is written but the report.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
export const API_DIR = join(root, 'api');
/** Where the in-memory declaration files live (never written: only their paths matter). */
const OUT_DIR = join(root, '.api-declarations');
/** kube-raven/client-node passes @kubernetes/client-node through whole; its names are not ours. */
const DEPENDENCY = /[/\\]node_modules[/\\]/;

export interface EntryPoint {
  /** `kube-raven` or `kube-raven/<subpath>`. */
  name: string;
  /** The source file its declarations are built from. */
  source: string;
}

interface PackageJson {
  exports: Record<string, string | { types: string; default: string }>;
}

/** Each subpath of `exports` with the source file its types are built from. */
export function entryPoints(): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  return Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      if (typeof target !== 'object' || !/^\.\/dist\/.*\.d\.ts$/.test(target.types))
        throw new Error(`package.json exports["${subpath}"]: expected { types: "./dist/….d.ts", default }`);
      const source = join(root, target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'));
      return { name: subpath === '.' ? 'kube-raven' : `kube-raven/${subpath.slice(2)}`, source };
    });
}

/** The compiler options of tsconfig.build.json, declarations only, into OUT_DIR. */
function buildOptions(): ts.CompilerOptions {
  const file = join(root, 'tsconfig.build.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    file,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error(`${file} could not be read`);
  return {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    outDir: OUT_DIR,
  };
}

/** Emit the entry points' declaration files in memory: path → text. */
function emitDeclarations(entries: EntryPoint[]): Map<string, string> {
  const program = ts.createProgram(
    entries.map((e) => e.source),
    buildOptions(),
  );
  const emitted = new Map<string, string>();
  const result = program.emit(undefined, (path, text) => emitted.set(resolve(path), text), undefined, true);
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0)
    throw new Error(ts.formatDiagnostics(errors, { ...formatHost, getCurrentDirectory: () => root }));
  return emitted;
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};

/** A program over the emitted declarations (read from memory; the rest from disk). */
function declarationProgram(emitted: Map<string, string>, roots: string[]): ts.Program {
  const options: ts.CompilerOptions = { ...buildOptions(), noEmit: true, declaration: false };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (path) => emitted.get(resolve(path)) ?? readFile(path);
  host.fileExists = (path) => emitted.has(resolve(path)) || fileExists(path);
  host.directoryExists = (path) => resolve(path).startsWith(OUT_DIR) || ts.sys.directoryExists(path);
  return ts.createProgram(roots, options, host);
}

function declarationPath(source: string): string {
  return join(OUT_DIR, source.slice(join(root, 'src').length).replace(/\.ts$/, '.d.ts'));
}

/** The statement a declaration is printed as (a variable is printed with its `declare const`). */
function statementOf(declaration: ts.Declaration): ts.Node {
  if (ts.isVariableDeclaration(declaration)) return declaration.parent.parent;
  return declaration;
}

/** The symbols a declaration's text names: type references, base classes, `typeof x`, `import("…").X`. */
function referencedSymbols(node: ts.Node, checker: ts.TypeChecker): ts.Symbol[] {
  const found: ts.Symbol[] = [];
  const add = (symbol: ts.Symbol | undefined): void => {
    if (symbol === undefined) return;
    found.push(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isTypeReferenceNode(n)) add(checker.getSymbolAtLocation(n.typeName));
    else if (ts.isExpressionWithTypeArguments(n)) add(checker.getSymbolAtLocation(n.expression));
    else if (ts.isTypeQueryNode(n)) add(checker.getSymbolAtLocation(n.exprName));
    else if (ts.isImportTypeNode(n)) {
      const type = checker.getTypeFromTypeNode(n);
      add(type.aliasSymbol ?? type.getSymbol());
    }
    // a private member is emitted without its type: what it uses is not part of the API
    if (ts.canHaveModifiers(n) && ts.getModifiers(n)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword))
      return;
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

export interface ApiReport {
  /** Entry point name → the report's text. */
  reports: Map<string, string>;
  /** `<entry>: <exported name> uses <type> (<file>), which no entry point exports`. */
  forgotten: string[];
  /** Entry point name → the files its names are declared in (source paths under src/). */
  origins: Map<string, string[]>;
}

/** Build the report of every entry point. */
export function apiReport(entries: EntryPoint[] = entryPoints()): ApiReport {
  const emitted = emitDeclarations(entries);
  const program = declarationProgram(
    emitted,
    entries.map((e) => declarationPath(e.source)),
  );
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  const ours = (d: ts.Declaration): boolean => d.getSourceFile().fileName.startsWith(OUT_DIR);
  const exported = new Set<ts.Symbol>();
  const perEntry: { entry: EntryPoint; symbols: [string, ts.Symbol][] }[] = [];
  for (const entry of entries) {
    const file = program.getSourceFile(declarationPath(entry.source));
    if (file === undefined) throw new Error(`${entry.name}: no declarations emitted for ${entry.source}`);
    const module = checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`${entry.name}: ${entry.source} is not a module`);
    const symbols: [string, ts.Symbol][] = [];
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      if ((target.declarations ?? []).every((d) => DEPENDENCY.test(d.getSourceFile().fileName))) continue;
      exported.add(target);
      symbols.push([symbol.name, target]);
    }
    symbols.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    perEntry.push({ entry, symbols });
  }
  const reports = new Map<string, string>();
  const origins = new Map<string, string[]>();
  const forgotten = new Set<string>();
  const relativeSource = (d: ts.Node): string =>
    `src${d
      .getSourceFile()
      .fileName.slice(OUT_DIR.length)
      .replace(/\.d\.ts$/, '.ts')}`;
  for (const { entry, symbols } of perEntry) {
    const parts: string[] = [];
    const files: string[] = [];
    for (const [name, symbol] of symbols) {
      const declarations = (symbol.declarations ?? []).filter(ours);
      const text = declarations
        .map((d) => printer.printNode(ts.EmitHint.Unspecified, statementOf(d), d.getSourceFile()))
        .join('\n');
      const from = [...new Set(declarations.map(relativeSource))].join(', ');
      files.push(...declarations.map(relativeSource));
      parts.push(
        `// ${name}${name === symbol.name ? '' : ` (declared as ${symbol.name})`}: ${from}\n${text}\n`,
      );
      for (const d of declarations)
        for (const used of referencedSymbols(statementOf(d), checker)) {
          if (used.flags & ts.SymbolFlags.TypeParameter || exported.has(used)) continue;
          const at = (used.declarations ?? []).filter(ours);
          // declared inside the declaration itself (a namespace member, a local): printed with it
          if (at.length === 0 || at.some((u) => u.pos >= d.pos && u.end <= d.end)) continue;
          forgotten.add(
            `${entry.name}: ${name} uses ${used.name} (${relativeSource(at[0] as ts.Node)}), which no entry point exports`,
          );
        }
    }
    reports.set(
      entry.name,
      `# API report: ${entry.name}\n\n` +
        'Generated by `npm run api:update` (scripts/api-report.ts) from the declaration files; ' +
        'test/unit/public-api.test.ts keeps it equal to the code. Review its diff like code.\n\n' +
        `${symbols.length} exported names.\n\n\`\`\`ts\n${parts.join('\n')}\`\`\`\n`,
    );
    origins.set(entry.name, files);
  }
  return { reports, forgotten: [...forgotten].sort(), origins };
}

/** The report file of an entry point: `api/kube-raven.api.md`, `api/kube-raven-daemon.api.md`. */
export function reportFile(entry: string): string {
  return join(API_DIR, `${entry.replace(/\//g, '-')}.api.md`);
}

async function update(): Promise<void> {
  const { reports, forgotten } = apiReport();
  await mkdir(API_DIR, { recursive: true });
  for (const name of await readdir(API_DIR)) if (name.endsWith('.api.md')) await rm(join(API_DIR, name));
  for (const [entry, text] of reports) await writeFile(reportFile(entry), text);
  process.stdout.write(`api: wrote ${reports.size} reports to api/\n`);
  if (forgotten.length > 0) {
    process.stderr.write(`api: ${forgotten.length} forgotten exports:\n${forgotten.join('\n')}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  update().catch((err: unknown) => {
    process.stderr.write(`api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
