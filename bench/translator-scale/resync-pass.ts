/**
 * What one drift-check pass (`src/translator/resync.ts`) costs at a given scale, against the real
 * lab: OpenStack calls by kind (counted by a proxy in front of Neutron and Octavia) and duration.
 *
 *   npx tsx bench/translator-scale/resync-pass.ts --namespaces 20 --pods 500 --services 50 \
 *     --policies 50 --passes 5 --out bench/results/translator-resync.md
 *
 * The OpenStack state is made directly, in bulk, exactly as the translator would have made it for
 * the cluster the caches are filled with — the same identities (names, descriptions, tags), the
 * rules computed by the translator's own functions (`namespaceRules`, `policyRules`), the
 * members by `desiredMembers`, the pods' port annotations by `portAnnotation` — because making
 * it through Raven costs thousands of calls that on a loaded 2-core machine take the better part
 * of an hour (`scale.ts` measures that part). The pass then runs in this process, unchanged, on an
 * OpenStack client pointed at the proxies; a pass that finds anything to repair on this state
 * would be a false alarm, so its repairs are reported. Cluster: namespace i of `--namespaces`,
 * pod j in namespace j mod namespaces labelled `svc: s<j mod services>`, Service s in namespace
 * s mod namespaces with the pods of that label as endpoints (one TCP port 80 → 8080), policy k in
 * namespace k mod namespaces selecting the pods of Service k mod services and admitting, on TCP
 * 8080 and 9090, those of Service (k + namespaces) mod services. Last, a rule opening TCP 22 to
 * 0.0.0.0/0 is added to a policy's group and a pass is timed from its start to the rule's deletion.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MemoryStore } from '../../src/cache/memory-store.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { createOpenStackClient, type OpenStackClient } from '../../src/openstack/openstack-client.js';
import type { Port, SecurityGroup } from '../../src/openstack/neutron-types.js';
import type { TranslatorContext } from '../../src/translator/context.js';
import type { Infrastructure } from '../../src/translator/infrastructure.js';
import { identityOf, type Owner, type Role } from '../../src/translator/identity.js';
import { namespaceRules } from '../../src/translator/namespace-translator.js';
import { policyRules, type PolicyShape } from '../../src/translator/policy-rules.js';
import { podGroupPlan, viewOf } from '../../src/translator/policy-translator.js';
import { portAnnotation, PORT_ANNOTATION } from '../../src/translator/port-annotation.js';
import { resync, ResyncMemory } from '../../src/translator/resync.js';
import { desiredMembers, type ServiceShape } from '../../src/translator/service-translator.js';
import { defaultSettings } from '../../src/translator/settings.js';
import { TranslationStatus } from '../../src/translator/translation-status.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { HttpInterceptor } from '../../test/harness/http-interceptor.js';
import { freshProject, sharedLab } from '../../test/harness/openstack/test-lab.js';
import { machineLine } from '../lib/report.js';

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '20' },
    pods: { type: 'string', default: '500' },
    services: { type: 'string', default: '50' },
    policies: { type: 'string', default: '50' },
    passes: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
});
const NS = Number(values.namespaces);
const PODS = Number(values.pods);
const SVCS = Number(values.services);
const POLICIES = Number(values.policies);
const PASSES = Number(values.passes);
const C = `rs-${randomUUID().slice(0, 6)}`;
const SERVICE_CIDR = '10.96.0.0/16';

const log = (line: string): void => void process.stderr.write(`resync-pass: ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const named = (o: Owner, role: Role, suffix = '') => {
  const id = identityOf(C, role, o, suffix);
  return { name: id.name, description: id.description, tags: id.tags };
};
/** Run `fn` over `items`, `limit` at a time. */
async function each<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
    }),
  );
  return out;
}

