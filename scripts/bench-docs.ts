/**
 * `npm run bench:docs [-- --check]`: regenerates the benchmark figures in the docs (the blocks
 * between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`) from the committed result files in
 * bench/results/ (bench/lib/doc-figures.ts says what each block holds). With `--check` nothing
 * is written, and the exit status is 1 when a doc differs from what the results generate.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../bench/lib/child.js';
import { docsWithFigures, renderDoc } from '../bench/lib/doc-figures.js';

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const path of docsWithFigures()) {
    const current = await readFile(join(repoRoot, path), 'utf8');
    const generated = await renderDoc(current, path);
    if (generated === current) continue;
    if (check) {
      stale++;
      process.stderr.write(
        `bench:docs: ${path} differs from what bench/results/ generates (run npm run bench:docs)\n`,
      );
    } else {
      await writeFile(join(repoRoot, path), generated);
      process.stderr.write(`bench:docs: ${path} regenerated\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:docs: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
