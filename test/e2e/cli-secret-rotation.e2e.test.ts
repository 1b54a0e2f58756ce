/**
 * A Secret rotated to a value of the same length, seen through `raven watch secrets` as a user runs
 * it (child processes, `-o diff`, `-o yaml`, `-o json`) against the real control plane: each output
 * reports that the key changed, by its fingerprint, and no output carries the value. The
 * fingerprints are the HMAC of the value under the key file `raven watch` made in its state
 * directory, mode 0600, and both processes that share the directory show the same ones.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { startRaven, tempDir, until } from './daemon-process.js';

const OLD = 'pw-2026-aaaa-1111';
const NEW = 'pw-2026-bbbb-2222';
const b64 = (value: string): string => Buffer.from(value).toString('base64');

test('raven watch shows a same-length Secret rotation by fingerprint, never the value', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const state = await tempDir(t);
  const api = `/api/v1/namespaces/${ns}/secrets`;
  const created = await plane.adminRequest('POST', api, {
    metadata: { name: 'db' },
    data: { password: b64(OLD), user: b64('svc-user-7q') },
  });
  assert.equal(created.status, 201, created.body);
  assert.equal(b64(OLD).length, b64(NEW).length);

  const env = { XDG_STATE_HOME: state };
  const watches = Object.fromEntries(
    (['diff', 'yaml', 'json'] as const).map((format) => [
      format,
      startRaven(['watch', 'secrets', '-n', ns, '-o', format], { kubeconfig: plane.kubeconfig, env }),
    ]),
  ) as Record<'diff' | 'yaml' | 'json', ReturnType<typeof startRaven>>;
  t.after(() => Object.values(watches).forEach((w) => w.kill('SIGKILL')));
  for (const [format, watch] of Object.entries(watches))
    await until(
      `raven watch -o ${format} lists the Secret`,
      () => watch.stdout.some((l) => l.includes('db')),
      {
        show: () => `${watch.stdout.join('\n')}\n${watch.stderr()}`,
      },
    );

  const patched = await plane.adminRequest('PATCH', `${api}/db`, { data: { password: b64(NEW) } });
  assert.equal(patched.status, 200, patched.body);

  const keyFile = join(state, 'raven', 'redaction.key');
  const key = Buffer.from((await readFile(keyFile, 'utf8')).trim(), 'hex');
  assert.equal((await stat(keyFile)).mode & 0o777, 0o600, 'the key file is readable by its owner only');
  const mark = (value: string): string =>
    `[redacted] (${b64(value).length} chars, hmac ${createHmac('sha256', key).update(b64(value)).digest('hex').slice(0, 12)})`;
  const [before, after] = [mark(OLD), mark(NEW)];
  assert.notEqual(before, after);

  const diff = watches.diff;
  await until(
    'the -o diff watch reports data.password changed',
    () => diff.stdout.some((l) => l.includes('data.password')),
    {
      show: () => diff.stdout.join('\n'),
    },
  );
  const diffLine = diff.stdout.find((l) => l.includes('data.password')) ?? '';
  assert.ok(
    diffLine.includes(before) && diffLine.includes(after),
    `old and new fingerprints in: ${diffLine}`,
  );
  assert.ok(!diff.stdout.some((l) => l.includes('data.user')), 'the key that did not change is not reported');

  const json = watches.json;
  await until(
    'the -o json watch prints the modification',
    () => json.stdout.some((l) => l.includes('"MODIFIED"')),
    {
      show: () => json.stdout.join('\n'),
    },
  );
  const modified = JSON.parse(json.stdout.find((l) => l.includes('"MODIFIED"')) ?? '{}') as {
    object: { data: Record<string, string> };
    diff: { path: string; old?: unknown; new?: unknown }[];
  };
  assert.deepEqual(modified.diff, [{ path: 'data.password', op: 'replace', old: before, new: after }]);
  assert.equal(modified.object.data.password, after);

  const yaml = watches.yaml;
  await until(
    'the -o yaml watch prints the modification',
    () => yaml.stdout.some((l) => l.includes('MODIFIED')),
    {
      show: () => yaml.stdout.join('\n'),
    },
  );
  await until(
    'the -o yaml watch prints the new fingerprint',
    () => yaml.stdout.some((l) => l.includes(after)),
    {
      show: () => yaml.stdout.join('\n'),
    },
  );

  for (const [format, watch] of Object.entries(watches)) {
    watch.kill('SIGINT');
    assert.equal((await watch.exited).code, 0, `raven watch -o ${format} exits 0 on Ctrl-C`);
    const everything = `${watch.stdout.join('\n')}\n${watch.stderr()}`;
    for (const secret of [OLD, NEW, b64(OLD), b64(NEW), 'svc-user-7q', b64('svc-user-7q')])
      assert.ok(!everything.includes(secret), `-o ${format} output never carries ${secret}`);
  }
});
