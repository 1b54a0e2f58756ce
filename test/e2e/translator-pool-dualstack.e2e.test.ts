/**
 * The translator's port pools and dual stack, against a real kube-apiserver (a control plane of
 * each test's own) and the lab's real Neutron and Octavia.
 *
 * Pools: new pods take pre-created ports of their namespace; pools are refilled, trimmed when
 * their size is lowered, emptied when pools are turned off, and removed with their namespace, also
 * one deleted while Raven is down. A take cut short by a crash (the port's tags already the pod's,
 * its attributes still the pool's) is finished by the next start: the state is made by hand while
 * Raven is down, since no kill can be timed to land between the two calls.
 *
 * Dual stack: with IPv4 and IPv6 CIDRs, namespaces get a subnet per family, pods a port with both
 * addresses, an IPv6 Service an IPv6 load balancer and a dual-stack Service one per family (each
 * with members of its family), and NetworkPolicy peers rules in both families; a SIGKILL, a
 * dual-stack Service made single-stack and a namespace's deletion leave nothing behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { identityOf } from '../../src/translator/identity.js';
import { privateCluster, freshNamespace } from '../harness/test-cluster.js';
import { healthUrl, httpGet, ok, startRaven, tempDir, until, writeConfig } from './daemon-process.js';
import { config, converge, labSetup, owned, pod, ruleText, type Expected } from './translator-world.js';

interface Named {
  metadata: { name: string; uid: string };
}

test(
  'port pools: pods take pre-created ports; pools are refilled, trimmed, emptied and removed with their namespace',
  { timeout: 3_600_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const plane = await privateCluster();
    t.after(() => plane.stop());
    const clusterId = `e2e-${randomBytes(3).toString('hex')}`;
    const dir = await tempDir(t);
    const withPool = (portPool: string | undefined) =>
      writeConfig(
        dir,
        config({
          clusterId,
          project,
          neutron: lab.neutronUrl,
          octavia: lab.octaviaUrl,
          ...(portPool === undefined ? {} : { portPool }),
        }),
      );
    let cfg = await withPool('{ size: 4, refillBelow: 2 }');
    let expected: Expected = { pool: { size: 4, refillBelow: 2 } };
    const a = await freshNamespace(plane, 'pa');
    const b = await freshNamespace(plane, 'pb');
    const create = (path: string, body: object) => ok(plane.adminRequest('POST', path, body));
    const get = <T>(path: string) => ok<T>(plane.adminRequest('GET', path));
    const uidOf = async (path: string) => (await get<Named>(path)).metadata.uid;
    const poolPorts = async (namespace: string) => {
      const uid = await uidOf(`/api/v1/namespaces/${namespace}`);
      return (await owned(os, clusterId)).ports.filter((p) => p.d.role === 'pool-port' && p.d.uid === uid);
    };
    const podPort = async (namespace: string, name: string) => {
      const uid = await uidOf(`/api/v1/namespaces/${namespace}/pods/${name}`);
      return (await owned(os, clusterId)).ports.find((p) => p.d.role === 'pod-port' && p.d.uid === uid)?.r;
    };

    let raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    await converge(os, clusterId, plane, raven, 'every namespace has a full pool', expected);
    const pooled = new Set((await poolPorts(a)).map((p) => p.r.id));
    assert.equal(pooled.size, 4, 'the pool was filled to its size');
    // Neutron holding the ports is not Raven knowing them: a fill whose create timed out (a
    // loaded Neutron) knows them only once the namespace's retried pass lists them. Until then a
    // pod would rightly get its port by create; wait for Raven to report every pool port free.
    const metrics = `${await healthUrl(raven)}/metrics`;
    const inPools = (await owned(os, clusterId)).ports.filter((p) => p.d.role === 'pool-port').length;
    await until(`Raven reports the ${inPools} pool ports free`, async () => {
      const text = (await httpGet(metrics)).body;
      return new RegExp(`raven_translator_pool_ports\\{[^}]*state="free"[^}]*\\} ${inPools}$`, 'm').test(
        text,
      );
    });

    // Three pods at once: each takes a pool port (4 free, 3 taken); the pool is refilled below 2.
    await Promise.all(['p1', 'p2', 'p3'].map((name) => create(`/api/v1/namespaces/${a}/pods`, pod(name))));
    await converge(os, clusterId, plane, raven, 'the pods have ports and the pool is refilled', expected);
    for (const name of ['p1', 'p2', 'p3']) {
      const port = await podPort(a, name);
      assert.ok(
        port !== undefined && pooled.has(port.id),
        `pod ${name} took a port from the pool: ${port?.id ?? 'none'} is not one of ${[...pooled].join(', ')}\n` +
          raven
            .stderr()
            .split('\n')
            .filter((l) => /pool|"level":(40|50)/.test(l))
            .slice(-30)
            .join('\n'),
      );
    }

    // While Raven is down: namespace b is deleted (its pool must go), and a take is cut short —
    // a pool port of a already carries the tags of the new pod p4, but nothing else of it.
    raven.kill('SIGKILL');
    await raven.exited;
    const leftInB = (await poolPorts(b)).length;
    assert.ok(leftInB > 0, 'namespace b has a pool before its deletion');
    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${b}`));
    await until(
      'namespace b is gone',
      async () => (await plane.adminRequest('GET', `/api/v1/namespaces/${b}`)).status === 404,
      { timeoutMs: 120_000 },
    );
    await create(`/api/v1/namespaces/${a}/pods`, pod('p4'));
    const p4 = await get<Named & { metadata: { namespace: string } }>(`/api/v1/namespaces/${a}/pods/p4`);
    const [halfTaken] = await poolPorts(a);
    assert.ok(halfTaken !== undefined, 'namespace a has a free pool port');
    const p4Identity = identityOf(clusterId, 'pod-port', {
      kind: 'Pod',
      namespace: a,
      name: 'p4',
      uid: p4.metadata.uid,
    });
    await os.neutron.ports.setTags(halfTaken.r.id, p4Identity.tags);

    // Restarted with a smaller pool: a's is trimmed, b's is gone, p4 has the port its take began.
    cfg = await withPool('{ size: 1, refillBelow: 1 }');
    expected = { pool: { size: 1, refillBelow: 1 } };
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    await converge(
      os,
      clusterId,
      plane,
      raven,
      'after the restart: trimmed, removed, take finished',
      expected,
    );
    assert.equal((await podPort(a, 'p4'))?.id, halfTaken.r.id, 'p4 kept the port whose take was cut short');
    assert.equal((await poolPorts(a)).length, 1, 'the pool of a was trimmed to its new size');

    // Pools off: the pools left are emptied.
    raven.kill('SIGKILL');
    await raven.exited;
    cfg = await withPool(undefined);
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    await converge(os, clusterId, plane, raven, 'with pools off no pool port is left', {});

    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${a}`));
    await until(
      'namespace a is gone',
      async () => (await plane.adminRequest('GET', `/api/v1/namespaces/${a}`)).status === 404,
      { timeoutMs: 120_000 },
    );
    await converge(os, clusterId, plane, raven, 'deleting the namespace leaves nothing of it', {});
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);

test(
  'dual stack: subnets per family, ports with both addresses, IPv6 and dual-stack Services, policies in both families',
  { timeout: 3_600_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const serviceCidrs = ['10.96.0.0/16', 'fd00:10:96::/112'];
    const plane = await privateCluster({ serviceClusterIpRange: serviceCidrs.join(',') });
    t.after(() => plane.stop());
    const clusterId = `e2e-${randomBytes(3).toString('hex')}`;
    const dir = await tempDir(t);
    const cfg = await writeConfig(
      dir,
      config({
        clusterId,
        project,
        neutron: lab.neutronUrl,
        octavia: lab.octaviaUrl,
        serviceCidr: serviceCidrs.join(','),
        podCidr: '10.244.0.0/16,fd00:10:244::/56',
        portPool: '{ size: 2 }',
      }),
    );
    const expected: Expected = { families: [4, 6], serviceCidrs, pool: { size: 2, refillBelow: 1 } };
    const ns = await freshNamespace(plane, 'ds');
    const create = (path: string, body: object) => ok(plane.adminRequest('POST', path, body));
    for (const name of ['w1', 'w2']) await create(`/api/v1/namespaces/${ns}/pods`, pod(name));
    await create(`/api/v1/namespaces/${ns}/pods`, pod('db', { app: 'db' }));
    const service = (name: string, spec: object) =>
      create(`/api/v1/namespaces/${ns}/services`, {
        metadata: { name },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
      });
    await service('v4', {});
    await service('v6', { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv6'] });
    await service('dual', { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6', 'IPv4'] });
    const slice = (svc: string, family: 4 | 6) =>
      create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
        metadata: {
          name: `${svc}-ipv${family}`,
          labels: {
            'kubernetes.io/service-name': svc,
            'endpointslice.kubernetes.io/managed-by': 'raven-e2e',
          },
        },
        addressType: `IPv${family}`,
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: ['w1', 'w2'].map((p, i) => ({
          addresses: [family === 4 ? `192.0.2.${i + 1}` : `2001:db8::${i + 1}`],
          targetRef: { kind: 'Pod', name: p },
        })),
      });
    await slice('v4', 4);
    await slice('v6', 6);
    await slice('dual', 6);
    await slice('dual', 4);
    await create(`/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`, {
      metadata: { name: 'db-from-web' },
      spec: {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }],
      },
    });

    let raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    await converge(os, clusterId, plane, raven, 'everything is translated in both families', expected);

    // A load balancer per clusterIP: IPv4 for v4, IPv6 for v6, one of each for dual (problems()
    // has checked each VIP, listener and member; here, that the families are the ones asked for).
    const services = await ok<{
      items: { metadata: { name: string; uid: string }; spec: { clusterIPs: string[] } }[];
    }>(plane.adminRequest('GET', `/api/v1/namespaces/${ns}/services`));
    const state = await owned(os, clusterId);
    const families = Object.fromEntries(
      services.items.map((svc) => [
        svc.metadata.name,
        state.lbs
          .filter((x) => x.d.uid === svc.metadata.uid)
          .map((x) => ((x.r.vip_address ?? '').includes(':') ? 'IPv6' : 'IPv4'))
          .sort(),
      ]),
    );
    assert.deepEqual(families, { v4: ['IPv4'], v6: ['IPv6'], dual: ['IPv4', 'IPv6'] });
    // The policy admits each web pod by both of its addresses.
    const webIps = state.ports
      .filter((p) => p.d.role === 'pod-port' && /\/w\d$/.test(p.d.key))
      .flatMap((p) => p.r.fixed_ips.map((f) => f.ip_address));
    assert.equal(webIps.length, 4, 'two web pods, two addresses each');
    const group = state.groups.find((g) => g.d.role === 'np-sg')?.r;
    const rules = (group?.security_group_rules ?? []).map(ruleText).sort();
    const want = webIps
      .map((ip) => (ip.includes(':') ? `ingress IPv6 from ${ip}/128` : `ingress IPv4 from ${ip}/32`))
      .sort();
    assert.deepEqual(rules, want, "the policy's rules");

    raven.kill('SIGKILL');
    await raven.exited;
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    await converge(os, clusterId, plane, raven, 'after a SIGKILL nothing is duplicated', expected);

    // The dual-stack Service made single-stack: its IPv4 load balancer and VIP port go.
    await ok(
      plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/services/dual`, {
        spec: { ipFamilyPolicy: 'SingleStack' },
      }),
    );
    await converge(os, clusterId, plane, raven, "the dropped family's load balancer is removed", expected);
    await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${ns}`));
    await until(
      'the namespace is gone',
      async () => (await plane.adminRequest('GET', `/api/v1/namespaces/${ns}`)).status === 404,
      { timeoutMs: 120_000 },
    );
    await converge(os, clusterId, plane, raven, 'deleting the namespace leaves nothing of it', expected);
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);
