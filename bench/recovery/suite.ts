/**
 * Suite 4, recovery: how soon each contestant delivers changes again after a fault, on real
 * apiservers started for the suite (private control planes, stopped at the end). Every contestant
 * runs in its own process and, where the fault is injected on the connections, through a TCP
 * proxy of its own, so all of them live through the same fault at the same time on the same
 * apiserver.
 *
 * A round runs two tracks at once, on two control planes:
 * - plane A: the three connection faults together (each with fresh contestants and proxies of its
 *   own, started a few seconds apart), then the apiserver restart;
 * - plane B: the half-open stall, which can take up to the stall cap, alone, so that the restart
 *   on plane A never reaches the stalled connections.
 * A round takes about as long as the stall cap; `--runs` rounds are run one after the other.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane } from '../../test/harness/control-plane.js';
import { TcpProxy } from '../../test/harness/tcp-proxy.js';
import { freshNamespace, kubeconfigVia, privateCluster } from '../../test/harness/test-cluster.js';
import { ClientProcess } from './client-process.js';
import { contestants, type Contestant } from './contestants.js';
import { recoveryMarkdown, type Results } from './report.js';
import { scenarios, sleep, type Measured, type Scenario } from './scenarios.js';
import { Ticker } from './ticker.js';

export interface RecoverySuiteOptions {
  node: string;
  nodeVersion: string;
  runs: number;
  /** How long the half-open stall lasts at most, in seconds. */
  stallCapS: number;
  /** Where the Raven under test comes from, for the report. */
  raven: string;
  only?: string[];
  scenarios?: string[];
  log: (line: string) => void;
}

/** A contestant must be listed and receiving changes this long after its start, or it is out of the run. */
const READY_TIMEOUT_MS = 120_000;
/** Watching before the fault, so that each starts from a settled, working watch. */
const SETTLE_MS = 5_000;
/**
 * Longest wait for every contestant to resume after the server answers again: twice the longest
 * backoff ceiling among the contestants (30 s); past it a run counts as "not within".
 */
const RESUME_CAP_MS = 60_000;
/** Between the starts of the concurrent connection faults, so their reconnects do not coincide. */
const STAGGER_MS = 4_000;

const CONCURRENT = ['refused-reset', 'refused-closed-port', 'outage-60s'];

/**
 * At most this many contestants start at once, across scenarios: starting Node and loading a
 * client is the heaviest moment of a run, and a busy machine must not make them miss the start.
 */
const STARTING_AT_ONCE = 2;
let starting = 0;
const waitingToStart: (() => void)[] = [];

async function startSlot(start: () => Promise<void>): Promise<void> {
  if (starting < STARTING_AT_ONCE) starting++;
  else await new Promise<void>((resolve) => waitingToStart.push(resolve));
  try {
    await start();
  } finally {
    const next = waitingToStart.shift();
    if (next === undefined) starting--;
    else next();
  }
}

interface Lab {
  plane: ControlPlane;
  namespace: string;
  ticker: Ticker;
  dir: string;
}

const running = new Set<ClientProcess>();
process.on('exit', () => {
  for (const client of running) client.kill();
});

async function startLab(name: string, log: (line: string) => void): Promise<Lab> {
  log(`recovery: starting control plane ${name}`);
  const plane = await privateCluster();
  const namespace = await freshNamespace(plane, 'recovery');
  const ticker = await Ticker.start(plane, namespace);
  const dir = await mkdtemp(join(tmpdir(), 'raven-recovery-'));
  return { plane, namespace, ticker, dir };
}

async function stopLab(lab: Lab): Promise<void> {
  lab.ticker.stop();
  await lab.plane.stop();
  await rm(lab.dir, { recursive: true, force: true });
}

interface RunRecord {
  measured: Map<string, Measured>;
  failures: Map<string, string>;
}

async function runScenario(
  lab: Lab,
  scenario: Scenario,
  chosen: readonly Contestant[],
  options: RecoverySuiteOptions,
): Promise<RunRecord> {
  const proxies = new Map<string, TcpProxy>();
  const clients: ClientProcess[] = [];
  const failures = new Map<string, string>();
  const sentAt = (seq: number): number | undefined => lab.ticker.sentAt(seq);
  try {
    await Promise.all(
      chosen.map(async (contestant) => {
        let kubeconfig = lab.plane.kubeconfig;
        if (scenario.proxied) {
          const proxy = await TcpProxy.start({ host: '127.0.0.1', port: lab.plane.state.ports.apiserver });
          proxies.set(contestant.name, proxy);
          kubeconfig = await kubeconfigVia(lab.plane, proxy, lab.dir);
        }
        await startSlot(async () => {
          const client = ClientProcess.spawn(options.node, contestant.name, kubeconfig, lab.namespace);
          running.add(client);
          clients.push(client);
          const deadline = Date.now() + READY_TIMEOUT_MS;
          while (!client.watching(sentAt) && client.exited === undefined && Date.now() < deadline)
            await sleep(100);
          if (client.watching(sentAt)) return;
          const why = `not watching ${READY_TIMEOUT_MS / 1000} s after its start (${client.state()})`;
          failures.set(contestant.name, client.exited ?? why);
          client.kill();
        });
      }),
    );
    const watching = clients.filter((c) => !failures.has(c.name));
    await sleep(SETTLE_MS);
    const capMs = scenario.id === 'half-open-stall' ? options.stallCapS * 1000 : RESUME_CAP_MS;
    const measured = await scenario.run({
      plane: lab.plane,
      ticker: lab.ticker,
      clients: watching,
      proxies: new Map([...proxies].filter(([name]) => !failures.has(name))),
      capMs,
      log: options.log,
    });
    for (const client of watching) {
      if (client.exited !== undefined) failures.set(client.name, client.exited);
    }
    return { measured, failures };
  } finally {
    for (const client of clients) {
      client.kill();
      running.delete(client);
    }
    for (const proxy of proxies.values()) await proxy.close();
  }
}

