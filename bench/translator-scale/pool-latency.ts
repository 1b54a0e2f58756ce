/**
 * Port pools: how long a new pod waits for its Neutron port (from the pod's create to the port
 * recorded in its annotation), with and without a pool, against the real lab (docs/openstack-lab.md)
 * and a private kube-apiserver.
 *
 *   npx tsx bench/translator-scale/pool-latency.ts --pods 30 --size 10 [--burst 20]
 *
 * Each mode runs a fresh Raven (a cluster id of its own) on one namespace. Once the namespace is
 * translated (and, with the pool, its pool filled), `--pods` pods are created one at a time, each
 * after the previous one has its port: the latency of one pod on an otherwise idle translator.
 * Then `--burst` pods are created at once: the time until all have their ports. Neutron calls are
 * counted by a proxy in front of it, per pod, for each part. The pool's refills are counted too:
 * they are part of what a pod costs, done off its path.
 */
import { spawn } from 'node:child_process';
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
    pods: { type: 'string', default: '30' },
    size: { type: 'string', default: '10' },
    burst: { type: 'string', default: '20' },
  },
});
const PODS = Number(values.pods);
const SIZE = Number(values.size);
const BURST = Number(values.burst);
const ANNOTATION = 'raven.openstack.org/port';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (line: string): void => {
  process.stderr.write(`pool-latency: ${line}\n`);
};

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

async function main(): Promise<void> {
  const lab = await sharedLab();
  const plane = await privateCluster();
  const project = freshProject();
  const neutron = await HttpInterceptor.start(lab.neutronUrl);
  const os = createOpenStackClient({
    auth: { type: 'noauth', projectId: project },
    endpoints: { network: lab.neutronUrl, loadBalancer: lab.octaviaUrl },
  });
  const dir = await mkdtemp(join(tmpdir(), 'raven-pool-'));
  const request = async (method: string, path: string, body?: object): Promise<unknown> => {
    const answer = await plane.adminRequest(method, path, body);
    if (answer.status >= 300)
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body === '' ? undefined : (JSON.parse(answer.body) as unknown);
  };
  const results: Record<string, unknown> = { pods: PODS, burst: BURST, size: SIZE };
  try {
    for (const mode of ['no pool', 'pool'] as const) {
      const cluster = `pool-${Date.now().toString(36).slice(-5)}`;
      const cfg = join(dir, `${cluster}.yaml`);
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
      endpoints: { network: "${neutron.url}", loadBalancer: "${lab.octaviaUrl}" }
      timeoutMs: 60000
    serviceCidr: 10.96.0.0/16
    podCidr: 10.128.0.0/9
    gcIntervalSeconds: 3600
${mode === 'pool' ? `    portPool: { size: ${SIZE} }\n` : ''}`,
      );
      const raven = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'run', '-c', cfg], {
        cwd: repoRoot,
        env: { ...process.env, KUBECONFIG: plane.kubeconfig, NO_COLOR: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      raven.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-20_000)));
      const ns = `${cluster}-ns`;
      try {
        while (!/cluster infrastructure ready/.test(stderr)) {
          if (raven.exitCode !== null) throw new Error(stderr);
          await sleep(200);
        }
        await request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
        // The namespace is ready when its group exists and, with the pool, the pool is full.
        for (;;) {
          const ports = await os.neutron.ports.list({ project_id: project });
          const pool = ports.filter((p) => p.description?.includes(`:${cluster}:pool-port:Namespace:${ns}:`));
          const groups = (await os.neutron.securityGroups.list({ project_id: project })).filter((g) =>
            g.description?.includes(`:${cluster}:ns-sg:Namespace:${ns}:`),
          );
          if (groups.length > 0 && (mode === 'no pool' || pool.length >= SIZE)) break;
          await sleep(500);
        }
        await sleep(2_000);
        const annotated = async (names: string[]): Promise<number> => {
          const list = (await request('GET', `/api/v1/namespaces/${ns}/pods`)) as {
            items: { metadata: { name: string; annotations?: Record<string, string> } }[];
          };
          const wanted = new Set(names);
          return list.items.filter((p) => wanted.has(p.metadata.name) && p.metadata.annotations?.[ANNOTATION])
            .length;
        };
        const podBody = (name: string) => ({
          metadata: { name },
          spec: { containers: [{ name: 'c', image: 'registry.invalid/none:1' }] },
        });
        const before = neutron.seen.length;
        const latencies: number[] = [];
        for (let i = 0; i < PODS; i++) {
          const name = `one-${i}`;
          const started = performance.now();
          await request('POST', `/api/v1/namespaces/${ns}/pods`, podBody(name));
          while ((await annotated([name])) === 0) await sleep(10);
          latencies.push(performance.now() - started);
        }
        // Let the last refill finish inside the count.
        await sleep(3_000);
        const oneCalls = neutron.seen.length - before;
        const burstNames = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
        const burstBefore = neutron.seen.length;
        const burstStarted = performance.now();
        await Promise.all(
          burstNames.map((n) => request('POST', `/api/v1/namespaces/${ns}/pods`, podBody(n))),
        );
        while ((await annotated(burstNames)) < BURST) await sleep(20);
        const burstMs = performance.now() - burstStarted;
        await sleep(3_000);
        const burstCalls = neutron.seen.length - burstBefore;
        const sorted = [...latencies].sort((a, b) => a - b);
        const summary = {
          medianMs: Math.round(quantile(sorted, 0.5)),
          p90Ms: Math.round(quantile(sorted, 0.9)),
          maxMs: Math.round(sorted.at(-1) ?? NaN),
          callsPerPod: Number((oneCalls / PODS).toFixed(2)),
          burstSeconds: Number((burstMs / 1000).toFixed(2)),
          burstCallsPerPod: Number((burstCalls / BURST).toFixed(2)),
        };
        log(`${mode}: ${JSON.stringify(summary)}`);
        results[mode] = summary;
      } finally {
        raven.kill('SIGKILL');
        await request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      }
    }
    process.stdout.write(`RESULT ${JSON.stringify(results)}\n`);
  } finally {
    await Promise.allSettled([neutron.close(), plane.stop(), os.close()]);
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
