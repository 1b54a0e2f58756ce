/**
 * Shared helpers for the client tests: temp directories and small file writers.
 */
import { chmod, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after } from 'node:test';

/** A fresh temporary directory, removed when the test file finishes. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-client-'));
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Write `text` to `dir/name` (creating parents) and return the path. */
export async function write(dir: string, name: string, text: string, mode?: number): Promise<string> {
  const path = join(dir, name);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  if (mode !== undefined) await chmod(path, mode);
  return path;
}

/** Base64 of a UTF-8 string, for `*-data` fields. */
export function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}