function describe(record: RunRecord): string {
  const cell = (m: Measured): string => {
    const s = (v: number | undefined): string => (v === undefined ? 'never' : `${v.toFixed(1)} s`);
    const parts = [`resumed ${s(m.resumedS)}`];
    if ('detectedS' in m) parts.push(`detected ${s(m.detectedS)}`);
    if (m.attemptsPerMinute !== undefined) parts.push(`${m.attemptsPerMinute.toFixed(0)} attempts/min`);
    return parts.join(', ');
  };
  return [
    ...[...record.measured].map(([name, m]) => `${name} ${cell(m)}`),
    ...[...record.failures].map(([name, why]) => `${name} FAILED ${why}`),
  ].join('; ');
}

export async function runRecoverySuite(options: RecoverySuiteOptions): Promise<{ markdown: string }> {
  const unknown = (options.scenarios ?? []).filter((id) => !scenarios.some((s) => s.id === id));
  if (unknown.length > 0)
    throw new Error(
      `unknown scenario ${unknown.join(', ')}; one of ${scenarios.map((s) => s.id).join(', ')}`,
    );
  const chosen = contestants.filter((c) => options.only === undefined || options.only.includes(c.name));
  if (chosen.length === 0)
    throw new Error(`no contestant chosen; the contestants are ${contestants.map((c) => c.name).join(', ')}`);
  const selected = scenarios.filter(
    (s) => options.scenarios === undefined || options.scenarios.includes(s.id),
  );
  const results: Results = new Map(
    selected.map((s) => [s.id, new Map(chosen.map((c) => [c.name, { runs: [], failures: [] }]))]),
  );
  const began = Date.now();
  const record = (scenario: Scenario, round: number, outcome: RunRecord | Error): void => {
    const slots = results.get(scenario.id);
    if (outcome instanceof Error) {
      for (const slot of slots?.values() ?? []) slot.failures.push(outcome.message);
    } else {
      for (const [name, m] of outcome.measured) slots?.get(name)?.runs.push(m);
      for (const [name, why] of outcome.failures) slots?.get(name)?.failures.push(why);
    }
    const text = outcome instanceof Error ? `FAILED ${outcome.message}` : describe(outcome);
    const minutes = ((Date.now() - began) / 60_000).toFixed(1);
    options.log(`recovery: [${minutes} min] round ${round + 1}/${options.runs} ${scenario.id}: ${text}`);
  };
  const attempt = async (lab: Lab, scenario: Scenario, round: number, order: Contestant[]): Promise<void> => {
    const outcome = await runScenario(lab, scenario, order, options).catch((err: unknown) =>
      err instanceof Error ? err : new Error(String(err)),
    );
    record(scenario, round, outcome);
  };

  const onPlaneA = selected.filter((s) => s.id !== 'half-open-stall');
  const onPlaneB = selected.filter((s) => s.id === 'half-open-stall');
  const labs: Lab[] = [];
  const load: number[] = [];
  const stopOnSignal = (): void => process.exit(130);
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  try {
    const started = await Promise.allSettled([
      onPlaneA.length > 0 ? startLab('A', options.log) : undefined,
      onPlaneB.length > 0 ? startLab('B', options.log) : undefined,
    ]);
    for (const outcome of started)
      if (outcome.status === 'fulfilled' && outcome.value) labs.push(outcome.value);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    const [labA, labB] = started.map((o) => (o.status === 'fulfilled' ? o.value : undefined));
    for (let round = 0; round < options.runs; round++) {
      load.push(loadavg()[0] ?? 0);
      const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]) as Contestant[];
      const trackA = async (): Promise<void> => {
        if (labA === undefined) return;
        const together = onPlaneA.filter((s) => CONCURRENT.includes(s.id));
        await Promise.all(
          together.map(async (scenario, i) => {
            // The stall's contestants start first: its track is the longer one.
            await sleep((i + 1) * STAGGER_MS);
            await attempt(labA, scenario, round, order);
          }),
        );
        for (const scenario of onPlaneA.filter((s) => !CONCURRENT.includes(s.id)))
          await attempt(labA, scenario, round, order);
      };
      const trackB = async (): Promise<void> => {
        if (labB === undefined) return;
        for (const scenario of onPlaneB) await attempt(labB, scenario, round, order);
      };
      await Promise.all([trackB(), trackA()]);
    }
  } finally {
    process.off('SIGINT', stopOnSignal).off('SIGTERM', stopOnSignal);
    for (const lab of labs) await stopLab(lab);
  }
  return {
    markdown: recoveryMarkdown(results, {
      nodeVersion: options.nodeVersion,
      runs: options.runs,
      stallCapS: options.stallCapS,
      resumeCapS: RESUME_CAP_MS / 1000,
      raven: options.raven,
      contestants: chosen,
      scenarios: selected.map((s) => s.id),
      load,
    }),
  };
}
