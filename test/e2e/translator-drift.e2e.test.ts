/**
 * The translator heals drift without a Kubernetes event, against the real Neutron and Octavia of
 * the lab and a real kube-apiserver. Once OpenStack matches the cluster, eight things are changed
 * behind Raven's back with plain API calls, and nothing in the cluster is touched afterwards:
 * a rule of a namespace's group is deleted; TCP 22 from 0.0.0.0/0 is added to a NetworkPolicy's
 * group; a pod's port loses its namespace's group, and a second port claiming that pod (its name,
 * description and tags) is made in an open group; the namespace's subnet is taken off the router;
 * another Service's floating IP is taken off its VIP; a member is deleted from a Service's pool; and a
 * listener Raven claims is moved to another port (Octavia cannot change a listener's port in
 * place: a listener with Raven's name, description and tags is made on 8081 and the one on 80
 * deleted, the state a change by hand leaves). Every one must be repaired by the first resync pass
 * that starts after the last change (the logs say which pass repaired what), counted in
 * `raven_translator_drift_repaired_total`, and OpenStack must match the cluster again — while a
 * group and a rule made by hand in the same project are left alone. The test prints how long after
 * the last change each kind was repaired, and each pass's calls and duration (figures, not
 * assertions).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { privateCluster, freshNamespace } from '../harness/test-cluster.js';
import { healthUrl, httpGet, ok, startRaven, tempDir, until, writeConfig } from './daemon-process.js';
import { parseDescription } from '../../src/translator/identity.js';
import { config, converge, externalNetwork, labSetup, owned, pod } from './translator-world.js';

/** Short, so the test is quick; the waits are on conditions, never on this period. */
const RESYNC_SECONDS = 8;

