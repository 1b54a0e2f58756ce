/**
 * `kube-raven/client-node` with client-node 2.x, as a project on Node 22 or later has it: the
 * packed kube-raven and `@kubernetes/client-node@^2` installed side by side (the peer is the
 * project's, never bundled), run under Node 24 (the npm registry's, in .cache/node-24, when this
 * process is older than 22). client-node's informer example must print the same adds, updates and
 * deletes with only the import changed, and the subpath's `KubeConfig` must be client-node 2's own.
 * client-node.e2e does the same, and the faults, with 1.4 (the devDependency, which runs on Node 20).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { informerExampleBothWays, runProgram } from './client-node-programs.js';
import { packedProject, type PackedProject } from './packed-project.js';
import { nodeOfMajor } from '../harness/node-major.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

let project: PackedProject;
let node: string;

before(async () => {
  node = Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : nodeOfMajor('24');
  project = await packedProject(['@kubernetes/client-node@^2']);
});

after(() => project.remove());

test("client-node 2.x's informer example prints the same adds, updates and deletes with Raven's import, on Node 22+", async (t) => {
  const installed = JSON.parse(
    await readFile(join(project.dir, 'node_modules', '@kubernetes', 'client-node', 'package.json'), 'utf8'),
  ) as { version: string };
  assert.match(installed.version, /^2\./, 'the project has client-node 2.x');

  const plane = await sharedCluster();
  const ns = await freshNamespace(plane, 'cn2-informer');
  t.after(() => deleteNamespace(plane, ns));
  const same = await runProgram(
    t,
    project.dir,
    'same-kubeconfig',
    `import * as raven from 'kube-raven/client-node';
import * as k8s from '@kubernetes/client-node';
console.log(raven.KubeConfig === k8s.KubeConfig ? 'same' : 'different', process.versions.node.split('.')[0]);`,
    plane.kubeconfig,
    node,
  );
  assert.deepEqual(await same.exited, { code: 0, signal: null }, same.show());
  assert.equal(same.lines()[0]?.split(' ')[0], 'same', same.show());
  assert.ok(Number(same.lines()[0]?.split(' ')[1]) >= 22, `under Node 22 or later: ${same.show()}`);

  await informerExampleBothWays(t, plane, ns, project.dir, node);
});