async function main(): Promise<void> {
  const lab = await sharedLab();
  const project = freshProject();
  const neutronProxy = await HttpInterceptor.start(lab.neutronUrl);
  const octaviaProxy = await HttpInterceptor.start(lab.octaviaUrl);
  const client = (network: string, loadBalancer: string): OpenStackClient =>
    createOpenStackClient({
      auth: { type: 'noauth', projectId: project },
      endpoints: { network, loadBalancer },
      timeoutMs: 120_000,
    });
  const os = client(lab.neutronUrl, lab.octaviaUrl);
  const counted = client(neutronProxy.url, octaviaProxy.url);
  const neutron = os.neutron;
  const octavia = os.octavia;
  const started = Date.now();
  const cluster: Owner = { kind: 'Cluster', name: 'cluster', uid: C };

  // The cluster's own: service network and subnet, router, egress group (Neutron's default rules).
  const serviceNet = await neutron.networks.create(named(cluster, 'service-net'));
  const serviceSubnet = await neutron.subnets.create({
    ...named(cluster, 'service-subnet'),
    network_id: serviceNet.id,
    ip_version: 4,
    cidr: SERVICE_CIDR,
    gateway_ip: '10.96.255.254',
    enable_dhcp: false,
  });
  const router = await neutron.routers.create(named(cluster, 'router'));
  await neutron.routers.addInterface(router.id, { subnet_id: serviceSubnet.id });
  const egress = await neutron.securityGroups.create(named(cluster, 'egress-sg'));
  const infra: Infrastructure = {
    serviceNetworkId: serviceNet.id,
    serviceSubnets: [{ id: serviceSubnet.id, cidr: SERVICE_CIDR, family: 4 }],
    subnetPools: [{ id: 'pool', family: 4 }],
    routerId: router.id,
    egressGroupId: egress.id,
    projectId: project,
  };
  const stores = {
    namespaces: new MemoryStore<KubeObject>(),
    pods: new MemoryStore<KubeObject>(),
    services: new MemoryStore<KubeObject>(),
    endpointSlices: new MemoryStore<KubeObject>(),
    networkPolicies: new MemoryStore<KubeObject>(),
  };
  const status = new TranslationStatus(() => Date.now());
  const ctx = {
    os: counted,
    settings: { ...defaultSettings, clusterId: C, serviceCidrs: [SERVICE_CIDR], podCidrs: ['10.128.0.0/9'] },
    infra,
    ...stores,
    status,
    namespaceNetworks: new Map(),
    policyGroups: new Map(),
    logger: silentLogger,
    // Each repair, reported by the pass: the open rule's pass below times its deletion by it.
    driftRepaired: () => onRepaired(),
  } as unknown as TranslatorContext;
  let onRepaired = (): void => undefined;

  // Namespaces: network, subnet on the router, group with its rules.
  const nsNames = Array.from({ length: NS }, (_, i) => `scale-${i}`);
  const nets = await each(nsNames, 4, async (name) => {
    const uid = randomUUID();
    const owner: Owner = { kind: 'Namespace', name, uid };
    stores.namespaces.add({ metadata: { name, uid } });
    status.managed('Namespace', name);
    const network = await neutron.networks.create(named(owner, 'ns-net'));
    const i = nsNames.indexOf(name);
    const subnet = await neutron.subnets.create({
      ...named(owner, 'ns-subnet'),
      network_id: network.id,
      ip_version: 4,
      cidr: `10.128.${i}.0/24`,
      enable_dhcp: false,
    });
    await neutron.routers.addInterface(router.id, { subnet_id: subnet.id });
    const group = await neutron.securityGroups.create(named(owner, 'ns-sg'));
    const rules = namespaceRules([subnet.cidr], [SERVICE_CIDR]);
    for (const r of [...(group.security_group_rules ?? [])]) await neutron.securityGroupRules.delete(r.id);
    for (const r of rules) await neutron.securityGroupRules.create({ ...r, security_group_id: group.id });
    return { name, uid, network, subnet, group };
  });
  log(`namespaces made (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  // Policies (in the caches first: a pod's groups depend on them), each with a group of its own.
  const policyGroups = new Map<string, SecurityGroup>();
  await each(
    Array.from({ length: POLICIES }, (_, k) => k),
    4,
    async (k) => {
      const namespace = nsNames[k % NS] ?? '';
      const uid = randomUUID();
      const policy: PolicyShape = {
        metadata: { name: `np${k}`, namespace, uid },
        spec: {
          podSelector: { matchLabels: { svc: `s${k % SVCS}` } },
          ingress: [
            {
              from: [{ podSelector: { matchLabels: { svc: `s${(k + NS) % SVCS}` } } }],
              ports: [{ port: 8080 }, { port: 9090 }],
            },
          ],
        },
      };
      stores.networkPolicies.add(policy);
      status.managed('NetworkPolicy', `${namespace}/np${k}`);
      const group = await neutron.securityGroups.create(
        named({ kind: 'NetworkPolicy', namespace, name: `np${k}`, uid }, 'np-sg'),
      );
      for (const r of group.security_group_rules ?? []) await neutron.securityGroupRules.delete(r.id);
      policyGroups.set(uid, group);
    },
  );
  log(`policy groups made (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  // Pods: ports in bulk (tags in the body), each with the groups the policies imply, recorded on the pod.
  const pods = Array.from({ length: PODS }, (_, j) => {
    const net = nets[j % NS];
    if (net === undefined) throw new Error('no namespace');
    const pod: KubeObject = {
      metadata: { name: `p${j}`, namespace: net.name, uid: randomUUID(), labels: { svc: `s${j % SVCS}` } },
    };
    return { pod, net };
  });
  const bodies = pods.map(({ pod, net }) => {
    const plan = podGroupPlan(ctx, pod);
    const groups = [
      ...plan.policies.map((p) => policyGroups.get(p.metadata?.uid ?? '')?.id ?? ''),
      ...(plan.namespaceGroup ? [net.group.id] : []),
      ...(plan.egressGroup ? [egress.id] : []),
    ];
    const owner: Owner = {
      kind: 'Pod',
      namespace: net.name,
      name: pod.metadata?.name ?? '',
      uid: pod.metadata?.uid ?? '',
    };
    return {
      ...named(owner, 'pod-port'),
      network_id: net.network.id,
      fixed_ips: [{ subnet_id: net.subnet.id }],
      device_owner: 'raven:pod',
      device_id: owner.uid,
      security_groups: groups,
    };
  });
  const ports: Port[] = [];
  for (let i = 0; i < bodies.length; i += 50)
    ports.push(...(await neutron.ports.createMany(bodies.slice(i, i + 50))));
  for (const [j, { pod, net }] of pods.entries()) {
    const port = ports[j];
    if (port === undefined) throw new Error('a port is missing');
    stores.pods.add({
      ...pod,
      metadata: { ...pod.metadata, annotations: { [PORT_ANNOTATION]: portAnnotation(port, [net.subnet]) } },
    });
    status.managed('Pod', `${net.name}/${pod.metadata?.name ?? ''}`);
  }
  log(`${ports.length} pod ports made (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  // Each policy's rules, as the translator computes them.
  const view = viewOf(ctx);
  const subnetOf = new Map(nets.map((n) => [n.name, n.subnet.cidr]));
  const policyView = { ...view, subnetCidrs: (name: string) => [subnetOf.get(name) ?? ''] };
  let ruleCount = 0;
  await each(stores.networkPolicies.list(), 4, async (policy) => {
    const group = policyGroups.get(policy.metadata?.uid ?? '');
    if (group === undefined) return;
    const { rules } = policyRules(policy, policyView);
    ruleCount += rules.length;
    for (const r of rules) await neutron.securityGroupRules.create({ ...r, security_group_id: group.id });
  });
  log(`${ruleCount} policy rules made (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  // Services: VIP port, load balancer, listener, pool and members, one Octavia step at a time each.
  const services = Array.from({ length: SVCS }, (_, s) => {
    const namespace = nsNames[s % NS] ?? '';
    const uid = randomUUID();
    const svc: ServiceShape = {
      metadata: { name: `svc${s}`, namespace, uid },
      spec: { clusterIP: `10.96.1.${s + 10}`, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    };
    stores.services.add(svc);
    status.managed('Service', `${namespace}/svc${s}`);
    stores.endpointSlices.add({
      metadata: {
        name: `svc${s}-bench`,
        namespace,
        uid: randomUUID(),
        labels: { 'kubernetes.io/service-name': `svc${s}` },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: stores.pods
        .byIndex('namespace', namespace)
        .filter((p) => p.metadata?.labels?.svc === `s${s}`)
        .map((p) => ({ addresses: ['192.0.2.1'], targetRef: { kind: 'Pod', name: p.metadata?.name ?? '' } })),
    } as KubeObject);
    return { svc, owner: { kind: 'Service', namespace, name: `svc${s}`, uid } satisfies Owner };
  });
  const vips = await neutron.ports.createMany(
    services.map(({ svc, owner }) => ({
      ...named(owner, 'vip-port'),
      network_id: serviceNet.id,
      fixed_ips: [{ subnet_id: serviceSubnet.id, ip_address: svc.spec?.clusterIP ?? '' }],
      device_owner: 'raven:vip',
      device_id: owner.uid,
    })),
  );
  const wait = { timeoutMs: 1_800_000 };
  let members = 0;
  await each(services, 10, async ({ svc, owner }) => {
    const vip = vips.find((v) => v.fixed_ips.some((f) => f.ip_address === svc.spec?.clusterIP));
    if (vip === undefined) throw new Error('no VIP port');
    const lb = await octavia.loadBalancers.create({
      ...named(owner, 'lb'),
      vip_port_id: vip.id,
      vip_subnet_id: serviceSubnet.id,
      vip_address: svc.spec?.clusterIP ?? '',
    });
    const listener = await octavia.whenActive(
      lb.id,
      () =>
        octavia.listeners.create({
          ...named(owner, 'listener', 'tcp-80'),
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          protocol_port: 80,
        }),
      wait,
    );
    const pool = await octavia.whenActive(
      lb.id,
      () =>
        octavia.pools.create({
          ...named(owner, 'pool', 'tcp-80'),
          listener_id: listener.id,
          protocol: 'TCP',
          lb_algorithm: 'ROUND_ROBIN',
        }),
      wait,
    );
    const wanted = desiredMembers(ctx, svc, { name: 'http', port: 80, protocol: 'TCP' }, 4);
    members += wanted.length;
    await octavia.whenActive(lb.id, () => octavia.members(pool.id).replaceAll(wanted), wait);
    await octavia.waitForActive(lb.id, wait);
  });
  const made = (Date.now() - started) / 1000;
  log(`${SVCS} load balancers with ${members} members made (${made.toFixed(0)} s)`);

  // The passes, each counted by the proxies.
  const memory = new ResyncMemory();
  const deps = {
    enqueue: () => undefined,
    repairInfrastructure: () => Promise.resolve(),
    clock: systemClock,
  };
  const measured: {
    calls: Record<string, number>;
    total: number;
    ms: number;
    load: number;
    repaired: object;
  }[] = [];
  for (let i = 0; i < PASSES; i++) {
    const before = { n: neutronProxy.seen.length, o: octaviaProxy.seen.length };
    const [load = Number.NaN] = loadavg();
    const pass = await resync(ctx, memory, deps);
    const calls = [
      ...neutronProxy.seen.slice(before.n).map((c) => `network ${c}`),
      ...octaviaProxy.seen.slice(before.o).map((c) => `load-balancer ${c}`),
    ];
    const byKind: Record<string, number> = {};
    for (const c of calls) {
      const kind = c.replace(/\/[0-9a-f-]{32,36}/g, '/{id}');
      byKind[kind] = (byKind[kind] ?? 0) + 1;
    }
    measured.push({ calls: byKind, total: calls.length, ms: pass.durationMs, load, repaired: pass.repaired });
    log(
      `pass ${i + 1}: ${calls.length} calls, ${pass.durationMs} ms, repaired ${JSON.stringify(pass.repaired)}`,
    );
    await sleep(1_000);
  }
  // An open rule on a policy's group: from a pass's start to the rule deleted.
  const target = [...policyGroups.values()][0];
  if (target === undefined) throw new Error('no policy group');
  const open = await neutron.securityGroupRules.create({
    security_group_id: target.id,
    direction: 'ingress',
    protocol: 'tcp',
    port_range_min: 22,
    port_range_max: 22,
    remote_ip_prefix: '0.0.0.0/0',
  });
  const passStart = Date.now();
  let deletedAfter = Number.NaN;
  onRepaired = () => {
    if (Number.isNaN(deletedAfter)) deletedAfter = Date.now() - passStart;
  };
  const openPass = resync(ctx, memory, deps);
  const openSummary = await openPass;
  const still = ((await neutron.securityGroups.get(target.id)).security_group_rules ?? []).some(
    (r) => r.id === open.id,
  );
  log(
    `open rule deleted ${deletedAfter} ms after the pass started (pass ${openSummary.durationMs} ms); still there: ${still}`,
  );

  const lines = [
    `# Drift check: one resync pass at ${PODS} pods, ${NS} namespaces, ${SVCS} Services, ${POLICIES} NetworkPolicies`,
    '',
    `Run on ${machineLine(process.version)}, against the real lab (Neutron 21, Octavia 11 with the noop amphora driver, SQLite).`,
    '',
    `\`npx tsx bench/translator-scale/resync-pass.ts ${process.argv.slice(2).join(' ')}\``,
    '',
    `State made in ${made.toFixed(0)} s: ${PODS} pod ports, ${SVCS} VIP ports, ${NS} namespace networks, subnets and groups (2 rules each), ${POLICIES} policy groups (${ruleCount} rules), ${SVCS} load balancers with a listener and a pool each (${members} members), the cluster's network, subnet, router and egress group.`,
    '',
    '| pass | calls | duration | load average | repairs (a repair here would be a false alarm) |',
    '| ---: | ----: | -------: | -----------: | ---------------------------------------------- |',
    ...measured.map(
      (m, i) =>
        `| ${i + 1} | ${m.total} | ${(m.ms / 1000).toFixed(2)} s | ${m.load.toFixed(1)} | ${JSON.stringify(m.repaired)} |`,
    ),
    '',
    'Calls of the last pass:',
    '',
    '| call | count |',
    '| ---- | ----: |',
    ...Object.entries(measured.at(-1)?.calls ?? {}).map(([k, n]) => `| \`${k}\` | ${n} |`),
    '',
    `An open rule (TCP 22 from 0.0.0.0/0) on a policy's group: deleted ${(deletedAfter / 1000).toFixed(2)} s after the start of the pass that found it (that pass: ${(openSummary.durationMs / 1000).toFixed(2)} s, ${JSON.stringify(openSummary.repaired)}); still there afterwards: ${String(still)}.`,
    '',
  ];
  if (values.out !== undefined) await writeFile(values.out, lines.join('\n'));
  process.stdout.write(`${lines.join('\n')}\n`);
  await Promise.allSettled([neutronProxy.close(), octaviaProxy.close(), os.close(), counted.close()]);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
