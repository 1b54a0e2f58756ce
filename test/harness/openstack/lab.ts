/**
 * A real OpenStack Neutron + Octavia on loopback for the translator's tests: neutron-server (noauth,
 * ML2 without mechanism drivers, SQLite), octavia-api and octavia-worker (noauth, the `amphora`
 * provider with noop drivers, SQLite) and the RabbitMQ between the two Octavia services, all on
 * free 127.0.0.1 ports, from the Debian bookworm packages.
 *
 * Everything the lab knows is in `<dir>/state.json`, so another process can attach to it (a test
 * file, `npm run openstack -- down`). Services run detached, each leading its own process group,
 * with their output in `<dir>/logs/`. `start()` returns only once a load balancer has gone through
 * create -> ACTIVE -> delete end to end; `stop()` leaves nothing running, epmd included.
 *
 * noauth runs every request as admin and ignores X-Project-Id: put `project_id` in each POST body
 * (use {@link OpenStackLab.projectId}).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expectStatus, field, labRequest, stringField } from './http.js';
import {
  generateOctaviaCa,
  installSchemas,
  openstackEnv,
  rabbitmqConfig,
  writeConfigs,
  type LabPaths,
  type LabPorts,
} from './lab-files.js';
import { freePorts } from '../ports.js';
import { ownGroup, startTime, isAlive, launchDetached, memory, sleep, stopGroup, tail } from './processes.js';
import {
  amqpReady,
  findEpmd,
  prepareRabbit,
  rabbitctlStop,
  rabbitEnv,
  rabbitmqServer,
  rabbitQueueConsumers,
} from './rabbitmq.js';

/**
 * How long each service may take to become ready before start() gives up: a safety net, not a
 * timing requirement. The services are ready in 10-55 s, the longer on a machine loaded by other
 * test runs; only a service that is stuck should hit this.
 */
const READY_MS = 300_000;
/**
 * The readiness round trip: how long one load balancer may take to go ACTIVE and away, and how
 * many are tried, with octavia-worker started again between them. It usually takes seconds (the
 * whole Octavia phase 15 to 40 s); once, on a loaded CI run, the first one stayed PENDING_CREATE
 * for 300 s with the worker consuming its queue (Octavia's worker gives up on a load balancer it
 * cannot read from the database within 60 s, and never looks at it again).
 */
const ROUND_TRIP_MS = 120_000;
const ROUND_TRIPS = 3;

export type LabService = 'rabbitmq' | 'neutron' | 'octaviaApi' | 'octaviaWorker';

const services: readonly LabService[] = ['rabbitmq', 'neutron', 'octaviaApi', 'octaviaWorker'];

export interface OpenStackLabState {
  dir: string;
  ports: LabPorts;
  /** Process-group leaders, by service. */
  pids: Partial<Record<LabService, number>>;
  /** When each leader started (see startTime), so a reused pid is never taken for the lab's. */
  started: Partial<Record<LabService, number>>;
  /** The epmd daemon the Erlang VM started (outside RabbitMQ's process group). */
  epmdPid?: number;
  neutronUrl: string;
  octaviaUrl: string;
  projectId: string;
  /** Seconds each start-up phase took, and the whole start. */
  timings: Record<string, number>;
}

export interface LabServiceStatus {
  running: boolean;
  pids: number[];
  /** Resident memory, counting pages shared between forked workers once per process. */
  rssBytes: number;
  /** Proportional memory: shared pages split between the processes sharing them. */
  pssBytes: number;
}

export interface LabStatus {
  services: Record<LabService | 'epmd', LabServiceStatus>;
  rssBytes: number;
  pssBytes: number;
  running: boolean;
}

const stateFile = (dir: string): string => join(dir, 'state.json');

export class OpenStackLab {
  readonly state: OpenStackLabState;

  private constructor(state: OpenStackLabState) {
    this.state = state;
  }

  /** Neutron's API root (append `/v2.0/...`). */
  get neutronUrl(): string {
    return this.state.neutronUrl;
  }

