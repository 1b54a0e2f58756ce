/**
 * The OpenStack translator against real servers: a real kube-apiserver (a control plane of this
 * test's own, since the translator covers every namespace) and the real Neutron and Octavia of
 * the lab. Namespaces, pods, services (ClusterIP and with externalIPs) and EndpointSlices are
 * created, scaled, relabelled and deleted, with Raven killed (SIGKILL) in between and objects
 * deleted while it is down; after each step OpenStack must hold exactly what the cluster implies —
 * nothing leaked, nothing duplicated — checked by listing everything carrying the cluster's tags.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { privateCluster, freshNamespace } from '../harness/test-cluster.js';
import { HttpInterceptor } from '../harness/http-interceptor.js';
import { TcpProxy } from '../harness/tcp-proxy.js';
import {
  httpGet,
  healthUrl,
  ok,
  runRaven,
  startRaven,
  tempDir,
  until,
  writeConfig,
} from './daemon-process.js';
import { config, converge, externalNetwork, labSetup, owned, pod } from './translator-world.js';
test(
  'OpenStack follows the cluster through changes, a SIGKILL and deletions made while Raven is down',
  { timeout: 3_600_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const plane = await privateCluster();
    t.after(() => plane.stop());
    const clusterId = `e2e-${randomBytes(3).toString('hex')}`;
    const external = await externalNetwork(os, clusterId);
    const dir = await tempDir(t);
    const cfg = await writeConfig(
      dir,
      config({ clusterId, project, neutron: lab.neutronUrl, octavia: lab.octaviaUrl, external }),
    );
    const a = await freshNamespace(plane, 'a');
    const b = await freshNamespace(plane, 'b');
    const create = (path: string, body: object) => ok(plane.adminRequest('POST', path, body));
    for (const name of ['p1', 'p2']) await create(`/api/v1/namespaces/${a}/pods`, pod(name));
    await create(`/api/v1/namespaces/${b}/pods`, pod('p3'));
    await create(`/api/v1/namespaces/${a}/services`, {
      metadata: { name: 'web' },
      spec: {
        ports: [
          { name: 'http', port: 80, targetPort: 8080 },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
      },
    });
    await create(`/api/v1/namespaces/${b}/services`, {
      metadata: { name: 'api' },
      spec: { ports: [{ name: 'http', port: 8080 }], externalIPs: ['172.24.4.50'] },
    });
    const slice = (service: string, pods: string[]) => ({
      metadata: {
        name: `${service}-manual`,
        labels: {
          'kubernetes.io/service-name': service,
          'endpointslice.kubernetes.io/managed-by': 'raven-e2e',
        },
      },
      addressType: 'IPv4',
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
      endpoints: pods.map((p, i) => ({
        addresses: [`192.0.2.${i + 1}`],
        targetRef: { kind: 'Pod', name: p },
      })),
    });
    await create(`/apis/discovery.k8s.io/v1/namespaces/${a}/endpointslices`, slice('web', ['p1', 'p2']));
    await create(`/apis/discovery.k8s.io/v1/namespaces/${b}/endpointslices`, slice('api', ['p3']));

    let raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    await converge(os, clusterId, plane, raven, 'the initial objects are translated');

    // Scale up and relabel: p4 joins web's endpoints, p1 leaves them.
    await create(`/api/v1/namespaces/${a}/pods`, pod('p4'));
    await ok(
      plane.adminRequest(
        'PUT',
        `/apis/discovery.k8s.io/v1/namespaces/${a}/endpointslices/web-manual`,
        slice('web', ['p2', 'p4']),
      ),
    );
    await converge(os, clusterId, plane, raven, 'scaling and relabelling are followed');

    // Kill Raven; while it is down, delete a pod, a service and a whole namespace, and add a pod.
    raven.kill('SIGKILL');
    await raven.exited;
    // The slice still names p2 (as a slice lags a pod's deletion): p2 must not stay a member.
    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${a}/pods/p2`));
    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${b}/services/api`));
    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${b}`));
    await create(`/api/v1/namespaces/${a}/pods`, pod('p5'));
    await until(
      'namespace b is gone',
      async () => (await plane.adminRequest('GET', `/api/v1/namespaces/${b}`)).status === 404,
      { timeoutMs: 120_000 },
    );
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    await converge(os, clusterId, plane, raven, 'after the restart nothing is leaked or duplicated');

    // A second SIGKILL mid-work, then delete everything of the test.
    await create(`/api/v1/namespaces/${a}/pods`, pod('p6'));
    raven.kill('SIGKILL');
    await raven.exited;
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    await converge(os, clusterId, plane, raven, 'a kill in the middle of work leaves nothing behind');
    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${a}`));
    await until(
      'namespace a is gone',
      async () => (await plane.adminRequest('GET', `/api/v1/namespaces/${a}`)).status === 404,
      { timeoutMs: 120_000 },
    );
    await converge(os, clusterId, plane, raven, 'deleting the namespace removes its network after its ports');
    const left = await owned(os, clusterId);
    assert.deepEqual(left.fips, [], 'no floating IP left');
    assert.equal(
      left.lbs.filter((x) => x.d.key !== 'default/kubernetes').length,
      0,
      'only the kubernetes Service keeps a load balancer',
    );
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);

test(
  'a SIGKILL between a namespace security group and its rules is repaired: every rule is in place after the restart',
  { timeout: 600_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const plane = await privateCluster();
    t.after(() => plane.stop());
    // Neutron cannot be told to fail one call on demand: a proxy in front of it kills Raven when
    // the first rule create arrives, before Neutron sees it.
    const neutron = await HttpInterceptor.start(lab.neutronUrl);
    t.after(() => neutron.close());
    const clusterId = `e2e-${randomBytes(3).toString('hex')}`;
    const dir = await tempDir(t);
    const cfg = await writeConfig(
      dir,
      config({ clusterId, project, neutron: neutron.url, octavia: lab.octaviaUrl }),
    );
    const ns = await freshNamespace(plane, 'rules');
    await ok(plane.adminRequest('POST', `/api/v1/namespaces/${ns}/pods`, pod('p1')));
    let raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    neutron.arm({
      method: 'POST',
      path: /^\/v2\.0\/security-group-rules$/,
      action: () => raven.kill('SIGKILL'),
    });
    await raven.exited;
    assert.equal(neutron.armed, false, 'Raven died at the rule create');
    // The kill landed between the group and its rules: a group of ours has only Neutron's defaults.
    const groups = (await owned(os, clusterId)).groups.filter((g) => g.d.role === 'ns-sg');
    assert.ok(groups.length > 0, 'a namespace security group was created before the kill');
    assert.ok(
      groups.some((g) => !(g.r.security_group_rules ?? []).some((r) => r.direction === 'ingress')),
      'a group was left without its ingress rules',
    );
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    await converge(os, clusterId, plane, raven, 'every namespace group has its rules after the restart');
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);

test(
  'an unreachable OpenStack is reported and retried, and pending work is done once it answers',
  { timeout: 600_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const plane = await privateCluster();
    t.after(() => plane.stop());
    const neutronPort = Number(new URL(lab.neutronUrl).port);
    const octaviaPort = Number(new URL(lab.octaviaUrl).port);
    const neutronProxy = await TcpProxy.start({ host: '127.0.0.1', port: neutronPort });
    const octaviaProxy = await TcpProxy.start({ host: '127.0.0.1', port: octaviaPort });
    t.after(async () => {
      await neutronProxy.close();
      await octaviaProxy.close();
    });
    neutronProxy.refuse();
    octaviaProxy.refuse();
    const clusterId = `e2e-${randomBytes(3).toString('hex')}`;
    const dir = await tempDir(t);
    const cfg = await writeConfig(
      dir,
      config({
        clusterId,
        project,
        neutron: `http://127.0.0.1:${neutronProxy.port}`,
        octavia: `http://127.0.0.1:${octaviaProxy.port}`,
      }),
    );
    const ns = await freshNamespace(plane, 'pending');
    await ok(plane.adminRequest('POST', `/api/v1/namespaces/${ns}/pods`, pod('waiting')));
    const raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    const url = await healthUrl(raven);
    await raven.waitForLog('cannot set up the cluster infrastructure in OpenStack; retrying');
    const ready = await httpGet(`${url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(ready.body, /translator openstack/);
    neutronProxy.accept();
    octaviaProxy.accept();
    await converge(os, clusterId, plane, raven, 'the work waiting for OpenStack is done once it answers');
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);

test('a translator config error names the field and what would be valid', async (t) => {
  const dir = await tempDir(t);
  const cfg = await writeConfig(
    dir,
    `translators:
  - name: openstack
    type: openstack
    clusterId: Bad_Id
    openstack: { auth: { type: noauth, projectId: p }, endpoints: { network: "http://127.0.0.1:9" } }
    serviceCidr: 10.96.0.0
    podCidr: 10.244.0.0/16
`,
  );
  const result = await runRaven(['check', '-c', cfg]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /translators\[0\]\.clusterId: .*a cluster id of 1-30 characters/);
  assert.match(
    result.stderr,
    /translators\[0\]\.serviceCidr: .*a CIDR, or an IPv4 and an IPv6 CIDR separated by a comma \(dual stack\), such as 10\.96\.0\.0\/16,fd00:10:96::\/112/,
  );
  // Dual stack needs both families on both sides; a pool refills below its size.
  const dual = await writeConfig(
    dir,
    `translators:
  - name: openstack
    type: openstack
    clusterId: dual
    openstack: { auth: { type: noauth, projectId: p }, endpoints: { network: "http://127.0.0.1:9" } }
    serviceCidr: 10.96.0.0/16,fd00:10:96::/112
    podCidr: 10.244.0.0/16
    portPool: { size: 2, refillBelow: 3 }
`,
  );
  const second = await runRaven(['check', '-c', dual]);
  assert.equal(second.code, 1);
  assert.match(
    second.stderr,
    /translators\[0\]\.podCidr: expected podCidr to have the same IP families as serviceCidr \(IPv4,IPv6\)/,
  );
  assert.match(
    second.stderr,
    /translators\[0\]\.portPool\.refillBelow: expected refillBelow to be at most size/,
  );
});
