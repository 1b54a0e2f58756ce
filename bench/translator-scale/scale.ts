/**
 * The OpenStack translator at scale, against the real lab (Neutron + Octavia, see
 * docs/openstack-lab.md) and a private kube-apiserver: how many OpenStack calls a converged pod
 * and a converged Service cost, how long convergence takes, and Raven's peak memory.
 *
 *   npx tsx bench/translator-scale/scale.ts --namespaces 4 --pods 100 --services 10 [--repo DIR]
 *
 * `--repo` runs the Raven of another checkout (its src/cli/main.ts with tsx), so an older
 * translator is measured by the same harness. RAVEN_TEST_OPENSTACK_DIR names the running lab
 * (`eval "$(npm run --silent openstack -- env)"`); without it a lab is started for the run.
 *
 * Three phases, each waited on until OpenStack holds what it implies: the namespaces; then the
 * pods, all created at once (every pod a port, recorded on the pod); then the Services with one
 * EndpointSlice each, all at once (every Service a load balancer, ACTIVE, a listener and pool,
 * and a member per endpoint). Calls are counted by a proxy in front of each service (every HTTP
 * call Raven makes, whatever its version), from the phase's start to its convergence plus a quiet
 * period. The garbage collector is set to an hour so it stays out of the figures.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createOpenStackClient } from '../../src/openstack/openstack-client.js';
import { HttpInterceptor } from '../../test/harness/http-interceptor.js';
import { freshProject, sharedLab } from '../../test/harness/openstack/test-lab.js';
import { privateCluster } from '../../test/harness/test-cluster.js';
import { repoRoot } from '../lib/child.js';

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '4' },
    pods: { type: 'string', default: '100' },
    services: { type: 'string', default: '10' },
    repo: { type: 'string', default: repoRoot },
  },
});
const NAMESPACES = Number(values.namespaces);
const PODS = Number(values.pods);
const SERVICES = Number(values.services);
const QUIET_MS = 5_000;
// Service s is in namespace s mod NAMESPACES; its endpoints are the pods of that namespace whose
// number is s mod SERVICES (with counts that do not divide, some pods back no Service).

/** Pod p<j> is in namespace j % NAMESPACES and, with SERVICES a multiple of NAMESPACES, behind Service j % SERVICES. */
const podNumber = (p: { metadata: { name: string } }): number => Number(p.metadata.name.slice(1));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function log(line: string): void {
  process.stderr.write(`scale: ${line}\n`);
}

