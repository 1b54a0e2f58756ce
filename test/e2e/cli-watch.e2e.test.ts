/**
 * `raven watch` as a user runs it: a child process against the real control plane while a driver
 * creates, updates and deletes a ConfigMap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';

const root = resolve(import.meta.dirname, '..', '..');

function ravenWatch(
  kubeconfig: string,
  args: string[],
): { lines: string[]; stderr: string[]; stop: () => Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'watch', ...args], {
    cwd: root,
    env: { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  // 'close', not 'exit': the child's last output may still be in the pipes when it has exited.
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  // A failed assertion must not leave the watcher running behind the test.
  process.once('exit', () => child.kill('SIGKILL'));
  return {
    lines,
    stderr,
    stop: async () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

/** Wait for `pred`; the 120 s is a safety net for a stuck process, far above what a pass needs. */
async function until(what: string, pred: () => boolean, lines: string[]): Promise<void> {
  for (let i = 0; i < 1200 && !pred(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(pred(), `${what}; output so far:\n${lines.join('\n')}`);
}

/** ConfigMaps the test creates only to learn that a watch is under way; left out of the assertions. */
const PROBE = 'probe-';

test('raven watch prints existing objects, then added, modified with its diff, and deleted', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  await plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
    metadata: { name: 'before' },
    data: { x: '1' },
  });

  const table = ravenWatch(plane.kubeconfig, ['configmaps', '-n', ns]);
  const json = ravenWatch(plane.kubeconfig, ['cm', '-n', ns, '-o', 'json', '--since-now']);
  const ok = async (call: Promise<{ status: number; body: string }>): Promise<void> => {
    const { status, body } = await call;
    assert.ok(status >= 200 && status < 300, `driver request failed: ${status} ${body}`);
  };
  await until(
    'existing objects listed',
    () => table.lines.some((l) => /^EXISTING\s+before\b/.test(l)),
    table.lines,
  );
  // --since-now prints nothing until something changes after its list, and an object created
  // before that list would be skipped as existing: it is watching once a probe created now shows
  // up. (A fixed pause instead would be too short whenever the machine is busy.)
  for (let i = 0; !json.lines.some((l) => l.includes('"ADDED"') && l.includes(PROBE)); i++) {
    assert.ok(
      i < 120,
      `raven watch --since-now never printed a probe; output so far:\n${json.lines.join('\n')}`,
    );
    await ok(
      plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: `${PROBE}${i}` },
      }),
    );
    for (let j = 0; j < 10 && !json.lines.some((l) => l.includes(PROBE)); j++)
      await new Promise((r) => setTimeout(r, 100));
  }

  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'demo' },
      data: { a: '1' },
    }),
  );
  await until(
    'added',
    () => table.lines.some((l) => /^ADDED\s+\d\d:\d\d:\d\d\s+demo\b/.test(l)),
    table.lines,
  );
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/demo`, {
      data: { a: '2', b: 'new' },
    }),
  );
  await until(
    'modified',
    () => table.lines.some((l) => /^MODIFIED\s+\d\d:\d\d:\d\d\s+demo\b/.test(l)),
    table.lines,
  );
  await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${ns}/configmaps/demo`));
  await until(
    'deleted',
    () => table.lines.some((l) => /^DELETED\s+\d\d:\d\d:\d\d\s+demo\b/.test(l)),
    table.lines,
  );
  await until('json deleted', () => json.lines.some((l) => l.includes('"DELETED"')), json.lines);

  assert.equal(await table.stop(), 0, 'Ctrl-C exits 0');
  assert.equal(await json.stop(), 0);

  // The server's columns for ConfigMaps (the Table form), after the event column.
  assert.match(table.lines[0] ?? '', /^EVENT\s+TIME\s+NAME\s+DATA\s+AGE$/);
  // kube-root-ca.crt is put in every namespace by the controller-manager, before or after we start.
  const rows = table.lines
    .filter((l) => /^\S/.test(l))
    .slice(1)
    // EVENT [TIME] NAME: a change's row has the time it arrived; an existing object's none.
    .map((l) => l.replace(/^(\S+)\s+(\d\d:\d\d:\d\d\s+)?(\S+).*$/, '$1 $3'))
    .filter((r) => !r.endsWith('kube-root-ca.crt') && !r.includes(PROBE));
  assert.deepEqual(rows, ['EXISTING before', 'ADDED demo', 'MODIFIED demo', 'DELETED demo']);
  const modifiedAt = table.lines.findIndex((l) => l.startsWith('MODIFIED'));
  const diffLines = table.lines.slice(modifiedAt + 1, modifiedAt + 3).map((l) => l.trim());
  // Each changed path names who made the change (the harness's requests name no field manager).
  const by = / {2}by \S+ \(Update\) at \d\d:\d\d:\d\d$/;
  assert.ok(
    diffLines.every((l) => by.test(l)),
    `every diff line names its writer: ${JSON.stringify(diffLines)}`,
  );
  assert.deepEqual(
    diffLines.map((l) => l.replace(by, '')),
    ['data.a: "1" → "2"', 'data.b: + "new"'],
  );

  const events = json.lines
    .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } }; diff?: unknown[] })
    .filter((e) => !e.object.metadata.name.startsWith(PROBE));
  assert.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.name}`),
    ['ADDED demo', 'MODIFIED demo', 'DELETED demo'],
    '--since-now skips existing objects',
  );
  assert.deepEqual(events[1]?.diff, [
    { path: 'data.a', op: 'replace', old: '1', new: '2' },
    { path: 'data.b', op: 'add', new: 'new' },
  ]);
  assert.equal(table.stderr.join(''), '');
});

async function runOnce(kubeconfig: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return { code, stderr };
}

test('raven watch fails clearly for an unknown resource, a bad selector and a bad flag', async () => {
  const plane = await sharedCluster();
  const unknown = await runOnce(plane.kubeconfig, ['watch', 'deploymentz']);
  assert.equal(unknown.code, 1);
  assert.match(
    unknown.stderr,
    /does not serve a resource named "deploymentz"; did you mean deployments\.apps/,
  );
  const selector = await runOnce(plane.kubeconfig, ['watch', 'pods', '-l', 'app in (a']);
  assert.equal(selector.code, 1);
  assert.match(selector.stderr, /invalid label selector "app in \(a" at position 9/);
  const flag = await runOnce(plane.kubeconfig, ['watch', 'pods', '-o', 'xml']);
  assert.equal(flag.code, 2);
  assert.match(
    flag.stderr,
    /--output must be one of table, wide, diff, json, yaml, name, jsonpath=TEMPLATE, custom-columns=SPEC; got "xml"/,
  );
  assert.match(flag.stderr, /Usage: raven watch/);
});