  /** Octavia's API root (append `/v2/lbaas/...`). */
  get octaviaUrl(): string {
    return this.state.octaviaUrl;
  }

  /** A project id of this lab to put in every POST body. */
  get projectId(): string {
    return this.state.projectId;
  }

  static exists(dir: string): boolean {
    return existsSync(stateFile(dir));
  }

  /** Attach to a lab started earlier (by this or another process) in `dir`. */
  static async attach(dir: string): Promise<OpenStackLab> {
    return new OpenStackLab(JSON.parse(await readFile(stateFile(dir), 'utf8')) as OpenStackLabState);
  }

  /**
   * Start a lab in `dir` and resolve once every service answers and a load balancer has been created
   * and deleted through the worker. A lab left in `dir` is stopped and the directory wiped first.
   *
   * @example
   * const lab = await OpenStackLab.start('/tmp/lab', console.error);
   * await fetch(`${lab.neutronUrl}/v2.0/networks`);
   * await lab.stop();
   */
  static async start(dir: string, log: (line: string) => void = () => undefined): Promise<OpenStackLab> {
    if (!existsSync('/usr/bin/neutron-server') || !existsSync(rabbitmqServer))
      throw new Error(
        'the OpenStack lab needs the Debian packages: apt-get install -y --no-install-recommends ' +
          'neutron-server octavia-api octavia-worker rabbitmq-server sqlite3',
      );
    if (OpenStackLab.exists(dir)) await (await OpenStackLab.attach(dir)).stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    const began = Date.now();
    const [neutron, octaviaApi, amqp, dist, epmd, ctlDist] = await freePorts(6);
    if (!neutron || !octaviaApi || !amqp || !dist || !epmd || !ctlDist) throw new Error('no free ports');
    const ports: LabPorts = { neutron, octaviaApi, rabbitmq: { amqp, dist, epmd, ctlDist } };
    const paths = await writeConfigs(dir, ports);
    await prepareRabbit(dir, await rabbitmqConfig(ports));
    const lab = new OpenStackLab({
      dir,
      ports,
      pids: {},
      started: {},
      neutronUrl: `http://127.0.0.1:${neutron}`,
      octaviaUrl: `http://127.0.0.1:${octaviaApi}`,
      projectId: randomBytes(16).toString('hex'),
      timings: {},
    });
    await lab.save();
    try {
      await lab.bringUp(paths, log);
      lab.state.timings.total = (Date.now() - began) / 1000;
      await lab.save();
    } catch (err) {
      await lab.stop();
      throw err;
    }
    log(`ready in ${lab.state.timings.total.toFixed(1)} s`);
    return lab;
  }

  /** Stop every process of the lab, epmd included; the directory is kept for its logs. */
  async stop(): Promise<void> {
    await Promise.all((['octaviaApi', 'octaviaWorker', 'neutron'] as const).map((s) => this.end(s)));
    const rabbit = this.state.pids.rabbitmq;
    if (rabbit !== undefined && ownGroup(rabbit, this.state.started.rabbitmq).length > 0)
      await rabbitctlStop(this.state.dir, this.state.ports.rabbitmq);
    await this.end('rabbitmq');
    // Found again by its port (in its environment) rather than trusting a pid saved long ago.
    const epmd = findEpmd(this.state.ports.rabbitmq.epmd);
    if (epmd !== undefined && isAlive(epmd)) {
      process.kill(epmd, 'SIGTERM');
      for (let i = 0; i < 100 && isAlive(epmd); i++) await sleep(50);
      if (isAlive(epmd)) process.kill(epmd, 'SIGKILL');
    }
    delete this.state.epmdPid;
    await this.save();
  }

  /**
   * SIGKILL every process of the lab at once, synchronously: the last resort of a process that is
   * exiting and cannot wait for {@link stop}.
   */
  killNow(): void {
    const kill = (pid: number): void => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    for (const service of services) {
      const leader = this.state.pids[service];
      if (leader !== undefined && ownGroup(leader, this.state.started[service]).length > 0) kill(-leader);
    }
    if (this.state.epmdPid !== undefined) kill(this.state.epmdPid);
  }

