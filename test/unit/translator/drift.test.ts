import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Port, SecurityGroup, SecurityGroupRule } from '../../../src/openstack/neutron-types.js';
import type { Member } from '../../../src/openstack/octavia-types.js';
import {
  compareDrift,
  type DesiredState,
  type Listing,
  type OwnerRef,
} from '../../../src/translator/drift.js';
import { identityOf, type Role } from '../../../src/translator/identity.js';
import { DEFAULT_EGRESS, type RuleSpec } from '../../../src/translator/security-group-rules.js';

/*
 * A converged cluster `c1` as Neutron and Octavia list it (the fields the translator reads, in the
 * shapes the APIs answer with): one namespace `a` with a pod `a/p1` selected by the policy
 * `a/deny` (ingress isolated: the pod carries the policy's group and the egress group), and a
 * Service `a/web` on 10.96.0.10 with one TCP port 80 and the pod as its member.
 */
const C = 'c1';
const cluster: OwnerRef = { kind: 'Cluster', key: 'cluster', uid: C };
const ns: OwnerRef = { kind: 'Namespace', key: 'a', uid: 'ns-uid' };
const pod: OwnerRef = { kind: 'Pod', key: 'a/p1', uid: 'pod-uid' };
const policy: OwnerRef = { kind: 'NetworkPolicy', key: 'a/deny', uid: 'np-uid' };
const svc: OwnerRef = { kind: 'Service', key: 'a/web', uid: 'svc-uid' };

function claimedBy(role: Role, owner: OwnerRef, suffix = '') {
  const parts = owner.key.split('/');
  const namespace = parts.length > 1 ? parts[0] : undefined;
  const id = identityOf(
    C,
    role,
    { kind: owner.kind, namespace, name: parts.at(-1) ?? '', uid: owner.uid },
    suffix,
  );
  return { name: id.name, description: id.description, tags: id.tags };
}

function rule(group: string, id: string, spec: RuleSpec): SecurityGroupRule {
  return {
    id,
    security_group_id: group,
    ethertype: 'IPv4',
    protocol: null,
    port_range_min: null,
    port_range_max: null,
    remote_ip_prefix: null,
    remote_group_id: null,
    ...spec,
  } as SecurityGroupRule;
}

