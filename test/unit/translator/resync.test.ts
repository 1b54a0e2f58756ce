import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../../src/cache/memory-store.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { OpenStackClient } from '../../../src/openstack/openstack-client.js';
import type {
  SecurityGroup,
  SecurityGroupRule,
  SecurityGroupRuleCreate,
} from '../../../src/openstack/neutron-types.js';
import type { TranslatorContext } from '../../../src/translator/context.js';
import type { DriftKind } from '../../../src/translator/drift.js';
import { identityOf, type Role } from '../../../src/translator/identity.js';
import { reconcileNamespace } from '../../../src/translator/namespace-translator.js';
import { resync, ResyncMemory } from '../../../src/translator/resync.js';
import { DEFAULT_EGRESS } from '../../../src/translator/security-group-rules.js';
import { defaultSettings } from '../../../src/translator/settings.js';
import { TranslationStatus } from '../../../src/translator/translation-status.js';
import { silentLogger } from '../../../src/util/logger.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';

/*
 * One resync pass over in-memory collections: namespace `a` (subnet 10.244.0.0/24) and the policy
 * `a/deny` (ingress, no rules: deny all) with no pod. The comparison itself is drift.test.ts's;
 * this is about what the pass does with its repairs.
 */
const C = 'c1';
const obj = (name: string, uid: string, namespace?: string, spec?: object): KubeObject => ({
  metadata: { name, uid, ...(namespace === undefined ? {} : { namespace }) },
  ...(spec ? { spec } : {}),
});

function claimed(
  role: Role,
  kind: 'Cluster' | 'Namespace' | 'NetworkPolicy',
  name: string,
  uid: string,
  namespace?: string,
) {
  const id = identityOf(C, role, { kind, namespace, name, uid });
  return { name: id.name, description: id.description, tags: id.tags };
}