  /** What runs, and its resident memory (from /proc). */
  status(): LabStatus {
    const entry = (pids: number[]): LabServiceStatus => ({
      running: pids.length > 0,
      pids,
      rssBytes: pids.reduce((sum, pid) => sum + memory(pid).rss, 0),
      pssBytes: pids.reduce((sum, pid) => sum + memory(pid).pss, 0),
    });
    const byService = Object.fromEntries(
      services.map((s) => {
        const leader = this.state.pids[s];
        return [s, entry(leader === undefined ? [] : ownGroup(leader, this.state.started[s]))];
      }),
    ) as Record<LabService, LabServiceStatus>;
    const epmd = findEpmd(this.state.ports.rabbitmq.epmd);
    const all = { ...byService, epmd: entry(epmd === undefined ? [] : [epmd]) };
    return {
      services: all,
      rssBytes: Object.values(all).reduce((sum, s) => sum + s.rssBytes, 0),
      pssBytes: Object.values(all).reduce((sum, s) => sum + s.pssBytes, 0),
      running: services.every((s) => byService[s].running),
    };
  }

  /** The log file of a service. */
  logFile(service: LabService): string {
    return join(this.state.dir, 'logs', `${service}.log`);
  }

  /** Launch every service at once, then wait for each to be ready (see the module comment). */
  private async bringUp(paths: LabPaths, log: (line: string) => void): Promise<void> {
    const { dir, ports } = this.state;
    // RabbitMQ boots in 5-10 s and the Python services import for as long: launch everything at
    // once (the Octavia services retry their broker connection every second), then wait.
    await this.launch('rabbitmq', [rabbitmqServer], rabbitEnv(dir, ports.rabbitmq));
    await this.phase('schemas+ca', log, () =>
      Promise.all([installSchemas(paths, log), generateOctaviaCa(dir, paths)]),
    );
    const octavia = ['--config-file', paths.octaviaConf, '--config-dir', paths.octaviaConfDir];
    await this.launchOpenStack('neutron', [
      '/usr/bin/neutron-server',
      ...['--config-file', paths.neutronConf, '--config-file', paths.ml2Conf],
      ...['--config-dir', paths.neutronConfDir],
    ]);
    await this.launchOpenStack('octaviaWorker', ['/usr/bin/octavia-worker', ...octavia]);
    await this.launchOpenStack('octaviaApi', ['/usr/bin/octavia-api', ...octavia]);
    await Promise.all([
      this.phase('neutron', log, () =>
        this.waitFor('neutron', () => this.answers(`${this.neutronUrl}/v2.0/networks`), READY_MS),
      ),
      this.phase('octavia', log, async () => {
        await this.phase('rabbitmq', log, () => this.rabbitReady());
        await this.waitFor(
          'octaviaApi',
          () => this.answers(`${this.octaviaUrl}/v2/lbaas/loadbalancers`),
          READY_MS,
        );
        for (let attempt = 1; ; attempt++) {
          // A cast sent before the worker has declared its queue is dropped, and the load balancer
          // it was for stays PENDING_CREATE for good: wait for the consumer before each create.
          await this.waitFor(
            'octaviaWorker',
            async () => (await rabbitQueueConsumers(dir, ports.rabbitmq, 'octavia_prov')) > 0,
            READY_MS,
          );
          const stuck = await this.loadBalancerRoundTrip();
          if (stuck === undefined) break;
          const worker = this.logFile('octaviaWorker');
          const message = `${stuck}; the last lines of ${worker}:\n${await tail(worker)}`;
          if (attempt >= ROUND_TRIPS) throw new Error(message);
          log(
            `octavia: ${message}\nstarting octavia-worker again (round trip ${attempt + 1} of ${ROUND_TRIPS})`,
          );
          await this.end('octaviaWorker');
          await this.launchOpenStack('octaviaWorker', ['/usr/bin/octavia-worker', ...octavia]);
        }
      }),
    ]);
  }

