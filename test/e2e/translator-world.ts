/**
 * What the translator's end-to-end tests share: the Raven config, a listing of everything in
 * OpenStack carrying a cluster's identity, and `problems()`, which compares it with what the
 * cluster (read from the real apiserver) implies — every network, subnet, group and its rules,
 * port and its groups (NetworkPolicies included), load balancer, listener, member and floating IP,
 * and nothing for objects that are gone.
 */
import type { TestContext } from 'node:test';
import { createOpenStackClient, type OpenStackClient } from '../../src/openstack/openstack-client.js';
import type { SecurityGroupRule } from '../../src/openstack/neutron-types.js';
import { parseDescription } from '../../src/translator/identity.js';
import { PORT_ANNOTATION } from '../../src/translator/pod-translator.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { freshProject, sharedLab } from '../harness/openstack/test-lab.js';
import { ok, until, type RavenProcess } from './daemon-process.js';

export interface Meta {
  name: string;
  namespace?: string;
  uid: string;
  labels?: Record<string, string>;
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
}
export interface K8sList<T> {
  items: T[];
}
export interface PodObj {
  metadata: Meta;
}
/** A NetworkPolicy as the test reads it (its selectors are matchLabels only). */
export interface PolicyObj {
  metadata: Meta;
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes?: string[];
    egress?: unknown[];
  };
}
interface SvcObj {
  metadata: Meta;
  spec: {
    clusterIP?: string;
    clusterIPs?: string[];
    type?: string;
    ports?: { port: number; protocol?: string }[];
    externalIPs?: string[];
  };
}
interface SliceObj {
  metadata: Meta & { labels?: Record<string, string> };
  addressType: string;
  endpoints?: { addresses: string[]; targetRef?: { kind: string; name: string } }[];
}

export const SERVICE_CIDR = '10.96.0.0/16';

/** What the translator is configured with, as far as `problems()` needs it: families and pools. */
export interface Expected {
  /** The service CIDRs, primary first (default: SERVICE_CIDR alone). */
  serviceCidrs?: string[];
  /** The pod CIDRs' families, primary first (default: IPv4 alone). */
  families?: (4 | 6)[];
  /** Free ports each namespace's pool must hold (absent: no pool port may exist). */
  pool?: { size: number; refillBelow: number };
}

export function config(options: {
  clusterId: string;
  project: string;
  neutron: string;
  octavia: string;
  external?: string;
  /** Default 5 s. */
  gcSeconds?: number;
  /** Default SERVICE_CIDR and 10.244.0.0/16. */
  serviceCidr?: string;
  podCidr?: string;
  /** A `portPool:` setting, e.g. `{ size: 3, refillBelow: 2 }`. */
  portPool?: string;
  /** The drift check's period; absent: the default. */
  resyncSeconds?: number;
}): string {
  return `logLevel: debug
server: { port: 0 }
translators:
  - name: openstack
    type: openstack
    clusterId: ${options.clusterId}
    openstack:
      auth: { type: noauth, projectId: ${options.project} }
      endpoints: { network: "${options.neutron}", loadBalancer: "${options.octavia}" }
      timeoutMs: 20000
    serviceCidr: "${options.serviceCidr ?? SERVICE_CIDR}"
    podCidr: "${options.podCidr ?? '10.244.0.0/16'}"
${options.external === undefined ? '' : `    externalNetworkId: ${options.external}\n`}${options.portPool === undefined ? '' : `    portPool: ${options.portPool}\n`}    gcIntervalSeconds: ${options.gcSeconds ?? 5}
${options.resyncSeconds === undefined ? '' : `    resyncSeconds: ${options.resyncSeconds}\n`}    loadBalancerTimeoutSeconds: 120
`;
}

/** A rule as the test reads it (what it allows, written out). */
export function ruleText(r: SecurityGroupRule): string {
  const ports =
    r.protocol === null || r.protocol === undefined
      ? ''
      : ` ${r.protocol}${r.port_range_min === null || r.port_range_min === undefined ? '' : `:${r.port_range_min}-${r.port_range_max ?? ''}`}`;
  const from =
    r.remote_group_id !== null && r.remote_group_id !== undefined
      ? ` from group ${r.remote_group_id}`
      : r.remote_ip_prefix !== null && r.remote_ip_prefix !== undefined
        ? ` from ${r.remote_ip_prefix}`
        : ' any';
  return `${r.direction} ${r.ethertype}${ports}${from}`;
}