function world() {
  const rule = (id: string, group: string, r: object): SecurityGroupRule => ({
    id,
    security_group_id: group,
    direction: 'ingress',
    ethertype: 'IPv4',
    ...r,
  });
  const groups: SecurityGroup[] = [
    {
      id: 'sg-egress',
      ...claimed('egress-sg', 'Cluster', 'cluster', C),
      security_group_rules: DEFAULT_EGRESS.map((r, i) => rule(`e${i}`, 'sg-egress', r)),
    },
    // Its rule from the service CIDR was deleted behind Raven's back.
    {
      id: 'sg-ns',
      ...claimed('ns-sg', 'Namespace', 'a', 'ns-uid'),
      security_group_rules: [rule('n0', 'sg-ns', { remote_ip_prefix: '10.244.0.0/24' })],
    },
    // TCP 22 from anywhere added behind Raven's back.
    {
      id: 'sg-np',
      ...claimed('np-sg', 'NetworkPolicy', 'deny', 'np-uid', 'a'),
      security_group_rules: [
        rule('open', 'sg-np', {
          protocol: 'tcp',
          port_range_min: 22,
          port_range_max: 22,
          remote_ip_prefix: '0.0.0.0/0',
        }),
      ],
    },
  ];
  const calls: string[] = [];
  // The subnets on the router, as its ports list them.
  const routerSubnets: [string, string][] = [
    ['subnet-svc', '10.96.255.254'],
    ['subnet-a', '10.244.0.1'],
  ];
  const list = <T>(items: T[], what: string) => ({
    list: () => {
      calls.push(`list ${what}`);
      return Promise.resolve(items);
    },
  });
  const gone = new Set<string>();
  const os = {
    neutron: {
      securityGroups: list(groups, 'security-groups'),
      networks: list([{ id: 'net-a', ...claimed('ns-net', 'Namespace', 'a', 'ns-uid') }], 'networks'),
      subnets: list(
        [
          {
            id: 'subnet-a',
            network_id: 'net-a',
            ip_version: 4,
            cidr: '10.244.0.0/24',
            ...claimed('ns-subnet', 'Namespace', 'a', 'ns-uid'),
          },
        ],
        'subnets',
      ),
      ports: {
        list: (filters?: { device_id?: string }) => {
          calls.push(filters?.device_id === undefined ? 'list ports' : 'list router ports');
          return Promise.resolve(
            filters?.device_id === undefined
              ? []
              : routerSubnets.map(([subnet, ip]) => ({
                  id: `rp-${subnet}`,
                  network_id: 'n',
                  mac_address: 'm',
                  fixed_ips: [{ subnet_id: subnet, ip_address: ip }],
                })),
          );
        },
      },
      floatingIps: list([], 'floating-ips'),
      securityGroupRules: {
        delete: (id: string) => {
          calls.push(`delete rule ${id}`);
          return Promise.resolve(gone.has(id) ? 'already-gone' : 'deleted');
        },
        create: (input: SecurityGroupRuleCreate) => {
          calls.push(
            `create rule in ${input.security_group_id} from ${input.remote_ip_prefix ?? 'anywhere'}`,
          );
          return Promise.resolve({ id: 'new', ...input } as SecurityGroupRule);
        },
      },
    },
    octavia: {
      loadBalancers: list([], 'load-balancers'),
      listeners: list([], 'listeners'),
      pools: list([], 'pools'),
    },
  };
  const stores = {
    namespaces: new MemoryStore<KubeObject>(),
    pods: new MemoryStore<KubeObject>(),
    services: new MemoryStore<KubeObject>(),
    endpointSlices: new MemoryStore<KubeObject>(),
    networkPolicies: new MemoryStore<KubeObject>(),
  };
  stores.namespaces.add(obj('a', 'ns-uid'));
  stores.networkPolicies.add(obj('deny', 'np-uid', 'a', { podSelector: {}, policyTypes: ['Ingress'] }));
  const status = new TranslationStatus(() => 0);
  status.managed('Namespace', 'a');
  status.managed('NetworkPolicy', 'a/deny');
  const enqueued: string[] = [];
  const repaired: DriftKind[] = [];
  const reports: string[] = [];
  const ctx = {
    os: os as unknown as OpenStackClient,
    settings: {
      ...defaultSettings,
      clusterId: C,
      serviceCidrs: ['10.96.0.0/16'],
      podCidrs: ['10.244.0.0/16'],
    },
    infra: {
      serviceNetworkId: 'net-svc',
      serviceSubnets: [{ id: 'subnet-svc', cidr: '10.96.0.0/16', family: 4 }],
      subnetPools: [{ id: 'pool', family: 4 }],
      routerId: 'router',
      egressGroupId: 'sg-egress',
      projectId: undefined,
    },
    ...stores,
    status,
    namespaceNetworks: new Map(),
    policyGroups: new Map(),
    logger: silentLogger,
    driftRepaired: (kind: DriftKind, owner: { kind: string; key: string }, what: string) => {
      repaired.push(kind);
      reports.push(`${owner.kind}/${owner.key}: ${what}`);
    },
  } as unknown as TranslatorContext;
  const deps = {
    enqueue: (kind: string, key: string) => enqueued.push(`${kind}/${key}`),
    repairInfrastructure: () => Promise.reject(new Error('not expected')),
    clock: new FakeClock(),
  };
  return { ctx, deps, calls, status, enqueued, repaired, reports, gone, stores, routerSubnets };
}

test('a pass lists each kind once, deletes the open rule first, then creates the missing one, and counts both', async () => {
  const w = world();
  const pass = await resync(w.ctx, new ResyncMemory(), w.deps);
  assert.deepEqual(w.calls.slice(0, 9).sort(), [
    'list floating-ips',
    'list listeners',
    'list load-balancers',
    'list networks',
    'list pools',
    'list ports',
    'list router ports',
    'list security-groups',
    'list subnets',
  ]);
  assert.deepEqual(w.calls.slice(9), ['delete rule open', 'create rule in sg-ns from 10.96.0.0/16']);
  assert.deepEqual(w.repaired, ['security-group-rule', 'security-group-rule']);
  assert.deepEqual(pass.repaired, { 'security-group-rule': 2 });
  assert.equal(pass.listCalls, 9);
  assert.deepEqual(w.enqueued, []);
});

