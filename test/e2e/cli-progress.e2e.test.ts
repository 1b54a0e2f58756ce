/**
 * `raven watch` during a big initial list, as a process against the real control plane: under a
 * pseudo-terminal (util-linux `script`) a progress line on stderr counts the objects received
 * against the apiserver's estimate of the total (`remainingItemCount`) and is cleared for the rows; piped, stderr stays empty. Rows print before the list is complete: the
 * first ones once 100 objects have arrived to size the columns.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { ok, startRaven, until } from './daemon-process.js';

const root = resolve(import.meta.dirname, '..', '..');
const OBJECTS = 160;

async function namespaceWithConfigMaps(t: TestContext, plane: ControlPlane): Promise<string> {
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < OBJECTS; i = next++)
        await ok(
          plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
            metadata: { name: `cm-${String(i).padStart(3, '0')}` },
            data: { i: String(i) },
          }),
        );
    }),
  );
  return ns;
}

test('on a terminal, a progress line counts the objects of the initial list out of the estimated total, rows below it', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWithConfigMaps(t, plane);
  // `script` gives the command a pseudo-terminal for stdout and stderr, and copies it to ours.
  const child = spawn(
    'script',
    ['-q', '-e', '-c', `${process.execPath} --import tsx src/cli/main.ts watch cm -n ${ns}`, '/dev/null'],
    { cwd: root, env: { ...process.env, KUBECONFIG: plane.kubeconfig }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  t.after(() => child.kill('SIGKILL'));
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  // The namespace's kube-root-ca.crt may or may not be there yet: only our objects are counted.
  const rows = (): number => screen.match(/EXISTING\s+(?:\S+\s*)?cm-\d{3}/g)?.length ?? 0;
  const ESC = '\u001b';
  await until('every existing object printed', () => rows() === OBJECTS, { show: () => screen });
  // The total: our objects, and kube-root-ca.crt if it was there when the estimate was asked for.
  const total = (count: number): RegExp =>
    new RegExp(`\\r${ESC}\\[2Klisting configmaps: ${count} of ~16[01]`);
  assert.match(screen, total(1));
  assert.match(screen, total(100));
  assert.doesNotMatch(screen, /so far/, 'the total is known from the first line drawn');
  // The line is cleared before rows are written, so no row starts on the progress line.
  assert.doesNotMatch(screen, /of ~\d+[^\r]*EXISTING/);
  // Colour is on for a terminal; the header is bold.
  assert.ok(screen.includes(`${ESC}[1mEVENT`), screen);
  const exited = new Promise<number | null>((done) => child.on('close', done));
  child.kill('SIGTERM');
  await exited;
});

test('piped, raven watch prints no progress: stderr stays empty and stdout holds only rows', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWithConfigMaps(t, plane);
  const raven = startRaven(['watch', 'cm', '-n', ns], { kubeconfig: plane.kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  await until(
    'every existing object printed',
    () => raven.stdout.filter((l) => /^EXISTING\s+cm-\d{3}/.test(l)).length === OBJECTS,
    { show: () => raven.stdout.join('\n') },
  );
  raven.kill('SIGINT');
  assert.equal((await raven.exited).code, 0);
  assert.equal(raven.stderr(), '');
  assert.ok(raven.stdout.every((l, i) => (i === 0 ? l.startsWith('EVENT') : l.startsWith('EXISTING'))));
});
