import ts from 'typescript';
import { relative } from 'node:path';
const file = process.argv[2]!;
const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true });
const checker = program.getTypeChecker();
const sym = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
const rows: string[] = [];
for (const e of checker.getExportsOfModule(sym)) {
  const t = e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e;
  const decl = t.declarations?.[0];
  const from = decl ? relative('src', decl.getSourceFile().fileName) : '?';
  const value = (t.flags & ts.SymbolFlags.Value) !== 0;
  rows.push(`${from}\t${value ? 'value' : 'type'}\t${e.name}`);
}
console.log(rows.sort().join('\n'));