test('an open rule is deleted even while its policy is being reconciled; a missing rule is left to a reconcile in flight', async () => {
  const w = world();
  w.status.started('NetworkPolicy', 'a/deny');
  w.status.started('Namespace', 'a');
  await resync(w.ctx, new ResyncMemory(), w.deps);
  assert.deepEqual(w.calls.slice(9), ['delete rule open']);
  assert.deepEqual(w.repaired, ['security-group-rule']);
});

test('a rule someone else deleted first is not counted as a repair', async () => {
  const w = world();
  w.gone.add('open');
  await resync(w.ctx, new ResyncMemory(), w.deps);
  assert.ok(w.calls.includes('delete rule open'));
  // Only the create is counted (the delete found the rule gone).
  assert.deepEqual(w.repaired, ['security-group-rule']);
  assert.ok(w.calls.some((c) => c.startsWith('create rule in sg-ns')));
});

test("a missing rule left to a reconcile in flight is reported by that reconcile, once, as the pass would have; a namespace's first reconcile reports nothing", async () => {
  const reconcile = async (w: ReturnType<typeof world>): Promise<void> => {
    const ctx = { ...w.ctx, portPools: { sync: () => Promise.resolve() } } as unknown as TranslatorContext;
    w.status.started('Namespace', 'a');
    await reconcileNamespace('a', ctx);
    w.status.finished('Namespace', 'a');
  };
  const w = world();
  w.status.started('Namespace', 'a');
  await resync(w.ctx, new ResyncMemory(), w.deps);
  w.status.finished('Namespace', 'a');
  assert.deepEqual(w.repaired, ['security-group-rule'], 'the pass: the open rule only');
  await reconcile(w);
  assert.ok(w.calls.includes('create rule in sg-ns from 10.96.0.0/16'));
  assert.deepEqual(
    w.repaired,
    ['security-group-rule', 'security-group-rule'],
    'the reconcile: the missing rule',
  );
  assert.match(
    w.reports.at(-1) ?? '',
    /^Namespace\/a: rule ingress IPv4 any protocol from 10\.96\.0\.0\/16 on .* is missing: created$/,
  );

  // Never reconciled before (not managed): the same rules made are its own work, not drift.
  const first = world();
  first.status.forget('Namespace', 'a');
  await reconcile(first);
  assert.ok(first.calls.includes('create rule in sg-ns from 10.96.0.0/16'));
  assert.deepEqual(first.repaired, []);
});

test('an object pending, or never reconciled yet, is left to its own reconcile', async () => {
  const w = world();
  w.status.pending('Namespace', 'a', 'waiting');
  w.stores.namespaces.add(obj('b', 'nsb-uid'));
  await resync(w.ctx, new ResyncMemory(), w.deps);
  // Namespace b has no network, subnet or group yet, and was never reconciled: nothing is repaired for it.
  assert.deepEqual(w.enqueued, []);
  assert.deepEqual(w.repaired, ['security-group-rule']);
});

test('a drift handed to a reconcile that has not started by the next pass is not logged or counted again', async () => {
  const w = world();
  // The namespace's subnet taken off the router behind Raven's back.
  w.routerSubnets.splice(1, 1);
  const memory = new ResyncMemory();
  const first = await resync(w.ctx, memory, w.deps);
  assert.equal(first.repaired['router-interface'], 1);
  assert.deepEqual(w.enqueued, ['Namespace/a']);
  // The queue is long: its reconcile has not started when the next pass finds the same drift.
  const second = await resync(w.ctx, memory, w.deps);
  assert.equal(second.repaired['router-interface'], undefined);
  assert.deepEqual(w.enqueued, ['Namespace/a']);
  // Its reconcile ran and the subnet is still off the router (taken off again): a new repair.
  w.status.started('Namespace', 'a');
  w.status.finished('Namespace', 'a');
  const third = await resync(w.ctx, memory, w.deps);
  assert.equal(third.repaired['router-interface'], 1);
  assert.deepEqual(w.enqueued, ['Namespace/a', 'Namespace/a']);
  assert.equal(w.repaired.filter((k) => k === 'router-interface').length, 2);
});