const nsRules: RuleSpec[] = [
  { direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.244.0.0/24' },
  { direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.96.0.0/16' },
];
const policyRulesOf: RuleSpec[] = [
  { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 80, port_range_max: 80 },
];
const member = { address: '10.244.0.5', protocol_port: 8080, subnet_id: 'subnet-a' };

function desired(): DesiredState {
  return {
    cluster: C,
    routerId: 'router',
    clusterSubnetIds: ['subnet-svc'],
    groups: [
      { role: 'egress-sg', owner: cluster, rules: DEFAULT_EGRESS },
      { role: 'ns-sg', owner: ns, rules: nsRules },
      { role: 'np-sg', owner: policy, rules: policyRulesOf },
    ],
    namespaces: [{ owner: ns, families: [4] }],
    pods: [
      {
        owner: pod,
        namespaceUid: ns.uid,
        groups: [
          { role: 'np-sg', uid: policy.uid },
          { role: 'egress-sg', uid: C },
        ],
      },
    ],
    services: [
      {
        owner: svc,
        loadBalancers: [
          {
            vipAddress: '10.96.0.10',
            listeners: [{ suffix: 'tcp-80', protocol: 'TCP', port: 80, members: [member] }],
          },
        ],
        floatingIpOn: undefined,
      },
    ],
  };
}

function listing(): Listing {
  const group = (id: string, role: Role, owner: OwnerRef, rules: RuleSpec[]): SecurityGroup => ({
    id,
    ...claimedBy(role, owner),
    security_group_rules: rules.map((r, i) => rule(id, `${id}-r${i}`, r)),
  });
  return {
    groups: [
      group('sg-egress', 'egress-sg', cluster, [...DEFAULT_EGRESS]),
      group('sg-ns', 'ns-sg', ns, nsRules),
      group('sg-np', 'np-sg', policy, policyRulesOf),
      // Made by hand, in the same project: not Raven's.
      {
        id: 'sg-mine',
        name: 'ops',
        description: 'by hand',
        tags: [],
        security_group_rules: [
          rule('sg-mine', 'ops-r0', { direction: 'ingress', remote_ip_prefix: '0.0.0.0/0' }),
        ],
      },
    ],
    networks: [{ id: 'net-a', ...claimedBy('ns-net', ns) }],
    subnets: [
      {
        id: 'subnet-a',
        network_id: 'net-a',
        ip_version: 4,
        cidr: '10.244.0.0/24',
        ...claimedBy('ns-subnet', ns),
      },
    ],
    ports: [
      {
        id: 'port-p1',
        network_id: 'net-a',
        mac_address: 'fa:16:3e:00:00:01',
        fixed_ips: [{ subnet_id: 'subnet-a', ip_address: '10.244.0.5' }],
        device_owner: 'raven:pod',
        device_id: pod.uid,
        security_groups: ['sg-np', 'sg-egress'],
        ...claimedBy('pod-port', pod),
      },
      {
        id: 'port-vip',
        network_id: 'net-svc',
        mac_address: 'fa:16:3e:00:00:02',
        fixed_ips: [{ subnet_id: 'subnet-svc', ip_address: '10.96.0.10' }],
        device_owner: 'raven:vip',
        device_id: svc.uid,
        ...claimedBy('vip-port', svc),
      },
    ],
    routerPorts: [
      {
        id: 'rp-svc',
        network_id: 'net-svc',
        mac_address: 'fa:16:3e:00:00:03',
        fixed_ips: [{ subnet_id: 'subnet-svc', ip_address: '10.96.255.254' }],
        device_owner: 'network:router_interface',
        device_id: 'router',
      },
      {
        id: 'rp-a',
        network_id: 'net-a',
        mac_address: 'fa:16:3e:00:00:04',
        fixed_ips: [{ subnet_id: 'subnet-a', ip_address: '10.244.0.1' }],
        device_owner: 'network:router_interface',
        device_id: 'router',
      },
    ],
    floatingIps: [],
    loadBalancers: [
      {
        id: 'lb-web',
        vip_address: '10.96.0.10',
        vip_port_id: 'port-vip',
        provisioning_status: 'ACTIVE',
        ...claimedBy('lb', svc),
      },
    ],
    listeners: [
      {
        id: 'l-80',
        protocol: 'TCP',
        protocol_port: 80,
        default_pool_id: 'pool-80',
        loadbalancers: [{ id: 'lb-web' }],
        ...claimedBy('listener', svc, 'tcp-80'),
      },
    ],
    pools: [
      {
        id: 'pool-80',
        protocol: 'TCP',
        lb_algorithm: 'ROUND_ROBIN',
        loadbalancers: [{ id: 'lb-web' }],
        listeners: [{ id: 'l-80' }],
        members: [{ id: 'm1' }],
        ...claimedBy('pool', svc, 'tcp-80'),
      },
    ],
    members: new Map(),
  };
}

const summary = (l: Listing, d = desired()) =>
  compareDrift(d, l).map((r) => `${r.action} ${r.kind} ${r.owner.kind}/${r.owner.key}`);

test('a listing that matches the desired state needs no repair', () => {
  assert.deepEqual(compareDrift(desired(), listing()), []);
});

test('a rule no policy implies is deleted, before a missing rule is created and before anything is reconciled', () => {
  const l = listing();
  const [egress, nsGroup, npGroup] = l.groups;
  assert.ok(egress && nsGroup && npGroup);
  // Behind Raven's back: a rule of the namespace's group deleted, TCP 22 from anywhere added to the
  // policy's group, and the pod's port given back its namespace's group.
  nsGroup.security_group_rules = (nsGroup.security_group_rules ?? []).slice(1);
  npGroup.security_group_rules?.push(
    rule('sg-np', 'open-22', {
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    }),
  );
  const port = l.ports[0];
  assert.ok(port);
  port.security_groups = ['sg-np', 'sg-egress', 'sg-ns'];
  const repairs = compareDrift(desired(), l);
  assert.deepEqual(
    repairs.map((r) => `${r.action} ${r.kind} ${r.owner.kind}/${r.owner.key}`),
    [
      'delete-rule security-group-rule NetworkPolicy/a/deny',
      'create-rule security-group-rule Namespace/a',
      'reconcile port Pod/a/p1',
    ],
  );
  const [open, missing] = repairs;
  assert.equal(open?.action === 'delete-rule' ? open.rule.id : undefined, 'open-22');
  assert.match(open?.what ?? '', /ingress IPv4 tcp 22-22 from 0\.0\.0\.0\/0/);
  assert.deepEqual(missing?.action === 'create-rule' ? missing.rule : undefined, nsRules[0]);
});

test('a rule added to the egress group (any rule beyond everything out) is deleted', () => {
  const l = listing();
  l.groups[0]?.security_group_rules?.push(rule('sg-egress', 'in', { direction: 'ingress' }));
  assert.deepEqual(summary(l), ['delete-rule security-group-rule Cluster/cluster']);
});

test('a group or rule made by hand, or another cluster’s, is never repaired', () => {
  const l = listing();
  const other = identityOf('c2', 'np-sg', {
    kind: 'NetworkPolicy',
    namespace: 'a',
    name: 'deny',
    uid: 'np-uid',
  });
  l.groups = [
    ...l.groups,
    {
      id: 'sg-c2',
      ...other,
      security_group_rules: [rule('sg-c2', 'c2-r0', { direction: 'ingress', remote_ip_prefix: '0.0.0.0/0' })],
    },
  ];
  l.groups[3]?.security_group_rules?.push(
    rule('sg-mine', 'ops-r1', { direction: 'ingress', protocol: 'tcp' }),
  );
  assert.deepEqual(compareDrift(desired(), l), []);
});

test('rules that cannot be known yet are not compared, but the group must exist', () => {
  const d = desired();
  const l = listing();
  l.groups[2]?.security_group_rules?.push(
    rule('sg-np', 'x', { direction: 'ingress', remote_ip_prefix: '10.0.0.0/8' }),
  );
  const groups = d.groups.map((g) => (g.role === 'np-sg' ? { ...g, rules: undefined } : g));
  assert.deepEqual(summary(l, { ...d, groups }), []);
  l.groups = l.groups.filter((g) => g.id !== 'sg-np');
  // The pod's groups are not compared while one of them is missing: the group's owner is reconciled.
  assert.deepEqual(summary(l), ['reconcile security-group NetworkPolicy/a/deny']);
});

test('a deleted member, a listener moved to another port and a pool detached are reconciled through the Service', () => {
  const noMember = listing();
  const pool = noMember.pools[0];
  assert.ok(pool);
  pool.members = [];
  assert.deepEqual(summary(noMember), ['reconcile member Service/a/web']);

  const moved = listing();
  const listener = moved.listeners[0];
  assert.ok(listener);
  listener.protocol_port = 8081;
  assert.deepEqual(summary(moved), ['reconcile listener Service/a/web']);

  const detached = listing();
  const l80 = detached.listeners[0];
  assert.ok(l80);
  l80.default_pool_id = null;
  assert.deepEqual(summary(detached), ['reconcile pool Service/a/web']);
});

test('members fetched because their ids changed are compared by address, port and subnet', () => {
  const l = listing();
  const same: Member = { id: 'm2', ...member, provisioning_status: 'ACTIVE' };
  const other: Member = { id: 'm3', ...member, address: '10.244.0.99' };
  assert.deepEqual(summary({ ...l, members: new Map([['pool-80', [same]]]) }), []);
  assert.deepEqual(summary({ ...l, members: new Map([['pool-80', [other]]]) }), [
    'reconcile member Service/a/web',
  ]);
});

test('what is under a load balancer that is not ACTIVE is not compared', () => {
  const l = listing();
  const lb = l.loadBalancers[0];
  assert.ok(lb);
  lb.provisioning_status = 'PENDING_UPDATE';
  l.listeners = [];
  assert.deepEqual(summary(l), []);
});

test('a subnet taken off the router is reconciled through its namespace, a service subnet through the cluster', () => {
  const l = listing();
  l.routerPorts = [];
  assert.deepEqual(summary(l), [
    'reconcile router-interface Cluster/cluster',
    'reconcile router-interface Namespace/a',
  ]);
});

test('missing networks, subnets, ports, load balancers and floating IPs, and unwanted ones, are reconciled', () => {
  const l = listing();
  l.networks = [];
  l.subnets = [];
  l.ports = l.ports.filter((p) => p.id !== 'port-p1');
  l.loadBalancers = [];
  l.floatingIps = [
    {
      id: 'fip',
      floating_network_id: 'ext',
      floating_ip_address: '172.24.4.9',
      port_id: 'port-vip',
      ...claimedBy('fip', svc),
    },
  ];
  assert.deepEqual(summary(l), [
    'reconcile network Namespace/a',
    'reconcile subnet Namespace/a',
    'reconcile port Pod/a/p1',
    'reconcile load-balancer Service/a/web',
    'reconcile floating-ip Service/a/web',
  ]);
  const wanted = desired();
  const withFip = { ...wanted, services: wanted.services.map((s) => ({ ...s, floatingIpOn: '10.96.0.10' })) };
  assert.deepEqual(summary(listing(), withFip), ['reconcile floating-ip Service/a/web']);
});

test('a port that does not identify its pod, or is on another network, is reconciled', () => {
  const l = listing();
  const port = l.ports[0] as Port;
  port.device_id = 'someone-else';
  port.network_id = 'net-other';
  assert.deepEqual(summary(l), ['reconcile port Pod/a/p1', 'reconcile port Pod/a/p1']);
});

test('a floating IP taken off the VIP, or moved to another port, is reconciled through the Service', () => {
  const wanted = desired();
  const withFip = { ...wanted, services: wanted.services.map((s) => ({ ...s, floatingIpOn: '10.96.0.10' })) };
  const on = (port_id: string | null): Listing => ({
    ...listing(),
    floatingIps: [
      {
        id: 'fip',
        floating_network_id: 'ext',
        floating_ip_address: '172.24.4.9',
        port_id,
        ...claimedBy('fip', svc),
      },
    ],
  });
  assert.deepEqual(summary(on('port-vip'), withFip), []);
  assert.deepEqual(summary(on(null), withFip), ['reconcile floating-ip Service/a/web']);
  assert.deepEqual(summary(on('port-p1'), withFip), ['reconcile floating-ip Service/a/web']);
  assert.match(compareDrift(withFip, on(null))[0]?.what ?? '', /172\.24\.4\.9 is on no port, not the VIP/);
});

test('a second port that claims the pod is extra: the pod is reconciled', () => {
  const l = listing();
  const [port] = l.ports;
  assert.ok(port);
  l.ports = [...l.ports, { ...port, id: 'port-p1-copy', security_groups: ['sg-mine'] }];
  const repairs = compareDrift(desired(), l);
  assert.deepEqual(
    repairs.map((r) => `${r.action} ${r.kind} ${r.owner.kind}/${r.owner.key}`),
    ['reconcile port Pod/a/p1'],
  );
  assert.match(repairs[0]?.what ?? '', /2 ports claim the pod \(port-p1, port-p1-copy\)/);
});

test('a second floating IP that claims the Service is extra: the Service is reconciled', () => {
  const wanted = desired();
  const withFip = { ...wanted, services: wanted.services.map((s) => ({ ...s, floatingIpOn: '10.96.0.10' })) };
  const fip = (id: string, address: string, port_id: string | null) => ({
    id,
    floating_network_id: 'ext',
    floating_ip_address: address,
    port_id,
    ...claimedBy('fip', svc),
  });
  const l = {
    ...listing(),
    floatingIps: [fip('fip', '172.24.4.9', 'port-vip'), fip('fip2', '172.24.4.10', null)],
  };
  const repairs = compareDrift(withFip, l);
  assert.deepEqual(
    repairs.map((r) => `${r.action} ${r.kind} ${r.owner.kind}/${r.owner.key}`),
    ['reconcile floating-ip Service/a/web'],
  );
  assert.match(repairs[0]?.what ?? '', /2 floating IPs claim the Service \(172\.24\.4\.9, 172\.24\.4\.10\)/);
});