/** Everything in OpenStack that belongs to `cluster`, by its description. */
export async function owned(os: OpenStackClient, cluster: string) {
  const mine = <T extends { description?: string }>(list: T[]) =>
    list
      .map((r) => ({ r, d: parseDescription(cluster, r.description) }))
      .filter((x): x is { r: T; d: NonNullable<ReturnType<typeof parseDescription>> } => x.d !== undefined);
  const [ports, networks, subnets, groups, fips, lbs] = await Promise.all([
    os.neutron.ports.list(),
    os.neutron.networks.list(),
    os.neutron.subnets.list(),
    os.neutron.securityGroups.list(),
    os.neutron.floatingIps.list(),
    os.octavia.loadBalancers.list(),
  ]);
  const listeners = await os.octavia.listeners.list();
  return {
    ports: mine(ports),
    networks: mine(networks),
    subnets: mine(subnets),
    groups: mine(groups),
    fips: mine(fips),
    lbs: mine(lbs),
    listeners: mine(listeners),
  };
}

/** What is wrong with OpenStack, compared with what the cluster implies ([] when it matches). */
export async function problems(
  os: OpenStackClient,
  cluster: string,
  plane: ControlPlane,
  expected: Expected = {},
): Promise<string[]> {
  const families = expected.families ?? [4];
  const serviceCidrs = expected.serviceCidrs ?? [SERVICE_CIDR];
  const subnetRole = (family: 4 | 6): string => (family === 4 ? 'ns-subnet' : 'ns-subnet-v6');
  const ipFamily = (ip: string): 4 | 6 => (ip.includes(':') ? 6 : 4);
  const get = async <T>(path: string): Promise<T> => ok<T>(plane.adminRequest('GET', path));
  const namespaces = (await get<K8sList<PodObj>>('/api/v1/namespaces')).items.filter(
    (n) => n.metadata.deletionTimestamp === undefined,
  );
  const pods = (await get<K8sList<PodObj>>('/api/v1/pods')).items.filter(
    (p) => p.metadata.deletionTimestamp === undefined,
  );
  const services = (await get<K8sList<SvcObj>>('/api/v1/services')).items;
  const slices = (await get<K8sList<SliceObj>>('/apis/discovery.k8s.io/v1/endpointslices')).items;
  const policies = (await get<K8sList<PolicyObj>>('/apis/networking.k8s.io/v1/networkpolicies')).items.filter(
    (p) => p.metadata.deletionTimestamp === undefined,
  );
  const state = await owned(os, cluster);
  const out: string[] = [];
  const count = <T>(
    list: { r: T; d: { role: string; uid: string } }[],
    role: string,
    uid: string,
  ): { r: T; d: { role: string; uid: string } }[] => list.filter((x) => x.d.role === role && x.d.uid === uid);
  const expectOne = (what: string, found: unknown[]): void => {
    if (found.length !== 1) out.push(`${what}: ${found.length} found, expected exactly 1`);
  };
  const egressGroups = state.groups.filter((g) => g.d.role === 'egress-sg');
  expectOne('egress group of the cluster', egressGroups);
  const egressGroup = egressGroups[0]?.r;
  if (egressGroup !== undefined) {
    const rules = (egressGroup.security_group_rules ?? []).map(ruleText).sort();
    if (JSON.stringify(rules) !== JSON.stringify(['egress IPv4 any', 'egress IPv6 any']))
      out.push(`rules of the egress group: ${rules.join('; ')}`);
  }
  const policyGroup = new Map<string, string>();
  for (const policy of policies) {
    const groups = count(state.groups, 'np-sg', policy.metadata.uid);
    expectOne(`security group of policy ${policy.metadata.namespace ?? ''}/${policy.metadata.name}`, groups);
    if (groups[0] !== undefined) policyGroup.set(policy.metadata.uid, groups[0].r.id);
  }
  const groupOf = new Map<string, string>();
  const networkOf = new Map<string, string>();
  for (const ns of namespaces) {
    const networks = count(state.networks, 'ns-net', ns.metadata.uid);
    expectOne(`network of namespace ${ns.metadata.name}`, networks);
    if (networks[0] !== undefined) networkOf.set(ns.metadata.name, networks[0].r.id);
    const subnetCidrs: string[] = [];
    for (const family of families) {
      const subnets = count(state.subnets, subnetRole(family), ns.metadata.uid);
      expectOne(`IPv${family} subnet of namespace ${ns.metadata.name}`, subnets);
      const subnet = subnets[0]?.r;
      subnetCidrs.push(subnet?.cidr ?? `(its IPv${family} subnet)`);
      if (subnet !== undefined && subnet.ip_version !== family)
        out.push(`IPv${family} subnet of namespace ${ns.metadata.name} is IPv${subnet.ip_version}`);
    }
    for (const other of [4, 6] as const)
      if (!families.includes(other) && count(state.subnets, subnetRole(other), ns.metadata.uid).length > 0)
        out.push(`namespace ${ns.metadata.name} has an IPv${other} subnet`);
    const groups = count(state.groups, 'ns-sg', ns.metadata.uid);
    expectOne(`security group of namespace ${ns.metadata.name}`, groups);
    const group = groups[0]?.r;
    if (group !== undefined) groupOf.set(ns.metadata.name, group.id);
    if (group !== undefined) {
      const rules = (group.security_group_rules ?? []).map(ruleText).sort();
      const want = [...subnetCidrs, ...serviceCidrs]
        .map((cidr) => `ingress IPv${ipFamily(cidr)} from ${cidr}`)
        .sort();
      if (JSON.stringify(rules) !== JSON.stringify(want))
        out.push(
          `rules of namespace ${ns.metadata.name}'s group: ${rules.join('; ')} instead of ${want.join('; ')}`,
        );
    }
  }
  // Each namespace's subnets on the cluster's router (the last step of its reconcile, after its
  // group's rules: converged means this too).
  const routers = (await os.neutron.routers.list()).filter(
    (r) => parseDescription(cluster, r.description)?.role === 'router',
  );
  expectOne('router of the cluster', routers);
  const router = routers[0];
  if (router !== undefined) {
    const onRouter = new Set(
      (await os.neutron.ports.list({ device_id: router.id })).flatMap((p) =>
        p.fixed_ips.map((f) => f.subnet_id),
      ),
    );
    for (const ns of namespaces)
      for (const family of families)
        for (const { r: subnet } of count(state.subnets, subnetRole(family), ns.metadata.uid))
          if (!onRouter.has(subnet.id))
            out.push(
              `IPv${family} subnet ${subnet.cidr} of namespace ${ns.metadata.name} is not on the router`,
            );
  }
  // Each namespace's pool: between refillBelow and size free ports, inert, on its network.
  for (const ns of namespaces) {
    const pool = count(state.ports, 'pool-port', ns.metadata.uid).map((x) => x.r);
    const name = ns.metadata.name;
    if (expected.pool === undefined) {
      if (pool.length > 0) out.push(`namespace ${name} has ${pool.length} pool ports, and pools are off`);
      continue;
    }
    if (pool.length < expected.pool.refillBelow || pool.length > expected.pool.size)
      out.push(
        `namespace ${name} has ${pool.length} free pool ports, not ${expected.pool.refillBelow} to ${expected.pool.size}`,
      );
    for (const port of pool) {
      if (port.device_owner !== 'raven:pool' || (port.security_groups ?? []).length > 0 || port.device_id)
        out.push(
          `pool port ${port.id} of ${name} is not inert (${port.device_owner ?? '?'}, groups ${(port.security_groups ?? []).join(',')})`,
        );
      if (port.network_id !== networkOf.get(name))
        out.push(`pool port ${port.id} of ${name} is on another network`);
      if (JSON.stringify(port.fixed_ips.map((f) => ipFamily(f.ip_address))) !== JSON.stringify(families))
        out.push(
          `pool port ${port.id} of ${name} has addresses ${port.fixed_ips.map((f) => f.ip_address).join(',')}`,
        );
    }
  }
  /** Each pod's port address per family, by `namespace/name`. */
  const podIps = new Map<string, Map<4 | 6, string>>();
  for (const pod of pods) {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
    const ports = count(state.ports, 'pod-port', pod.metadata.uid);
    expectOne(`port of pod ${key}`, ports);
    const port = ports[0]?.r;
    if (port === undefined) continue;
    if (port.device_id !== pod.metadata.uid || port.device_owner !== 'raven:pod')
      out.push(`port of pod ${key} does not identify the pod`);
    // Its namespace's group and the egress group, or in their place the groups of the policies
    // selecting it for each direction they isolate.
    const selecting = policies.filter((p) => selects(p, pod));
    const wantGroups = selecting.map(
      (p) => policyGroup.get(p.metadata.uid) ?? `(group of ${p.metadata.name})`,
    );
    if (!selecting.some((p) => isolated(p).ingress))
      wantGroups.push(groupOf.get(pod.metadata.namespace ?? '') ?? '(namespace group)');
    if (!selecting.some((p) => isolated(p).egress)) wantGroups.push(egressGroup?.id ?? '(egress group)');
    const groupsNow = [...(port.security_groups ?? [])].sort();
    if (JSON.stringify(groupsNow) !== JSON.stringify(wantGroups.sort()))
      out.push(`port of pod ${key} is in groups ${groupsNow.join(',')}, not ${wantGroups.join(',')}`);
    if (port.network_id !== networkOf.get(pod.metadata.namespace ?? ''))
      out.push(`port of pod ${key} is not on its namespace's network`);
    const byFamily = new Map(port.fixed_ips.map((f) => [ipFamily(f.ip_address), f.ip_address] as const));
    if (
      JSON.stringify(port.fixed_ips.map((f) => ipFamily(f.ip_address)).sort()) !==
      JSON.stringify([...families].sort())
    )
      out.push(`port of pod ${key} has addresses ${port.fixed_ips.map((f) => f.ip_address).join(',')}`);
    podIps.set(key, byFamily);
    const recorded = pod.metadata.annotations?.[PORT_ANNOTATION];
    let ips: string[] = [];
    try {
      ips = recorded === undefined ? [] : ((JSON.parse(recorded) as { ips?: string[] }).ips ?? []);
    } catch {
      // Not JSON: reported below.
    }
    const wantIps = families.map((f) => byFamily.get(f) ?? `(IPv${f} address)`);
    if (
      recorded === undefined ||
      !recorded.includes(port.id) ||
      JSON.stringify(ips) !== JSON.stringify(wantIps)
    )
      out.push(`pod ${key} does not record its port (${recorded ?? 'no annotation'})`);
  }
  for (const svc of services) {
    const key = `${svc.metadata.namespace ?? ''}/${svc.metadata.name}`;
    const uid = svc.metadata.uid;
    // A load balancer per clusterIP (dual stack: one per family), each on a VIP port holding it.
    const clusterIPs = svc.spec.clusterIPs ?? (svc.spec.clusterIP === undefined ? [] : [svc.spec.clusterIP]);
    const vips = count(state.ports, 'vip-port', uid);
    const lbs = count(state.lbs, 'lb', uid);
    if (vips.length !== clusterIPs.length || lbs.length !== clusterIPs.length)
      out.push(
        `service ${key}: ${vips.length} VIP ports and ${lbs.length} load balancers for ${clusterIPs.length} clusterIPs`,
      );
    const vipOf = new Map<string, string>();
    for (const clusterIP of clusterIPs) {
      const vip = vips.find((v) => v.r.fixed_ips.some((f) => f.ip_address === clusterIP))?.r;
      if (vip === undefined) {
        out.push(`no VIP port of ${key} holds ${clusterIP}`);
        continue;
      }
      vipOf.set(clusterIP, vip.id);
      const lb = lbs.find((x) => x.r.vip_address === clusterIP)?.r;
      if (lb === undefined || lb.vip_port_id !== vip.id) {
        out.push(`no load balancer of ${key} is on its VIP port for ${clusterIP}`);
        continue;
      }
      if (lb.provisioning_status !== 'ACTIVE')
        out.push(`load balancer of ${key} (${clusterIP}) is ${lb.provisioning_status ?? '?'}`);
      const under = count(state.listeners, 'listener', uid).filter(
        (l) => l.r.loadbalancers?.some((x) => x.id === lb.id) === true,
      );
      const listeners = under.map((x) => `${x.r.protocol}:${x.r.protocol_port}`).sort();
      const wantListeners = (svc.spec.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}:${p.port}`).sort();
      if (JSON.stringify(listeners) !== JSON.stringify(wantListeners))
        out.push(
          `listeners of ${key} (${clusterIP}): ${listeners.join(',')} instead of ${wantListeners.join(',')}`,
        );
      // Members of the VIP's family: the slices of that address type, each pod's address of it.
      const family = ipFamily(clusterIP);
      const wantMembers = slices
        .filter(
          (s) =>
            s.metadata.namespace === svc.metadata.namespace &&
            s.metadata.labels?.['kubernetes.io/service-name'] === svc.metadata.name &&
            s.addressType === `IPv${family}`,
        )
        .flatMap((s) => s.endpoints ?? [])
        // An endpoint naming a pod that is gone is no member (not even with the endpoint's address).
        .flatMap(
          (e) => podIps.get(`${svc.metadata.namespace ?? ''}/${e.targetRef?.name ?? ''}`)?.get(family) ?? [],
        );
      const wantMembersUnique = [...new Set(wantMembers)].sort();
      for (const l of under) {
        const poolId = l.r.default_pool_id;
        const members =
          poolId === undefined || poolId === null
            ? []
            : (await os.octavia.members(poolId).list()).map((m) => m.address).sort();
        if (JSON.stringify(members) !== JSON.stringify(wantMembersUnique))
          out.push(
            `members of ${key} ${clusterIP} ${l.r.protocol_port}: ${members.join(',')} instead of ${wantMembersUnique.join(',')}`,
          );
      }
    }
    const vip = vipOf.get(clusterIPs.find((ip) => ipFamily(ip) === 4) ?? '');
    const fips = count(state.fips, 'fip', uid);
    const wantFip = (svc.spec.externalIPs?.length ?? 0) > 0;
    if (wantFip) {
      expectOne(`floating IP of ${key}`, fips);
      const fip = fips[0]?.r;
      if (fip !== undefined && (fip.floating_ip_address !== svc.spec.externalIPs?.[0] || fip.port_id !== vip))
        out.push(`floating IP of ${key} is ${fip.floating_ip_address} on ${fip.port_id ?? 'nothing'}`);
    } else if (fips.length > 0) out.push(`floating IP of ${key} should not exist`);
  }
  // Nothing for objects that are gone.
  const alive = new Set([
    'cluster',
    ...namespaces.map((n) => n.metadata.uid),
    ...pods.map((p) => p.metadata.uid),
    ...services.map((s) => s.metadata.uid),
    ...policies.map((p) => p.metadata.uid),
  ]);
  for (const [what, list] of Object.entries(state)) {
    for (const { d } of list as { d: { uid: string; key: string; role: string; kind: string } }[]) {
      if (d.kind !== 'Cluster' && !alive.has(d.uid))
        out.push(`leaked ${what} ${d.role} of ${d.kind} ${d.key}`);
    }
  }
  return out;
}

export async function converge(
  os: OpenStackClient,
  cluster: string,
  plane: ControlPlane,
  raven: RavenProcess,
  what: string,
  expected: Expected = {},
): Promise<void> {
  let last: string[] = [];
  await until(
    what,
    async () => {
      last = await problems(os, cluster, plane, expected);
      return last.length === 0;
    },
    {
      // A safety net only: on a loaded 2-core machine Neutron on SQLite answers in seconds, but
      // with two whole test runs at once (load 12 to 16) its calls took up to 13 s and an initial
      // convergence was still going after 10 minutes.
      timeoutMs: 1_500_000,
      show: () =>
        `${last.join('\n')}\n--- raven log tail:\n${raven.stderr().split('\n').slice(-30).join('\n')}`,
    },
  );
}

export async function labSetup(t: TestContext) {
  const lab = await sharedLab();
  const project = freshProject();
  const os = createOpenStackClient({
    auth: { type: 'noauth', projectId: project },
    endpoints: { network: lab.neutronUrl, loadBalancer: lab.octaviaUrl },
  });
  t.after(() => os.close());
  return { lab, project, os };
}

/** An external network for floating IPs (172.24.4.0/24), as an operator would have; its id. */
export async function externalNetwork(os: OpenStackClient, clusterId: string): Promise<string> {
  const external = await os.neutron.networks.create({
    name: `${clusterId}-public`,
    'router:external': true,
  });
  await os.neutron.subnets.create({
    network_id: external.id,
    ip_version: 4,
    cidr: '172.24.4.0/24',
    enable_dhcp: false,
  });
  return external.id;
}

/** A pod that never runs (no kubelet): labels, and container ports for named ports. */
export const pod = (
  name: string,
  labels: Record<string, string> = { app: 'web' },
  ports: { name: string; containerPort: number }[] = [],
) => ({
  metadata: { name, labels },
  spec: {
    containers: [{ name: 'c', image: 'registry.invalid/none:1', ...(ports.length > 0 ? { ports } : {}) }],
  },
});

/** Whether a policy (matchLabels only) selects a pod. */
export function selects(policy: PolicyObj, pod: PodObj): boolean {
  if (policy.metadata.namespace !== pod.metadata.namespace) return false;
  return Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(
    ([k, v]) => pod.metadata.labels?.[k] === v,
  );
}

/** The directions a policy isolates. */
export function isolated(policy: PolicyObj): { ingress: boolean; egress: boolean } {
  const types = policy.spec.policyTypes ?? [
    'Ingress',
    ...(policy.spec.egress === undefined ? [] : ['Egress']),
  ];
  return { ingress: types.includes('Ingress'), egress: types.includes('Egress') };
}
