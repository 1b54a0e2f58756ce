import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/client/kube-object.js';
import {
  isolates,
  policyRules,
  selectsPod,
  type PodWithPorts,
  type PolicyShape,
  type PolicyView,
} from '../../../src/translator/policy-rules.js';
import { PORT_ANNOTATION } from '../../../src/translator/port-annotation.js';
import { ruleKey, type RuleSpec } from '../../../src/translator/security-group-rules.js';

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, uid: name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
});

function pod(
  namespace: string,
  name: string,
  ip: string | undefined,
  labels: Record<string, string>,
  ports: { name: string; containerPort: number; protocol?: string }[] = [],
): PodWithPorts {
  return {
    metadata: {
      name,
      namespace,
      uid: name,
      labels,
      ...(ip === undefined
        ? {}
        : { annotations: { [PORT_ANNOTATION]: JSON.stringify({ id: 'p', ips: [ip], subnetId: 's' }) } }),
    },
    spec: { containers: [{ ports }] },
  };
}

const namespaces = [ns('shop', { team: 'a' }), ns('tools', { team: 'b' }), ns('kube-system'), ns('new')];
const pods = [
  pod('shop', 'web', '10.244.0.5', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]),
  pod('shop', 'web2', '10.244.0.6', { app: 'web' }, [{ name: 'http', containerPort: 8081 }]),
  pod('shop', 'client', '10.244.0.7', { role: 'client' }),
  pod('shop', 'starting', undefined, { role: 'client' }),
  pod('tools', 'probe', '10.244.1.9', { role: 'client' }, [{ name: 'metrics', containerPort: 9100 }]),
];
const view: PolicyView = {
  namespaces: () => namespaces,
  podsIn: (n) => pods.filter((p) => p.metadata?.namespace === n),
  subnetCidrs: (n) =>
    ({ shop: ['10.244.0.0/24'], tools: ['10.244.1.0/24'], 'kube-system': ['10.244.2.0/24'] })[n],
  podCidrs: ['10.244.0.0/16'],
};

const policy = (spec: PolicyShape['spec']): PolicyShape => ({
  metadata: { name: 'p', namespace: 'shop', uid: 'u' },
  ...(spec === undefined ? {} : { spec }),
});

const keys = (rules: RuleSpec[]): string[] => rules.map(ruleKey).sort();
const rule = (r: RuleSpec): string => ruleKey(r);

test('deny-all selects every pod of its namespace and has no rules', () => {
  const denyAll = policy({ podSelector: {}, policyTypes: ['Ingress'] });
  assert.deepEqual(policyRules(denyAll, view), { rules: [], waitingFor: [] });
  assert.equal(selectsPod(denyAll, pods[0] ?? {}), true);
  assert.equal(selectsPod(denyAll, pods[4] ?? {}), false, 'not a pod of another namespace');
  assert.deepEqual(isolates(denyAll), { ingress: true, egress: false });
});

test('policyTypes default to Ingress, plus Egress when the policy has egress rules', () => {
  assert.deepEqual(isolates(policy({ podSelector: {} })), { ingress: true, egress: false });
  assert.deepEqual(isolates(policy({ podSelector: {}, egress: [] })), { ingress: true, egress: true });
  assert.deepEqual(isolates(policy({ podSelector: {}, policyTypes: ['Egress'] })), {
    ingress: false,
    egress: true,
  });
});

test('a namespace selector becomes the subnets of the matching namespaces', () => {
  const p = policy({
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'b' } } }] }],
  });
  assert.deepEqual(keys(policyRules(p, view).rules), [
    rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.244.1.0/24' }),
  ]);
  const all = policy({ podSelector: {}, ingress: [{ from: [{ namespaceSelector: {} }] }] });
  assert.deepEqual(keys(policyRules(all, view).rules), [
    rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.244.0.0/16' }),
  ]);
});

test('a namespace whose subnet is not known yet is reported, its rules left out', () => {
  const p = policy({
    podSelector: {},
    ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'new' } } }] }],
  });
  assert.deepEqual(policyRules(p, view), { rules: [], waitingFor: ['new'] });
});

test('a pod selector becomes the addresses of the matching pods with a port; named ports resolve on the selected pods', () => {
  const p = policy({
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [
      {
        from: [{ podSelector: { matchLabels: { role: 'client' } } }],
        ports: [{ port: 80 }, { port: 'http' }, { protocol: 'UDP', port: 5000, endPort: 5010 }],
      },
    ],
  });
  const from = {
    direction: 'ingress' as const,
    ethertype: 'IPv4' as const,
    remote_ip_prefix: '10.244.0.7/32',
  };
  assert.deepEqual(
    keys(policyRules(p, view).rules),
    [
      rule({ ...from, protocol: 'tcp', port_range_min: 80, port_range_max: 80 }),
      rule({ ...from, protocol: 'tcp', port_range_min: 8080, port_range_max: 8080 }),
      rule({ ...from, protocol: 'tcp', port_range_min: 8081, port_range_max: 8081 }),
      rule({ ...from, protocol: 'udp', port_range_min: 5000, port_range_max: 5010 }),
    ].sort(),
  );
  const both = policy({
    podSelector: {},
    ingress: [
      {
        from: [
          {
            namespaceSelector: { matchLabels: { team: 'b' } },
            podSelector: { matchLabels: { role: 'client' } },
          },
        ],
      },
    ],
  });
  assert.deepEqual(keys(policyRules(both, view).rules), [
    rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.244.1.9/32' }),
  ]);
});

