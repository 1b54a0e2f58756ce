/**
 * NetworkPolicy → Neutron security groups, against a real kube-apiserver and the lab's real
 * Neutron. A table of policies (the upstream examples: deny-all, allow from a namespace, allow from
 * pods with a label, ipBlock with except, egress to DNS; plus named ports and changes of pods,
 * labels and policies) is applied step by step; after each step the rules that apply to each pod's
 * port — the union of the rules of every group on it — must be exactly the ones written out here.
 * Raven is killed with SIGKILL right after a policy is created, and policies are deleted while it
 * is down: nothing may be left (every check also runs `problems()`, which requires exactly one
 * group per policy and nothing of objects that are gone).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { OpenStackClient } from '../../src/openstack/openstack-client.js';
import { PORT_ANNOTATION } from '../../src/translator/pod-translator.js';
import { privateCluster, freshNamespace } from '../harness/test-cluster.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { ok, startRaven, tempDir, until, writeConfig, type RavenProcess } from './daemon-process.js';
import {
  config,
  labSetup,
  owned,
  pod,
  problems,
  ruleText,
  SERVICE_CIDR,
  type PodObj,
} from './translator-world.js';

/** The rules that apply to a pod's port: those of every group it carries, written out. */
async function portRules(
  os: OpenStackClient,
  cluster: string,
  plane: ControlPlane,
  namespace: string,
  name: string,
): Promise<string[] | undefined> {
  const got = await plane.adminRequest('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
  if (got.status !== 200) return undefined;
  const uid = (JSON.parse(got.body) as PodObj).metadata.uid;
  const state = await owned(os, cluster);
  const port = state.ports.find((p) => p.d.role === 'pod-port' && p.d.uid === uid)?.r;
  if (port === undefined) return undefined;
  const groups = await os.neutron.securityGroups.list();
  return groups
    .filter((g) => (port.security_groups ?? []).includes(g.id))
    .flatMap((g) => (g.security_group_rules ?? []).map(ruleText))
    .sort();
}

async function podIp(
  plane: ControlPlane,
  raven: RavenProcess,
  namespace: string,
  name: string,
): Promise<string> {
  let ip = '';
  const show = () => raven.stderr().split('\n').slice(-40).join('\n');
  // The timeout is a safety net only: Neutron on SQLite answers in seconds under load.
  await until(
    `pod ${namespace}/${name} has a port`,
    async () => {
      const pod = JSON.parse(
        (await plane.adminRequest('GET', `/api/v1/namespaces/${namespace}/pods/${name}`)).body,
      ) as PodObj;
      const raw = pod.metadata.annotations?.[PORT_ANNOTATION];
      ip = raw === undefined ? '' : ((JSON.parse(raw) as { ips: string[] }).ips[0] ?? '');
      return ip !== '';
    },
    { timeoutMs: 900_000, show },
  );
  return ip;
}

const EGRESS_ANY = ['egress IPv4 any', 'egress IPv6 any'];
const tcp = (port: number, from: string) => `ingress IPv4 tcp:${port}-${port} from ${from}`;

test(
  'NetworkPolicies become exactly the security-group rules they imply, through changes, a SIGKILL and deletions while Raven is down',
  { timeout: 3_600_000 },
  async (t) => {
    const { lab, project, os } = await labSetup(t);
    const plane = await privateCluster();
    t.after(() => plane.stop());
    const clusterId = `e2e-${randomBytes(3).toString('hex')}`;
    const dir = await tempDir(t);
    const cfg = await writeConfig(
      dir,
      // Garbage collection lists everything in the lab: every 60 s, not 5, as Neutron answers slowly
      // under load (the pass at start is what finds the groups of policies deleted while down).
      config({ clusterId, project, neutron: lab.neutronUrl, octavia: lab.octaviaUrl, gcSeconds: 60 }),
    );
    const shop = await freshNamespace(plane, 'shop');
    const tools = await freshNamespace(plane, 'tools');
    const create = (path: string, body: object) => ok(plane.adminRequest('POST', path, body));
    const policies = (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`;
    await create(
      `/api/v1/namespaces/${shop}/pods`,
      pod('web', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]),
    );
    await create(`/api/v1/namespaces/${shop}/pods`, pod('client', { role: 'client' }));
    await create(`/api/v1/namespaces/${tools}/pods`, pod('probe', { role: 'client' }));

    let raven: RavenProcess = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    t.after(() => raven.kill('SIGKILL'));
    const client = await podIp(plane, raven, shop, 'client');
    const subnets = new Map<string, string>();
    const subnetOf = async (ns: string): Promise<string> => {
      const known = subnets.get(ns);
      if (known !== undefined) return known;
      let cidr = '';
      await until(`namespace ${ns} has a subnet`, async () => {
        const uid = (JSON.parse((await plane.adminRequest('GET', `/api/v1/namespaces/${ns}`)).body) as PodObj)
          .metadata.uid;
        cidr = (await owned(os, clusterId)).subnets.find((s) => s.d.uid === uid)?.r.cidr ?? '';
        return cidr !== '';
      });
      subnets.set(ns, cidr);
      return cidr;
    };
    const defaults = async (ns: string) =>
      [...EGRESS_ANY, `ingress IPv4 from ${await subnetOf(ns)}`, `ingress IPv4 from ${SERVICE_CIDR}`].sort();

    /** Wait until every pod's rules are as written and OpenStack matches the cluster. */
    const expectRules = async (step: string, want: Record<string, string[]>) => {
      let last: string[] = [];
      await until(
        step,
        async () => {
          last = [];
          for (const [key, rules] of Object.entries(want)) {
            const [ns = '', name = ''] = key.split('/');
            const now = await portRules(os, clusterId, plane, ns, name);
            const expected = [...rules].sort();
            if (JSON.stringify(now) !== JSON.stringify(expected))
              last.push(
                `${key}:\n  has  ${(now ?? ['(no port)']).join('\n       ')}\n  want ${expected.join('\n       ')}`,
              );
          }
          if (last.length === 0) last = await problems(os, clusterId, plane);
          return last.length === 0;
        },
        {
          timeoutMs: 900_000, // a safety net only: Neutron on SQLite answers in seconds under load
          show: () => {
            const lines = raven.stderr().split('\n');
            const warnings = lines.filter((l) => /"level":(40|50|60)/.test(l)).slice(-20);
            return `${last.join('\n')}\n--- raven warnings:\n${warnings.join('\n')}\n--- raven log tail:\n${lines.slice(-30).join('\n')}`;
          },
        },
      );
    };
    const web = `${shop}/web`;
    const clientKey = `${shop}/client`;
    const probe = `${tools}/probe`;
    await expectRules('no policy: every pod has its namespace defaults', {
      [web]: await defaults(shop),
      [clientKey]: await defaults(shop),
      [probe]: await defaults(tools),
    });

    // Allow from pods with a label, on a port number and a named port (http → 8080 on web).
    const allowClients = (extraPeers: object[]) => ({
      metadata: { name: 'allow-clients' },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { role: 'client' } } }, ...extraPeers],
            ports: [{ port: 80 }, { port: 'http' }],
          },
        ],
      },
    });
    await create(policies(shop), allowClients([]));
    await expectRules('allow from pods with a label', {
      [web]: [...EGRESS_ANY, tcp(80, `${client}/32`), tcp(8080, `${client}/32`)],
      [clientKey]: await defaults(shop),
    });

    // Modify: allow from a namespace too (by its label).
    await ok(
      plane.adminRequest('PATCH', `/api/v1/namespaces/${tools}`, { metadata: { labels: { team: 'b' } } }),
    );
    const put = (ns: string, name: string, body: object) =>
      ok(
        (async () => {
          const current = JSON.parse((await plane.adminRequest('GET', `${policies(ns)}/${name}`)).body) as {
            metadata: { resourceVersion: string };
          };
          return plane.adminRequest('PUT', `${policies(ns)}/${name}`, {
            ...body,
            metadata: {
              ...(body as { metadata: object }).metadata,
              resourceVersion: current.metadata.resourceVersion,
            },
          });
        })(),
      );
    await put(shop, 'allow-clients', allowClients([{ namespaceSelector: { matchLabels: { team: 'b' } } }]));
    const toolsNet = await subnetOf(tools);
    await expectRules('allow from a namespace', {
      [web]: [
        ...EGRESS_ANY,
        tcp(80, `${client}/32`),
        tcp(8080, `${client}/32`),
        tcp(80, toolsNet),
        tcp(8080, toolsNet),
      ],
    });

    // A new pod with the label is allowed; the namespace losing its label is not any more.
    await create(`/api/v1/namespaces/${shop}/pods`, pod('client2', { role: 'client' }));
    const client2 = await podIp(plane, raven, shop, 'client2');
    await ok(
      plane.adminRequest('PATCH', `/api/v1/namespaces/${tools}`, { metadata: { labels: { team: null } } }),
    );
    await expectRules('a new pod joins the peers, a relabelled namespace leaves them', {
      [web]: [
        ...EGRESS_ANY,
        tcp(80, `${client}/32`),
        tcp(8080, `${client}/32`),
        tcp(80, `${client2}/32`),
        tcp(8080, `${client2}/32`),
      ],
    });

    // Deny all ingress in tools.
    await create(policies(tools), {
      metadata: { name: 'deny-all' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    await expectRules('deny-all', { [probe]: EGRESS_ANY });

    // ipBlock with except, then a SIGKILL right after the policy is created (mid-work).
    await create(policies(shop), {
      metadata: { name: 'from-block' },
      spec: {
        podSelector: { matchLabels: { role: 'client' } },
        ingress: [{ from: [{ ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }] }],
      },
    });
    raven.kill('SIGKILL');
    await raven.exited;
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    const block = [
      '172.17.0.0/24',
      '172.17.2.0/23',
      '172.17.4.0/22',
      '172.17.8.0/21',
      '172.17.16.0/20',
      '172.17.32.0/19',
      '172.17.64.0/18',
      '172.17.128.0/17',
    ].map((p) => `ingress IPv4 from ${p}`);
    await expectRules('ipBlock with except, after a SIGKILL', {
      [clientKey]: [...EGRESS_ANY, ...block],
      [`${shop}/client2`]: [...EGRESS_ANY, ...block],
    });

    // Egress to DNS only (kube-system, UDP and TCP 53) for web; its ingress stays as it was.
    await create(policies(shop), {
      metadata: { name: 'egress-dns' },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        policyTypes: ['Egress'],
        egress: [
          {
            to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
            ports: [
              { protocol: 'UDP', port: 53 },
              { protocol: 'TCP', port: 53 },
            ],
          },
        ],
      },
    });
    const kubeSystem = await subnetOf('kube-system');
    const dns = [`egress IPv4 udp:53-53 from ${kubeSystem}`, `egress IPv4 tcp:53-53 from ${kubeSystem}`];
    const webIngress = [
      tcp(80, `${client}/32`),
      tcp(8080, `${client}/32`),
      tcp(80, `${client2}/32`),
      tcp(8080, `${client2}/32`),
    ];
    await expectRules('egress to DNS', { [web]: [...webIngress, ...dns] });

    // Policies deleted while Raven is down: their groups go, the pods get their defaults back.
    raven.kill('SIGKILL');
    await raven.exited;
    await ok(plane.adminRequest('DELETE', `${policies(shop)}/allow-clients`));
    await ok(plane.adminRequest('DELETE', `${policies(tools)}/deny-all`));
    raven = startRaven(['run', '-c', cfg], { kubeconfig: plane.kubeconfig });
    const shopIngress = (await defaults(shop)).filter((r) => r.startsWith('ingress'));
    await expectRules('policies deleted while Raven was down', {
      [web]: [...shopIngress, ...dns],
      [probe]: await defaults(tools),
      [clientKey]: [...EGRESS_ANY, ...block],
    });

    // The rest deleted while it runs: every pod back to its defaults, no policy group left.
    await ok(plane.adminRequest('DELETE', `${policies(shop)}/from-block`));
    await ok(plane.adminRequest('DELETE', `${policies(shop)}/egress-dns`));
    await expectRules('every policy deleted', {
      [web]: await defaults(shop),
      [clientKey]: await defaults(shop),
      [`${shop}/client2`]: await defaults(shop),
      [probe]: await defaults(tools),
    });
    const left = (await owned(os, clusterId)).groups.filter((g) => g.d.role === 'np-sg');
    assert.deepEqual(left, [], 'no policy group left');
    raven.kill('SIGTERM');
    assert.equal((await raven.exited).code, 0);
  },
);