test(
  'rules, port groups, router interfaces, floating IPs, members and listeners changed behind Raven’s back are put back by the next resync pass, and what was made by hand survives',
  { timeout: 1_800_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const plane = await privateCluster();
    t.after(() => plane.stop());
    const clusterId = `drift-${randomBytes(3).toString('hex')}`;
    const external = await externalNetwork(os, clusterId);
    const dir = await tempDir(t);
    const cfg = await writeConfig(
      dir,
      config({
        clusterId,
        project,
        neutron: lab.neutronUrl,
        octavia: lab.octaviaUrl,
        external,
        gcSeconds: 3600,
        resyncSeconds: RESYNC_SECONDS,
      }),
    );
    const ns = await freshNamespace(plane, 'drift');
    const create = (path: string, body: object) => ok(plane.adminRequest('POST', path, body));
    await create(`/api/v1/namespaces/${ns}/pods`, pod('p1', { app: 'web' }));
    await create(`/api/v1/namespaces/${ns}/pods`, pod('p2', { app: 'db' }));
    await create(`/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`, {
      metadata: { name: 'web-from-db' },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'db' } } }], ports: [{ port: 80 }] }],
      },
    });
    await create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: {
        ports: [
          { name: 'http', port: 80, targetPort: 8080 },
          { name: 'metrics', port: 9090 },
        ],
      },
    });
    // A Service of its own for the floating IP: a reconcile of `web` (for its member or listener)
    // would put the floating IP back too, before a pass could see it gone.
    await create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'pub' },
      spec: { ports: [{ name: 'http', port: 80 }], externalIPs: ['172.24.4.60'] },
    });
    await create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
      metadata: {
        name: 'web-manual',
        labels: {
          'kubernetes.io/service-name': 'web',
          'endpointslice.kubernetes.io/managed-by': 'raven-e2e',
        },
      },
      addressType: 'IPv4',
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9090, protocol: 'TCP' },
      ],
      endpoints: ['p1', 'p2'].map((p, i) => ({
        addresses: [`192.0.2.${i + 1}`],
        targetRef: { kind: 'Pod', name: p },
      })),
    });
    // Made by hand in the same project: a group of its own with an open rule.
    const handGroup = await os.neutron.securityGroups.create({
      name: `${clusterId}-ops`,
      description: 'by hand',
    });
    const handRule = await os.neutron.securityGroupRules.create({
      security_group_id: handGroup.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    });

    const raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    const metricsUrl = `${await healthUrl(raven)}/metrics`;
    const started = Date.now();
    const step = (what: string) => t.diagnostic(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await converge(os, clusterId, plane, raven, 'the cluster is translated');
    step('translated');

    const state = await owned(os, clusterId);
    const roleOf = (role: string, key: string) =>
      state.groups.find((g) => g.d.role === role && g.d.key === key)?.r;
    const nsGroup = roleOf('ns-sg', ns);
    const policyGroup = roleOf('np-sg', `${ns}/web-from-db`);
    const p2Port = state.ports.find((p) => p.d.role === 'pod-port' && p.d.key === `${ns}/p2`)?.r;
    const nsSubnet = state.subnets.find((s) => s.d.role === 'ns-subnet' && s.d.key === ns)?.r;
    const fip = state.fips.find((x) => x.d.key === `${ns}/pub`)?.r;
    const router = (await os.neutron.routers.list()).find(
      (r) => parseDescription(clusterId, r.description)?.role === 'router',
    );
    const lb = state.lbs.find((x) => x.d.key === `${ns}/web`)?.r;
    const listeners = state.listeners.filter((x) => x.d.key === `${ns}/web`).map((x) => x.r);
    const http = listeners.find((l) => l.protocol_port === 80);
    const metrics = listeners.find((l) => l.protocol_port === 9090);
    assert.ok(
      nsGroup && policyGroup && p2Port && nsSubnet && fip && router && lb && http && metrics,
      'everything was made',
    );
    const vipPort = fip.port_id;
    assert.ok(typeof vipPort === 'string', 'the floating IP is on the VIP');
    const onRouter = async () =>
      (await os.neutron.ports.list({ device_id: router.id })).some((p) =>
        p.fixed_ips.some((f) => f.subnet_id === nsSubnet.id),
      );
    assert.ok(await onRouter(), "the namespace's subnet is on the router");
    const serviceRule = nsGroup.security_group_rules?.find((r) => r.remote_ip_prefix === '10.96.0.0/16');
    assert.ok(serviceRule, "the namespace's group admits the service CIDR");
    const metricsPool = metrics.default_pool_id;
    assert.ok(typeof metricsPool === 'string');
    const [aMember] = await os.octavia.members(metricsPool).list();
    assert.ok(aMember, 'the metrics pool has members');

    // Start right after a pass, so that the changes usually fall between two passes.
    const passes = () => raven.logs.filter((l) => l.msg === 'resync pass done').length;
    const seen = passes();
    await until('a resync pass ends', () => passes() > seen, { timeoutMs: 600_000 });

    // Behind Raven's back: Neutron first, then Octavia (one change at a time, each once ACTIVE).
    // When each kind was last changed, for the figures.
    const changed = new Map<string, number>();
    await os.neutron.securityGroupRules.delete(serviceRule.id);
    const open = await os.neutron.securityGroupRules.create({
      security_group_id: policyGroup.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    });
    changed.set('security-group-rule', Date.now());
    await os.neutron.ports.update(p2Port.id, {
      security_groups: (p2Port.security_groups ?? []).filter((g) => g !== nsGroup.id),
    });
    // A second port claiming the same pod (its name, description and tags), in the open group.
    const copy = await os.neutron.ports.create({
      network_id: p2Port.network_id,
      name: p2Port.name ?? '',
      description: p2Port.description ?? '',
      device_owner: 'raven:pod',
      device_id: p2Port.device_id ?? '',
      security_groups: [handGroup.id],
      tags: p2Port.tags ?? [],
    });
    changed.set('port', Date.now());
    await os.neutron.routers.removeInterface(router.id, { subnet_id: nsSubnet.id });
    changed.set('router-interface', Date.now());
    await os.neutron.floatingIps.disassociate(fip.id);
    changed.set('floating-ip', Date.now());
    const wait = { timeoutMs: 300_000 };
    await os.octavia.whenActive(lb.id, () => os.octavia.members(metricsPool).delete(aMember.id), wait);
    changed.set('member', Date.now());
    await os.octavia.whenActive(
      lb.id,
      () =>
        os.octavia.listeners.create({
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          protocol_port: 8081,
          name: http.name ?? '',
          description: http.description ?? '',
          tags: http.tags ?? [],
        }),
      wait,
    );
    await os.octavia.whenActive(lb.id, () => os.octavia.listeners.delete(http.id), wait);
    changed.set('listener', Date.now());
    const passesAtChange = passes();
    step('changed behind its back');

    // Nothing happens in the cluster from here on: the resync pass alone must find each change.
    const repaired = () => raven.logs.filter((l) => l.msg.startsWith('drift repaired'));
    const kinds = ['security-group-rule', 'port', 'router-interface', 'floating-ip', 'member', 'listener'];
    await until(
      'the drift is repaired',
      () => kinds.every((k) => repaired().some((l) => l.kind === k)) && passes() > passesAtChange,
      {
        timeoutMs: 600_000,
        show: () =>
          [
            `not repaired yet: ${kinds.filter((k) => !repaired().some((l) => l.kind === k)).join(', ')}`,
            ...raven.logs
              .filter((l) => l.level >= 40 || l.msg === 'resync pass done')
              .slice(-40)
              .map((l) => JSON.stringify(l)),
          ].join('\n'),
      },
    );
    step('drift found and repairs started');
    await converge(os, clusterId, plane, raven, 'OpenStack matches the cluster again');
    step('repaired');
    // The figures: how long after its last change each kind's repair was logged, and each pass.
    for (const kind of kinds) {
      const at = changed.get(kind) ?? Number.NaN;
      const first = repaired().find((l) => l.kind === kind && Number(l.time) >= at);
      t.diagnostic(
        `${kind}: repair logged ${((Number(first?.time) - at) / 1000).toFixed(1)} s after its last change (resyncSeconds ${RESYNC_SECONDS})`,
      );
    }
    for (const [i, l] of raven.logs.filter((x) => x.msg === 'resync pass done').entries())
      t.diagnostic(
        `pass ${i + 1}: ${String(l.listCalls)} calls, ${String(l.durationMs)} ms, repaired ${JSON.stringify(l.repaired)}`,
      );
    assert.ok(await onRouter(), "the namespace's subnet is on the router again");
    const p2Ports = await os.neutron.ports.list({ tags: p2Port.tags ?? [] });
    assert.deepEqual(
      p2Ports.map((p) => p.id),
      [p2Port.id],
      `the second port claiming the pod (${copy.id}) is gone, the one the pod records kept`,
    );
    assert.equal(
      (await os.neutron.floatingIps.get(fip.id)).port_id,
      vipPort,
      'the floating IP is on the VIP again',
    );
    const rulesNow = (await os.neutron.securityGroups.get(policyGroup.id)).security_group_rules ?? [];
    assert.ok(!rulesNow.some((r) => r.id === open.id), 'the open rule on the policy group is gone');
    assert.ok(
      !rulesNow.some((r) => r.port_range_min === 22),
      `no rule of the policy group admits port 22: ${JSON.stringify(rulesNow)}`,
    );

    // Repaired by the first pass that started after the last change: at most the pass running
    // during the changes, and the one after it.
    const lines = raven.logs.map((l) => l.msg);
    const donesBefore = (index: number) =>
      lines.slice(0, index).filter((m) => m === 'resync pass done').length;
    for (const kind of kinds) {
      const at = raven.logs.findIndex((l) => l.msg.startsWith('drift repaired') && l.kind === kind);
      assert.ok(
        donesBefore(at) <= passesAtChange + 1,
        `${kind} repaired in pass ${donesBefore(at) + 1}, the changes ended after pass ${passesAtChange}`,
      );
    }
    const whats = repaired().map((l) => String(l.drift));
    assert.ok(
      whats.some((w) => /tcp 22-22 from 0\.0\.0\.0\/0 .* deleted/.test(w)),
      whats.join('\n'),
    );
    assert.ok(
      whats.some((w) => /10\.96\.0\.0\/16 .* missing: created/.test(w)),
      whats.join('\n'),
    );

    // Counted per kind.
    const body = (await httpGet(metricsUrl)).body;
    const count = (kind: string) =>
      Number(
        new RegExp(
          `raven_translator_drift_repaired_total\\{translator="openstack",kind="${kind}"\\} (\\d+)`,
        ).exec(body)?.[1] ?? 0,
      );
    assert.ok(count('security-group-rule') >= 2, body);
    for (const kind of ['port', 'router-interface', 'floating-ip', 'member', 'listener'])
      assert.ok(count(kind) >= 1, `${kind}:\n${body}`);

    // What was made by hand is untouched.
    const hand = await os.neutron.securityGroups.get(handGroup.id);
    assert.ok(
      hand.security_group_rules?.some((r) => r.id === handRule.id),
      'the rule made by hand is still there',
    );
    await os.neutron.securityGroups.delete(handGroup.id);
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);