test('an ipBlock with except, and no peers at all (anywhere, both families)', () => {
  const p = policy({
    podSelector: {},
    ingress: [
      { from: [{ ipBlock: { cidr: '172.17.0.0/22', except: ['172.17.1.0/24'] } }] },
      { ports: [{ port: 443 }] },
    ],
  });
  assert.deepEqual(
    keys(policyRules(p, view).rules),
    [
      rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '172.17.0.0/24' }),
      rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '172.17.2.0/23' }),
      rule({
        direction: 'ingress',
        ethertype: 'IPv4',
        protocol: 'tcp',
        port_range_min: 443,
        port_range_max: 443,
      }),
      rule({
        direction: 'ingress',
        ethertype: 'IPv6',
        protocol: 'tcp',
        port_range_min: 443,
        port_range_max: 443,
      }),
    ].sort(),
  );
});

test('egress to DNS, and a named egress port resolved on each peer pod', () => {
  const dns = policy({
    podSelector: {},
    policyTypes: ['Egress'],
    egress: [
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
      {
        to: [{ namespaceSelector: {}, podSelector: { matchLabels: { role: 'client' } } }],
        ports: [{ port: 'metrics' }],
      },
    ],
  });
  const to = { direction: 'egress' as const, ethertype: 'IPv4' as const };
  assert.deepEqual(
    keys(policyRules(dns, view).rules),
    [
      rule({
        ...to,
        remote_ip_prefix: '10.244.2.0/24',
        protocol: 'udp',
        port_range_min: 53,
        port_range_max: 53,
      }),
      rule({
        ...to,
        remote_ip_prefix: '10.244.2.0/24',
        protocol: 'tcp',
        port_range_min: 53,
        port_range_max: 53,
      }),
      rule({
        ...to,
        remote_ip_prefix: '10.244.1.9/32',
        protocol: 'tcp',
        port_range_min: 9100,
        port_range_max: 9100,
      }),
    ].sort(),
  );
  // Ingress rules of an Egress-only policy are not its business.
  const onlyEgress = policy({ podSelector: {}, policyTypes: ['Egress'], ingress: [{}] });
  assert.deepEqual(policyRules(onlyEgress, view).rules, []);
});

test('dual stack: every peer becomes a rule per family (subnets, pod CIDRs, each pod address)', () => {
  const dual = (name: string, v4: string, v6: string, labels: Record<string, string>): PodWithPorts => ({
    metadata: {
      name,
      namespace: 'shop',
      uid: name,
      labels,
      annotations: {
        [PORT_ANNOTATION]: JSON.stringify({
          id: 'p',
          ips: [v4, v6],
          subnetId: 's4',
          subnetIds: ['s4', 's6'],
        }),
      },
    },
  });
  const dualPods = [
    dual('web', '10.244.0.5', 'fd00:10:244::5', { app: 'web' }),
    dual('db', '10.244.0.9', 'fd00:10:244::9', { app: 'db' }),
  ];
  const dualView: PolicyView = {
    namespaces: () => namespaces,
    podsIn: (n) => dualPods.filter((p) => p.metadata?.namespace === n),
    subnetCidrs: (n) => (n === 'tools' ? ['10.244.1.0/24', 'fd00:10:244:1::/64'] : undefined),
    podCidrs: ['10.244.0.0/16', 'fd00:10:244::/56'],
  };
  const { rules, waitingFor } = policyRules(
    policy({
      podSelector: { matchLabels: { app: 'db' } },
      ingress: [
        { from: [{ podSelector: { matchLabels: { app: 'web' } } }] },
        { from: [{ namespaceSelector: { matchLabels: { team: 'b' } } }] },
        { from: [{ namespaceSelector: {} }], ports: [{ port: 9100 }] },
      ],
    }),
    dualView,
  );
  assert.deepEqual(waitingFor, []);
  assert.deepEqual(
    keys(rules),
    [
      rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.244.0.5/32' }),
      rule({ direction: 'ingress', ethertype: 'IPv6', remote_ip_prefix: 'fd00:10:244::5/128' }),
      rule({ direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: '10.244.1.0/24' }),
      rule({ direction: 'ingress', ethertype: 'IPv6', remote_ip_prefix: 'fd00:10:244:1::/64' }),
      rule({
        direction: 'ingress',
        ethertype: 'IPv4',
        protocol: 'tcp',
        port_range_min: 9100,
        port_range_max: 9100,
        remote_ip_prefix: '10.244.0.0/16',
      }),
      rule({
        direction: 'ingress',
        ethertype: 'IPv6',
        protocol: 'tcp',
        port_range_min: 9100,
        port_range_max: 9100,
        remote_ip_prefix: 'fd00:10:244::/56',
      }),
    ].sort(),
  );
});
