import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, redact } from '../../../src/raven/model/redact.js';
import { loadRedactionKey, stateDir } from '../../../src/raven/model/redaction-key.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';

const KEY_A = Buffer.alloc(32, 1);
const KEY_B = Buffer.alloc(32, 2);
const secret = (value: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's' },
  data: { password: value },
});
const password = (object: { data: { password: string } }) => object.data.password;

test('the same value and key give the same fingerprint, another key or value another one', () => {
  const value = Buffer.from('hunter22').toString('base64');
  const same = Buffer.from('hunter33').toString('base64');
  assert.equal(value.length, same.length);
  assert.equal(fingerprint(value, KEY_A), fingerprint(value, KEY_A));
  assert.match(fingerprint(value, KEY_A), /^[0-9a-f]{12}$/);
  assert.notEqual(fingerprint(value, KEY_A), fingerprint(value, KEY_B));
  assert.notEqual(fingerprint(value, KEY_A), fingerprint(same, KEY_A));
  assert.equal(
    password(redact(secret(value), 'secrets', KEY_A)),
    password(redact(secret(value), 'secrets', KEY_A)),
  );
  assert.notEqual(
    password(redact(secret(value), 'secrets', KEY_A)),
    password(redact(secret(same), 'secrets', KEY_A)),
  );
});

test('the fingerprint is keyed: it is not a plain hash of the value, and the value never appears', async () => {
  const { createHash } = await import('node:crypto');
  const value = 'c2VjcmV0LXZhbHVl';
  const shown = password(redact(secret(value), 'secrets', KEY_A));
  assert.equal(shown, `[redacted] (16 chars, hmac ${fingerprint(value, KEY_A)})`);
  assert.ok(!shown.includes(value));
  assert.ok(!shown.includes(Buffer.from(value, 'base64').toString()));
  for (const plain of [value, Buffer.from(value, 'base64').toString()])
    assert.ok(!shown.includes(createHash('sha256').update(plain).digest('hex').slice(0, 12)));
});

test('redacting is idempotent with fingerprints, and under another key too', () => {
  const once = redact(secret('aHVudGVyMg=='), 'secrets', KEY_A);
  assert.deepEqual(redact(once, 'secrets', KEY_A), once);
  assert.deepEqual(redact(once, 'secrets', KEY_B), once);
  // A marker written before fingerprints existed (an old checkpoint) is kept as it is.
  const old = secret('[redacted] (12 chars)');
  assert.deepEqual(redact(old, 'secrets', KEY_A), old);
});

test('a rotation to a value of the same length is a change of the key, without the values', () => {
  const before = { ...secret('b2xkb2xk'), metadata: { name: 's', resourceVersion: '1' } };
  const after = { ...secret('bmV3bmV3'), metadata: { name: 's', resourceVersion: '2' } };
  const event = toChangeEvent(
    {
      watcher: 'w',
      resource: { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' },
      time: '2026-01-01T00:00:00.000Z',
    },
    { type: 'modified', object: after, previous: redact(before, 'secrets'), origin: 'live' },
  );
  assert.deepEqual(
    event.diff.map((d) => d.path),
    ['data.password'],
  );
  const text = JSON.stringify(event);
  assert.ok(!text.includes('b2xkb2xk') && !text.includes('bmV3bmV3'));
});

test('the key file is made once, mode 0600, 64 hex digits, and read back the same', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-key-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const keyDir = join(dir, 'state', 'raven');
  const [first, second] = await Promise.all([
    loadRedactionKey({ env: {}, dir: keyDir }),
    loadRedactionKey({ env: {}, dir: keyDir }),
  ]);
  const file = join(keyDir, 'redaction.key');
  assert.equal(first.source, file);
  assert.equal(first.warning, undefined);
  assert.deepEqual(first.key, second.key, 'two processes starting together end with one key');
  assert.match(await readFile(file, 'utf8'), /^[0-9a-f]{64}\n$/);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.deepEqual((await loadRedactionKey({ env: {}, dir: keyDir })).key, first.key);
  await chmod(file, 0o644);
  assert.match(
    (await loadRedactionKey({ env: {}, dir: keyDir })).warning ?? '',
    /can be read by other users; run chmod 600/,
  );
});

test('the key comes from RAVEN_REDACTION_KEY first, the state directory by default', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-key-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const fromEnv = await loadRedactionKey({ env: { RAVEN_REDACTION_KEY: 'a'.repeat(32) }, dir });
  assert.equal(fromEnv.source, 'RAVEN_REDACTION_KEY');
  assert.deepEqual(fromEnv.key, Buffer.from('a'.repeat(32)));
  await assert.rejects(loadRedactionKey({ env: { RAVEN_REDACTION_KEY: 'short' }, dir }), {
    code: 'ERR_REDACTION_KEY',
    message: /RAVEN_REDACTION_KEY must be at least 16 characters .* it has 5/,
  });
  assert.equal(stateDir({ XDG_STATE_HOME: '/x/state' }, '/home/u'), '/x/state/raven');
  assert.equal(stateDir({}, '/home/u'), '/home/u/.local/state/raven');
  const home = await loadRedactionKey({ env: { XDG_STATE_HOME: join(dir, 'xdg') } });
  assert.equal(home.source, join(dir, 'xdg', 'raven', 'redaction.key'));
});

test('a damaged key file is an error naming it; an unwritable directory gives a key for this run', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-key-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'redaction.key'), 'not a key\n', { mode: 0o600 });
  await assert.rejects(loadRedactionKey({ env: {}, dir }), {
    code: 'ERR_REDACTION_KEY',
    message: new RegExp(
      `${join(dir, 'redaction.key')} is not a redaction key \\(64 hex digits\\); remove it`,
    ),
  });
  const blocked = join(dir, 'redaction.key', 'below-a-file');
  const loaded = await loadRedactionKey({ env: {}, dir: blocked });
  assert.equal(loaded.source, '');
  assert.equal(loaded.key.length, 32);
  assert.match(loaded.warning ?? '', /cannot keep a redaction key in .*set RAVEN_REDACTION_KEY/);
});
