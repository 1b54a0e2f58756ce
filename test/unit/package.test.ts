/**
 * The published package loads from both module systems: `import` and, on Node 20.19+ (which
 * loads ES modules through require), `require('kube-raven')`. Runs against the built dist/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');

async function withConsumer(fn: (dir: string) => Promise<void>): Promise<void> {
  assert.ok(existsSync(join(root, 'dist', 'index.js')), 'dist/ is missing: run `npm run build` first');
  const dir = await mkdtemp(join(tmpdir(), 'raven-consumer-'));
  try {
    await mkdir(join(dir, 'node_modules'));
    await symlink(root, join(dir, 'node_modules', 'kube-raven'), 'dir');
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('require("kube-raven") works from CommonJS', async () => {
  await withConsumer(async (dir) => {
    await writeFile(
      join(dir, 'consumer.cjs'),
      "const raven = require('kube-raven');\n" +
        "if (typeof raven.RavenError !== 'function' || typeof raven.isExpired !== 'function') process.exit(3);\n" +
        "console.log('ok');\n",
    );
    const { stdout } = await run(process.execPath, [join(dir, 'consumer.cjs')], { cwd: dir });
    assert.equal(stdout.trim(), 'ok');
  });
});

test('import("kube-raven") works from an ES module', async () => {
  await withConsumer(async (dir) => {
    await writeFile(
      join(dir, 'consumer.mjs'),
      "import { RavenError, isExpired } from 'kube-raven';\n" +
        "if (typeof RavenError !== 'function' || typeof isExpired !== 'function') process.exit(3);\n" +
        "console.log('ok');\n",
    );
    const { stdout } = await run(process.execPath, [join(dir, 'consumer.mjs')], { cwd: dir });
    assert.equal(stdout.trim(), 'ok');
  });
});
