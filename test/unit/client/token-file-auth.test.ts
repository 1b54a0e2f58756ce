import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { AuthError } from '../../../src/errors/raven-error.js';
import { TokenFileAuth } from '../../../src/client/auth/token-file-auth.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { tempDir, write } from './helpers.js';

test('a token file is re-read once the cached token is older than a minute', async () => {
  const dir = await tempDir();
  const file = await write(dir, 'token', 'one\n');
  const clock = new FakeClock();
  const auth = new TokenFileAuth({ file, clock });
  assert.equal((await auth.authenticate()).headers.authorization, 'Bearer one');
  await writeFile(file, 'two');
  await clock.tick(59_000);
  assert.equal((await auth.authenticate()).headers.authorization, 'Bearer one');
  await clock.tick(1_000);
  assert.equal((await auth.authenticate()).headers.authorization, 'Bearer two');
});

test('invalidate makes the next call read the token file again', async () => {
  const dir = await tempDir();
  const file = await write(dir, 'token', 'old');
  const auth = new TokenFileAuth({ file, clock: new FakeClock() });
  assert.equal((await auth.authenticate()).headers.authorization, 'Bearer old');
  await writeFile(file, 'rotated');
  auth.invalidate();
  assert.equal((await auth.authenticate()).headers.authorization, 'Bearer rotated');
});

test('a failed periodic re-read keeps the previous token but a failure after invalidate is an AuthError', async () => {
  const dir = await tempDir();
  const file = await write(dir, 'token', 'kept');
  const clock = new FakeClock();
  const auth = new TokenFileAuth({ file, clock });
  await auth.authenticate();
  await rm(file);
  await clock.tick(61_000);
  assert.equal((await auth.authenticate()).headers.authorization, 'Bearer kept');
  auth.invalidate();
  await assert.rejects(
    auth.authenticate(),
    (err: unknown) => err instanceof AuthError && err.message.includes(file),
  );
});
