/**
 * The image's /app made small: raven's CLI (dist/cli/main.js) and every module it imports, from
 * dist/ and from the production dependencies, bundled by esbuild into one file at the same path,
 * dist/cli/main.js, so the entrypoint, and the paths raven reads relative to its own module
 * (../../package.json for its version), stay what they were. What the bundle cannot hold stays a
 * package in node_modules: node-sqlite3-wasm, which reads its WebAssembly beside its own module
 * (__dirname). Of every other package only its licence files stay, for each package whose code
 * is in the bundle; the rest of node_modules and of dist/ goes. Code is not renamed (whitespace
 * and syntax only are minified), so stack traces keep raven's function and class names.
 *
 * Fails on any esbuild warning (an import it could not follow is one), so a module that would
 * need a file the bundle left behind stops the build instead of the daemon. pg-cloudflare, pg's
 * optional socket for Cloudflare Workers (not installed: npm ci --omit=optional), stays an
 * unresolved require that pg reaches only on Cloudflare.
 *
 * scripts/image.sh and the Dockerfile both run it, so the two images hold the same files.
 * Usage: npx tsx scripts/image-bundle.ts APP_DIR   (APP_DIR holds package.json, dist/ and
 * node_modules/ from `npm ci --omit=dev --omit=optional`)
 */
import { build } from 'esbuild';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** The packages kept whole in node_modules, and why: each finds a file beside its own module. */
const EXTERNAL_PACKAGES = ['node-sqlite3-wasm'];
/** Required only where it is never installed (Cloudflare Workers); pg catches nothing, but never gets there on Node. */
const UNINSTALLED = ['pg-cloudflare'];
/** A licence, copying or notice file, whatever its extension (ms's is license.md). */
const LICENCE = /^(licen[cs]e|copying|notice)([-._].*)?$/i;
/** In an ES module bundle the CommonJS dependencies still call require and read __dirname/__filename. */
const BANNER = [
  "import { createRequire as __ravenCreateRequire } from 'node:module';",
  "import { fileURLToPath as __ravenFileURLToPath } from 'node:url';",
  "import { dirname as __ravenDirname } from 'node:path';",
  'const require = __ravenCreateRequire(import.meta.url);',
  'const __filename = __ravenFileURLToPath(import.meta.url);',
  'const __dirname = __ravenDirname(__filename);',
].join(' ');

/** The package directory (relative to APP_DIR) an input of the bundle belongs to, if any. */
function packageOf(input: string): string | undefined {
  const parts = input.split(/[\\/]/);
  const last = parts.lastIndexOf('node_modules');
  if (last === -1) return undefined;
  const name = parts[last + 1]?.startsWith('@') ? 2 : 1;
  return parts.slice(0, last + 1 + name).join('/');
}

async function main(): Promise<void> {
  const app = process.argv[2];
  if (app === undefined) throw new Error('usage: image-bundle.ts APP_DIR');
  const entry = join(app, 'dist', 'cli', 'main.js');
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: app,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    external: [...EXTERNAL_PACKAGES, ...UNINSTALLED],
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    banner: { js: BANNER },
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const problems = [...result.errors, ...result.warnings];
  if (problems.length > 0) {
    const text = problems.map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''}: ${m.text}`);
    throw new Error(`image-bundle: esbuild reported ${problems.length} problems:\n${text.join('\n')}`);
  }
  const [bundle] = result.outputFiles;
  if (bundle === undefined) throw new Error('image-bundle: esbuild wrote no output');
  const bundled = new Set(
    Object.keys(result.metafile.inputs)
      .map(packageOf)
      .filter((p): p is string => p !== undefined),
  );

  await rm(join(app, 'dist'), { recursive: true });
  await mkdir(join(app, 'dist', 'cli'), { recursive: true });
  await writeFile(entry, bundle.contents, { mode: 0o644 });

  const keepWhole = EXTERNAL_PACKAGES.map((name) => `node_modules/${name}`);
  const files = await readdir(join(app, 'node_modules'), { recursive: true, withFileTypes: true });
  for (const file of files) {
    if (!file.isFile() && !file.isSymbolicLink()) continue;
    const path = relative(app, join(file.parentPath, file.name)).split(sep).join('/');
    const owner = packageOf(path);
    if (owner !== undefined && keepWhole.includes(owner)) {
      if (/\.(md|d\.ts|map)$/.test(file.name) && !LICENCE.test(file.name)) await rm(join(app, path));
      continue;
    }
    const licenceOfBundled =
      owner !== undefined &&
      bundled.has(owner) &&
      LICENCE.test(file.name) &&
      file.parentPath === join(app, owner);
    if (!licenceOfBundled) await rm(join(app, path));
  }
  await removeEmptyDirectories(join(app, 'node_modules'));
  process.stdout.write(
    `image-bundle: ${relative(app, entry)} ${(bundle.contents.byteLength / 1e6).toFixed(1)} MB from ` +
      `${Object.keys(result.metafile.inputs).length} modules of ${bundled.size} packages and dist/; ` +
      `kept whole: ${EXTERNAL_PACKAGES.join(', ')}\n`,
  );
}

/** Delete the directories under `dir` that hold no file (after the removals above). */
async function removeEmptyDirectories(dir: string): Promise<boolean> {
  let empty = true;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && (await removeEmptyDirectories(path))) await rm(path, { recursive: true });
    else empty = false;
  }
  return empty;
}

await main();