async function main(): Promise<void> {
  const lab = await sharedLab();
  const plane = await privateCluster();
  const project = freshProject();
  const neutron = await HttpInterceptor.start(lab.neutronUrl);
  const octavia = await HttpInterceptor.start(lab.octaviaUrl);
  const os = createOpenStackClient({
    auth: { type: 'noauth', projectId: project },
    endpoints: { network: lab.neutronUrl, loadBalancer: lab.octaviaUrl },
  });
  const dir = await mkdtemp(join(tmpdir(), 'raven-scale-'));
  const cluster = `scale-${Date.now().toString(36).slice(-5)}`;
  const cfg = join(dir, 'raven.yaml');
  await writeFile(
    cfg,
    `logLevel: info
server: { port: 0 }
translators:
  - name: openstack
    type: openstack
    clusterId: ${cluster}
    openstack:
      auth: { type: noauth, projectId: ${project} }
      endpoints: { network: "${neutron.url}", loadBalancer: "${octavia.url}" }
      timeoutMs: 60000
    serviceCidr: 10.96.0.0/16
    podCidr: 10.128.0.0/9
    gcIntervalSeconds: 3600
    loadBalancerTimeoutSeconds: 600
`,
  );
  const request = async (method: string, path: string, body?: object): Promise<unknown> => {
    const answer = await plane.adminRequest(method, path, body);
    if (answer.status >= 300)
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body === '' ? undefined : (JSON.parse(answer.body) as unknown);
  };
  const raven = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'run', '-c', cfg], {
    cwd: values.repo,
    env: { ...process.env, KUBECONFIG: plane.kubeconfig, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  raven.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-20_000)));
  const peakRss = (): number => {
    const status = readFileSync(`/proc/${raven.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  const results: Record<string, unknown> = {
    namespaces: NAMESPACES,
    pods: PODS,
    services: SERVICES,
    repo: values.repo,
  };
  try {
    const phase = async (name: string, act: () => Promise<void>, done: () => Promise<string | undefined>) => {
      const before = { n: neutron.seen.length, o: octavia.seen.length };
      const started = Date.now();
      await act();
      let last: string | undefined = 'not checked';
      for (let i = 0; ; i++) {
        last = await done();
        if (last === undefined) break;
        if (Date.now() - started > 1_800_000)
          throw new Error(`${name}: no convergence: ${last}\n${stderr.slice(-3000)}`);
        if (i % 6 === 0) log(`${name}: ${last}`);
        await sleep(2_000);
      }
      const seconds = (Date.now() - started) / 1000;
      await sleep(QUIET_MS);
      const calls = [
        ...neutron.seen.slice(before.n).map((c) => `network ${c}`),
        ...octavia.seen.slice(before.o).map((c) => `load-balancer ${c}`),
      ];
      const byKind = new Map<string, number>();
      for (const c of calls) {
        const kind = c.replace(/\/[0-9a-f-]{32,36}/g, '/{id}');
        byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
      }
      const top = [...byKind].sort((a, b) => b[1] - a[1]);
      log(`${name}: converged in ${seconds.toFixed(1)} s, ${calls.length} calls`);
      results[name] = { seconds, calls: calls.length, byKind: Object.fromEntries(top) };
    };

    const names = Array.from({ length: NAMESPACES }, (_, i) => `scale-${i}`);
    const pods = async () =>
      (await request('GET', '/api/v1/pods')) as {
        items: { metadata: { namespace: string; name: string; annotations?: Record<string, string> } }[];
      };

    await phase(
      'namespaces',
      async () => {
        // Wait for Raven's infrastructure first, so the phase counts namespaces only.
        for (;;) {
          if (/cluster infrastructure ready/.test(stderr)) break;
          if (raven.exitCode !== null) throw new Error(stderr);
          await sleep(500);
        }
        await Promise.all(names.map((n) => request('POST', '/api/v1/namespaces', { metadata: { name: n } })));
      },
      async () => {
        const groups = (await os.neutron.securityGroups.list({ project_id: project })).filter(
          (g) => g.description?.includes(':ns-sg:Namespace:') === true,
        );
        const subnets = (await os.neutron.subnets.list({ project_id: project })).filter(
          (s) => s.description?.includes(':ns-subnet:') === true,
        );
        const all = (await request('GET', '/api/v1/namespaces')) as { items: unknown[] };
        return subnets.length >= all.items.length && groups.length >= all.items.length
          ? undefined
          : `${subnets.length} namespace subnets of ${all.items.length}`;
      },
    );

    await phase(
      'pods',
      async () => {
        await Promise.all(
          Array.from({ length: PODS }, (_, i) =>
            request('POST', `/api/v1/namespaces/${names[i % NAMESPACES]}/pods`, {
              metadata: { name: `p${i}` },
              spec: { containers: [{ name: 'c', image: 'registry.invalid/none:1' }] },
            }),
          ),
        );
      },
      async () => {
        const annotated = (await pods()).items.filter(
          (p) => p.metadata.annotations?.['raven.openstack.org/port'] !== undefined,
        ).length;
        return annotated >= PODS ? undefined : `${annotated} of ${PODS} pods have their port`;
      },
    );

    await phase(
      'services',
      async () => {
        const all = (await pods()).items;
        await Promise.all(
          Array.from({ length: SERVICES }, async (_, s) => {
            const ns = names[s % NAMESPACES] ?? '';
            const mine = all.filter((p) => p.metadata.namespace === ns && podNumber(p) % SERVICES === s);
            await request('POST', `/api/v1/namespaces/${ns}/services`, {
              metadata: { name: `svc${s}` },
              spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
            });
            await request('POST', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
              metadata: {
                name: `svc${s}-bench`,
                labels: {
                  'kubernetes.io/service-name': `svc${s}`,
                  'endpointslice.kubernetes.io/managed-by': 'raven-bench',
                },
              },
              addressType: 'IPv4',
              ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
              endpoints: mine.map((p, i) => ({
                addresses: [`192.0.2.${(i % 250) + 1}`],
                targetRef: { kind: 'Pod', name: p.metadata.name },
              })),
            });
          }),
        );
        results.endpoints = all.filter(
          (p) => names[(podNumber(p) % SERVICES) % NAMESPACES] === p.metadata.namespace,
        ).length;
      },
      async () => {
        const lbs = (await os.octavia.loadBalancers.list({ project_id: project })).filter((l) =>
          /:lb:Service:scale-/.test(l.description ?? ''),
        );
        const active = lbs.filter((l) => l.provisioning_status === 'ACTIVE').length;
        const pools = (await os.octavia.pools.list({ project_id: project })).filter((p) =>
          /:pool:Service:scale-/.test(p.description ?? ''),
        );
        const members = pools.reduce((n, p) => n + ((p as { members?: unknown[] }).members?.length ?? 0), 0);
        const want = results.endpoints as number;
        return active >= SERVICES && pools.length >= SERVICES && members >= want && lbs.length === active
          ? undefined
          : `${active} of ${SERVICES} load balancers ACTIVE, ${pools.length} pools, ${members} of ${want} members`;
      },
    );
    results.peakRssMb = Math.round(peakRss());
    process.stdout.write(`RESULT ${JSON.stringify(results)}\n`);
  } finally {
    raven.kill('SIGKILL');
    await Promise.allSettled([neutron.close(), octavia.close(), plane.stop(), os.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
