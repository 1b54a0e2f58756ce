/**
 * `kube-raven/client-node` against the real apiserver, as users run it: programs written for
 * @kubernetes/client-node, run as processes once with client-node's own import and once with
 * Raven's, side by side. client-node's informer and watch examples must work with only the import
 * changed; the connection reset and the apiserver restart that stop client-node's informer must
 * not stop Raven's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './daemon-process.js';
import {
  consumerDir,
  informerExampleBothWays,
  plainInformer,
  runProgram,
  watchExample,
  type Import,
  type Program,
} from './client-node-programs.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import {
  deleteNamespace,
  freshNamespace,
  kubeconfigVia,
  privateCluster,
  sharedCluster,
} from '../harness/test-cluster.js';

const IMPORTS: readonly Import[] = ['@kubernetes/client-node', 'kube-raven/client-node'];

async function expectOk(call: Promise<{ status: number; body: string }>): Promise<void> {
  const { status, body } = await call;
  assert.ok(status >= 200 && status < 300, `${status}: ${body}`);
}

const has = (program: Program, line: string) => (): boolean => program.lines().includes(line);

test("client-node's informer example prints the same adds, updates and deletes with Raven's import", async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane, 'cn-informer');
  t.after(() => deleteNamespace(plane, ns));
  await informerExampleBothWays(t, plane, ns, await consumerDir(t));
});

test("client-node's watch example runs and ends on its abort with Raven's import", async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane, 'cn-watch');
  t.after(() => deleteNamespace(plane, ns));
  const dir = await consumerDir(t);

  const programs = await Promise.all(
    IMPORTS.map((from, i) => runProgram(t, dir, `watch-${i}`, watchExample(from), plane.kubeconfig)),
  );
  const exits = await Promise.all(programs.map((p) => p.exited));
  const show = (): string => programs.map((p) => p.show()).join('\n');
  for (const [i, program] of programs.entries()) {
    assert.deepEqual(exits[i], { code: 0, signal: null }, show());
    assert.match(program.stdout(), /^new object:$/m, show());
    assert.ok(program.stdout().includes(`name: '${ns}'`), `${program.name} printed ${ns}\n${show()}`);
    // The done callback prints why the watch ended: the caller's abort, in both.
    assert.match(program.stderr(), /AbortError/, show());
  }
});

test("a connection reset and an apiserver restart stop client-node's informer, and Raven's goes on", async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: plane.state.ports.apiserver });
  t.after(() => proxy.close());
  const tmp = await mkdtemp(join(tmpdir(), 'raven-client-node-kc-'));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const kubeconfig = await kubeconfigVia(plane, proxy, tmp);
  const ns = await freshNamespace(plane, 'cn-outage');
  const dir = await consumerDir(t);
  const cms = `/api/v1/namespaces/${ns}/configmaps`;
  const create = (name: string) => expectOk(plane.adminRequest('POST', cms, { metadata: { name } }));
  await create('a');

  const start = (from: Import, name: string) => runProgram(t, dir, name, plainInformer(from, ns), kubeconfig);
  const clientNode = await start('@kubernetes/client-node', 'client-node-1');
  const raven = await start('kube-raven/client-node', 'raven');
  const show = (): string => [clientNode, raven].map((p) => p.show()).join('\n');
  for (const p of [clientNode, raven])
    await until(`${p.name} started`, has(p, 'started, cached: a,kube-root-ca.crt'), { show });

  // 1. Every connection is reset, and new ones are refused for a while.
  proxy.refuse();
  proxy.cut();
  await until(
    "client-node's informer reports the error",
    () => clientNode.lines().some((l) => l.startsWith('error')),
    {
      show,
    },
  );
  await until("Raven's informer reports it too", () => raven.lines().some((l) => l.startsWith('error')), {
    show,
  });
  await expectOk(plane.adminRequest('DELETE', `${cms}/a`));
  await create('b');
  proxy.accept();
  await until("Raven's informer sees the deletion made while cut off", has(raven, 'delete a'), { show });
  await until("Raven's informer sees the object made while cut off", has(raven, 'add b'), { show });
  await create('c');
  await until("Raven's informer goes on", has(raven, 'add c'), { show });
  assert.equal(raven.lines().filter((l) => l === 'connect').length, 1, `resumed without a relist\n${show()}`);
  assert.ok(!clientNode.lines().includes('add c'), `client-node's informer stopped at its error\n${show()}`);

  // 2. The apiserver restarts; a fresh client-node informer stops at it too.
  const clientNode2 = await start('@kubernetes/client-node', 'client-node-2');
  const show2 = (): string => [clientNode2, raven].map((p) => p.show()).join('\n');
  await until(
    'the second client-node informer started',
    has(clientNode2, 'started, cached: b,c,kube-root-ca.crt'),
    {
      show: show2,
    },
  );
  await plane.restartApiserver({ downMs: 2000 });
  await until(
    'the second client-node informer reports the error',
    () => clientNode2.lines().some((l) => l.startsWith('error')),
    { show: show2 },
  );
  await create('d');
  await until("Raven's informer goes on after the restart", has(raven, 'add d'), { show: show2 });
  await create('e');
  await until("Raven's informer keeps going", has(raven, 'add e'), { show: show2 });
  assert.ok(
    !clientNode2.lines().includes('add e'),
    `client-node's informer stopped at its error\n${show2()}`,
  );
  assert.equal(raven.child.exitCode, null, 'the Raven program is still running');
});
