/**
 * The OpenStack translator at scale, against the real lab (Neutron + Octavia, see
 * docs/openstack-lab.md) and a private kube-apiserver: how many OpenStack calls a converged pod
 * and a converged Service cost, how long convergence takes, and Raven's peak memory; with
 * `--policies` and `--resync-passes`, what the drift check's pass costs once all is converged.
 *
 *   npx tsx bench/translator-scale/scale.ts --namespaces 4 --pods 100 --services 10 [--repo DIR]
 *   npx tsx bench/translator-scale/scale.ts --namespaces 20 --pods 500 --services 50 --policies 50 \
 *     --resync-passes 5 --resync-seconds 30 --out bench/results/translator-resync.md
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
 *
 * `--policies N`: a fourth phase, N NetworkPolicies at once (policy k in namespace k mod
 * namespaces selects the pods behind Service k mod services and admits, on TCP 8080 and 9090, those
 * behind Service (k + namespaces) mod services of its namespace: a /32 rule per peer pod and port),
 * waited on until every policy's group holds its rules and every selected pod's port carries it.
 *
 * `--resync-passes P` (the resync period `--resync-seconds`, default 30; otherwise the resync is
 * off): once everything has converged, P resync passes are watched; the calls of each (the proxy's
 * count between the end of one pass and the end of the next, when nothing else runs) and its
 * duration (its own log line) are reported. Then a rule opening TCP 22 to 0.0.0.0/0 is added to a
 * policy's group right after a pass ends (the worst moment), and the time until it is gone is
 * measured. `--out FILE` writes the results as Markdown. Passes may also have run during the
 * earlier phases: their calls are in those phases' counts.
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
import { processPeakRssMb } from '../lib/proc.js';
import { machineLine } from '../lib/report.js';

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '4' },
    pods: { type: 'string', default: '100' },
    services: { type: 'string', default: '10' },
    repo: { type: 'string', default: repoRoot },
    policies: { type: 'string', default: '0' },
    'resync-passes': { type: 'string', default: '0' },
    'resync-seconds': { type: 'string', default: '30' },
    out: { type: 'string' },
  },
});
const NAMESPACES = Number(values.namespaces);
const PODS = Number(values.pods);
const SERVICES = Number(values.services);
const POLICIES = Number(values.policies);
const RESYNC_PASSES = Number(values['resync-passes']);
const RESYNC_SECONDS = RESYNC_PASSES > 0 ? Number(values['resync-seconds']) : 0;
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
    `logLevel: ${RESYNC_PASSES > 0 ? 'debug' : 'info'}
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
    resyncSeconds: ${RESYNC_SECONDS}
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
  let partial = '';
  /** Each resync pass that ended: its log line, and the proxies' counts when it was written. */
  const passes: { line: ResyncLine; n: number; o: number; at: number }[] = [];
  raven.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-20_000);
    const lines = (partial + s).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"resync pass done"')) continue;
      passes.push({
        line: JSON.parse(line) as ResyncLine,
        n: neutron.seen.length,
        o: octavia.seen.length,
        at: Date.now(),
      });
    }
  });
  const results: Record<string, unknown> = {
    namespaces: NAMESPACES,
    pods: PODS,
    services: SERVICES,
    policies: POLICIES,
    repo: values.repo,
  };
  try {
    const callsBetween = (from: { n: number; o: number }, to: { n: number; o: number }): string[] => [
      ...neutron.seen.slice(from.n, to.n).map((c) => `network ${c}`),
      ...octavia.seen.slice(from.o, to.o).map((c) => `load-balancer ${c}`),
    ];
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
      const calls = callsBetween(before, { n: neutron.seen.length, o: octavia.seen.length });
      log(`${name}: converged in ${seconds.toFixed(1)} s, ${calls.length} calls`);
      results[name] = { seconds, calls: calls.length, byKind: byKind(calls) };
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
              metadata: { name: `p${i}`, labels: { svc: `s${i % SERVICES}` } },
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
    /** Pods behind Service `svc` in namespace `ns`. */
    const behind = (all: Awaited<ReturnType<typeof pods>>['items'], ns: string, svc: number) =>
      all.filter((p) => p.metadata.namespace === ns && podNumber(p) % SERVICES === svc);
    async function policiesPhase(): Promise<void> {
      const policy = (k: number) => ({
        ns: names[k % NAMESPACES] ?? '',
        selects: k % SERVICES,
        admits: (k + NAMESPACES) % SERVICES,
      });
      await phase(
        'policies',
        async () => {
          await Promise.all(
            Array.from({ length: POLICIES }, (_, k) =>
              request('POST', `/apis/networking.k8s.io/v1/namespaces/${policy(k).ns}/networkpolicies`, {
                metadata: { name: `np${k}` },
                spec: {
                  podSelector: { matchLabels: { svc: `s${policy(k).selects}` } },
                  ingress: [
                    {
                      from: [{ podSelector: { matchLabels: { svc: `s${policy(k).admits}` } } }],
                      ports: [{ port: 8080 }, { port: 9090 }],
                    },
                  ],
                },
              }),
            ),
          );
        },
        async () => {
          const all = (await pods()).items;
          const groups = (await os.neutron.securityGroups.list({ project_id: project })).filter((g) =>
            /:np-sg:NetworkPolicy:scale-/.test(g.description ?? ''),
          );
          const rules = groups.reduce((n, g) => n + (g.security_group_rules?.length ?? 0), 0);
          let wantRules = 0;
          let wantCarried = 0;
          for (let k = 0; k < POLICIES; k++) {
            wantRules += 2 * behind(all, policy(k).ns, policy(k).admits).length;
            wantCarried += behind(all, policy(k).ns, policy(k).selects).length;
          }
          const ids = new Set(groups.map((g) => g.id));
          const carried = (
            await os.neutron.ports.list({ project_id: project, device_owner: 'raven:pod' })
          ).reduce((n, p) => n + (p.security_groups ?? []).filter((g) => ids.has(g)).length, 0);
          results.policyRules = wantRules;
          return groups.length >= POLICIES && rules === wantRules && carried === wantCarried
            ? undefined
            : `${groups.length} of ${POLICIES} policy groups, ${rules} of ${wantRules} rules, ${carried} of ${wantCarried} ports carrying them`;
        },
      );
    }
    async function resyncPhase(): Promise<void> {
      const passEnd = async (after: number): Promise<void> => {
        while (passes.length <= after) {
          if (raven.exitCode !== null) throw new Error(stderr);
          await sleep(50);
        }
      };
      // Passes from the second one that ends after a quiet period: each counted from the end of the
      // one before, when nothing else runs.
      await sleep(QUIET_MS);
      const first = passes.length + 1;
      await passEnd(first + RESYNC_PASSES - 1);
      const measured = passes.slice(first, first + RESYNC_PASSES).map((pass, i) => {
        const calls = callsBetween(passes[first + i - 1] ?? pass, pass);
        log(
          `resync pass: ${calls.length} calls, ${pass.line.durationMs} ms, ${JSON.stringify(pass.line.repaired)}`,
        );
        return {
          calls: calls.length,
          byKind: byKind(calls),
          durationMs: pass.line.durationMs,
          repaired: pass.line.repaired,
        };
      });
      // The worst moment for an open rule: right after a pass has listed the groups.
      const groups = (await os.neutron.securityGroups.list({ project_id: project })).filter((g) =>
        /:np-sg:NetworkPolicy:scale-/.test(g.description ?? ''),
      );
      const target = groups[0];
      if (target === undefined) throw new Error('no policy group to open');
      const ended = passes.length;
      await passEnd(ended);
      const openedAt = Date.now();
      const rule = await os.neutron.securityGroupRules.create({
        security_group_id: target.id,
        direction: 'ingress',
        protocol: 'tcp',
        port_range_min: 22,
        port_range_max: 22,
        remote_ip_prefix: '0.0.0.0/0',
      });
      const sinceLastPass = (openedAt - (passes[ended]?.at ?? openedAt)) / 1000;
      for (;;) {
        const rules = (await os.neutron.securityGroups.get(target.id)).security_group_rules ?? [];
        if (!rules.some((r) => r.id === rule.id)) break;
        if (Date.now() - openedAt > 10 * RESYNC_SECONDS * 1000) throw new Error('the open rule stayed');
        await sleep(100);
      }
      const openSeconds = (Date.now() - openedAt) / 1000;
      log(
        `an open rule added ${sinceLastPass.toFixed(1)} s after a pass ended was open ${openSeconds.toFixed(1)} s`,
      );
      // Repairs by the passes that ran while the phases converged: each would be a false alarm (the
      // controllers were converging; a pass leaves objects being reconciled to them).
      const during: Record<string, number> = {};
      for (const pass of passes.slice(0, first))
        for (const [kind, n] of Object.entries(pass.line.repaired)) during[kind] = (during[kind] ?? 0) + n;
      results.resync = {
        periodSeconds: RESYNC_SECONDS,
        passes: measured,
        openRule: { sinceLastPass, openSeconds },
        duringConvergence: { passes: first, repaired: during },
      };
    }

    if (POLICIES > 0) await policiesPhase();
    if (RESYNC_PASSES > 0) await resyncPhase();
    results.peakRssMb = Math.round(await processPeakRssMb(raven.pid ?? 0));
    if (values.out !== undefined) await writeFile(values.out, markdown(results));
    process.stdout.write(`RESULT ${JSON.stringify(results)}\n`);
  } finally {
    raven.kill('SIGKILL');
    await Promise.allSettled([neutron.close(), octavia.close(), plane.stop(), os.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

interface ResyncLine {
  durationMs: number;
  listCalls: number;
  repaired: Record<string, number>;
}

/** Calls by `service METHOD path`, ids as `{id}`, most frequent first. */
function byKind(calls: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const kind = c.replace(/\/[0-9a-f-]{32,36}/g, '/{id}');
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
}

/** The results as Markdown: the phases, then the resync passes. */
function markdown(r: Record<string, unknown>): string {
  const out = [
    `# The OpenStack translator at scale: ${String(r.pods)} pods, ${String(r.namespaces)} namespaces, ${String(r.services)} Services, ${String(POLICIES)} NetworkPolicies`,
    '',
    `Run on ${machineLine(process.version)}, against the real lab (Neutron 21, Octavia 11 with the noop amphora driver, SQLite) and a private kube-apiserver.`,
    '',
    `\`npx tsx bench/translator-scale/scale.ts ${process.argv.slice(2).join(' ')}\``,
    '',
    '| phase | calls | time until converged |',
    '| ----- | ----: | -------------------: |',
  ];
  for (const name of ['namespaces', 'pods', 'services', 'policies']) {
    const phase = r[name] as { calls: number; seconds: number } | undefined;
    if (phase !== undefined) out.push(`| ${name} | ${phase.calls} | ${phase.seconds.toFixed(1)} s |`);
  }
  const resync = r.resync as
    | {
        periodSeconds: number;
        passes: {
          calls: number;
          byKind: Record<string, number>;
          durationMs: number;
          repaired: Record<string, number>;
        }[];
        openRule: { sinceLastPass: number; openSeconds: number };
        duringConvergence: { passes: number; repaired: Record<string, number> };
      }
    | undefined;
  if (resync !== undefined) {
    out.push('', `## Resync passes (period ${resync.periodSeconds} s), once converged`, '');
    out.push('| pass | calls | duration | repaired |', '| ---: | ----: | -------: | -------- |');
    for (const [i, p] of resync.passes.entries())
      out.push(
        `| ${i + 1} | ${p.calls} | ${(p.durationMs / 1000).toFixed(2)} s | ${JSON.stringify(p.repaired)} |`,
      );
    const last = resync.passes.at(-1);
    if (last !== undefined) {
      out.push('', `Calls of the last pass, by kind:`, '', '| call | count |', '| ---- | ----: |');
      for (const [kind, n] of Object.entries(last.byKind)) out.push(`| \`${kind}\` | ${n} |`);
    }
    out.push(
      '',
      `Passes while the phases converged: ${resync.duringConvergence.passes}, repairs made by them: ${JSON.stringify(resync.duringConvergence.repaired)}.`,
    );
    out.push(
      '',
      `A rule opening TCP 22 to 0.0.0.0/0, added to a policy's group ${resync.openRule.sinceLastPass.toFixed(1)} s after a pass ended, was open for ${resync.openRule.openSeconds.toFixed(1)} s.`,
    );
  }
  out.push('', `Peak resident memory of the Raven process (tsx included): ${String(r.peakRssMb)} MB.`, '');
  return out.join('\n');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