  private async rabbitReady(): Promise<void> {
    const { ports } = this.state;
    await this.waitFor('rabbitmq', () => amqpReady(ports.rabbitmq.amqp), READY_MS);
    const epmdPid = findEpmd(ports.rabbitmq.epmd);
    if (epmdPid !== undefined) this.state.epmdPid = epmdPid;
    await this.save();
  }

  private async phase(
    name: string,
    log: (line: string) => void,
    body: () => Promise<unknown>,
  ): Promise<void> {
    const began = Date.now();
    log(`${name}: starting`);
    await body();
    this.state.timings[name] = (Date.now() - began) / 1000;
    log(`${name}: ready in ${this.state.timings[name].toFixed(1)} s`);
  }

  private async launch(service: LabService, argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
    const pid = launchDetached(argv, env, this.logFile(service));
    this.state.pids[service] = pid;
    const started = startTime(pid);
    if (started !== undefined) this.state.started[service] = started;
    await this.save();
  }

  private launchOpenStack(service: LabService, argv: string[]): Promise<void> {
    const immediateTransactions = service === 'octaviaApi' || service === 'octaviaWorker';
    return this.launch(service, argv, openstackEnv(this.state.dir, { immediateTransactions }));
  }

  private async end(service: LabService): Promise<void> {
    const pid = this.state.pids[service];
    if (pid === undefined) return;
    if (ownGroup(pid, this.state.started[service]).length > 0) await stopGroup(pid);
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- a known key of a small record
    delete this.state.pids[service];
  }

  private async save(): Promise<void> {
    await writeFile(stateFile(this.state.dir), JSON.stringify(this.state, null, 2));
  }

  private async waitFor(
    service: LabService,
    probe: () => Promise<boolean>,
    timeoutMs: number,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const leader = this.state.pids[service] ?? 0;
      if (ownGroup(leader, this.state.started[service]).length === 0)
        throw new Error(
          `${service} exited during start-up; last lines of ${this.logFile(service)}:\n${await tail(this.logFile(service))}`,
        );
      if (await probe().catch(() => false)) return;
      await sleep(250);
    }
    throw new Error(`${service} was not ready within ${timeoutMs / 1000} s; see ${this.logFile(service)}`);
  }

  private async answers(url: string): Promise<boolean> {
    return (await labRequest('GET', url, undefined, 5000)).status === 200;
  }

  /**
   * The worker's real readiness check: a load balancer (in a project of its own, with a VIP the
   * noop network driver invents) goes ACTIVE, is deleted, and disappears. Undefined when it did;
   * otherwise what it was stuck at after {@link ROUND_TRIP_MS} (left in its project, which no test
   * reads).
   */
  private async loadBalancerRoundTrip(): Promise<string | undefined> {
    const lbs = `${this.octaviaUrl}/v2/lbaas/loadbalancers`;
    const created = await expectStatus(201, 'POST', lbs, {
      loadbalancer: {
        name: 'lab-readiness',
        project_id: 'lab-readiness',
        vip_subnet_id: randomUUID(),
      },
    });
    const id = stringField(field(created.body, 'loadbalancer'), 'id');
    const settle = async (
      want: (status: number, provisioning: string) => boolean,
    ): Promise<string | undefined> => {
      const deadline = Date.now() + ROUND_TRIP_MS;
      let last = '';
      while (Date.now() < deadline) {
        const res = await labRequest('GET', `${lbs}/${id}`);
        const provisioning =
          res.status === 200 ? String(field(res.body, 'loadbalancer').provisioning_status) : '';
        if (want(res.status, provisioning)) return undefined;
        last = `${res.status} ${provisioning}`;
        await sleep(200);
      }
      return `octavia-worker did not process load balancer ${id} within ${ROUND_TRIP_MS / 1000} s (last: ${last})`;
    };
    const active = await settle((_, p) => p === 'ACTIVE');
    if (active !== undefined) return active;
    await expectStatus(204, 'DELETE', `${lbs}/${id}`);
    return settle((status, p) => status === 404 || p === 'DELETED');
  }
}
