/**
 * A real Kubernetes control plane on loopback: etcd, kube-apiserver and kube-controller-manager,
 * on free ports, with TLS, an admin client certificate, a bearer token and a service-account
 * signing key. Everything it knows is kept in `<dir>/state.json`, so another process (a test
 * file, `npm run cluster -- down`) can attach to it, restart the apiserver or compact etcd.
 *
 * Processes are started detached with their output in `<dir>/logs/`; `stop()` ends them all.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync, existsSync, fstatSync } from 'node:fs';
import { mkdir, readFile, writeFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { isAlive, type Binaries } from './binaries.js';
import { generatePki, type Pki } from './pki.js';
import { freePorts } from './ports.js';

type Component = 'etcd' | 'apiserver' | 'controllerManager';

/**
 * How long a component may take to become ready before start() or a restart gives up: a safety net
 * for a component that is stuck. Each is ready in seconds on a quiet machine, but an apiserver
 * starting while other test runs load the machine has taken over a minute.
 */
const READY_MS = 300_000;

export interface ControlPlaneState {
  dir: string;
  kubernetesVersion: string;
  ports: { etcdClient: number; etcdPeer: number; apiserver: number; controllerManager: number };
  pids: Partial<Record<Component, number>>;
  argv: Record<Component, string[]>;
  pki: Pki;
  /** Static bearer token of a user in group system:masters. */
  token: string;
  kubeconfig: string;
  server: string;
  etcdUrl: string;
}

/** A component could not bind its port: another process took it after it was chosen. */
class PortTakenError extends Error {}

/** How many times start() picks fresh ports when a component finds its port taken. */
const START_ATTEMPTS = 3;

function kubeconfigYaml(state: Omit<ControlPlaneState, 'kubeconfig' | 'argv'>): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: raven-local
  cluster:
    server: ${state.server}
    certificate-authority: ${state.pki.caCert}
users:
- name: raven-admin
  user:
    client-certificate: ${state.pki.adminCert}
    client-key: ${state.pki.adminKey}
- name: raven-token
  user:
    token: ${state.token}
contexts:
- name: raven-local
  context: { cluster: raven-local, user: raven-admin, namespace: default }
- name: raven-local-token
  context: { cluster: raven-local, user: raven-token, namespace: default }
current-context: raven-local
`;
}

function controllerManagerKubeconfig(state: Omit<ControlPlaneState, 'kubeconfig' | 'argv'>): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: { server: ${state.server}, certificate-authority: ${state.pki.caCert} }
users:
- name: cm
  user: { client-certificate: ${state.pki.controllerManagerCert}, client-key: ${state.pki.controllerManagerKey} }
contexts:
- name: local
  context: { cluster: local, user: cm }
current-context: local
`;
}

/**
 * Alpha features the tests and benchmarks exercise, turned on in the apiserver. One list: add a
 * gate here, with the reason. Each is checked against the Kubernetes version hack/controlplane/go.mod
 * builds (an unknown gate stops the apiserver at start).
 * - `CBORServingAndStorage` (KEP-4222): the apiserver answers `Accept: application/cbor`, which the
 *   CBOR decoding option and its benchmark use. JSON clients are unaffected.
 * - `ShardedListAndWatch` (alpha in 1.36, KEP-5866): the `shardSelector` list/watch parameter and
 *   `metadata.shardInfo` on sharded lists, for the sharded watch's server-side path.
 */
export const FEATURE_GATES: Readonly<Record<string, boolean>> = {
  CBORServingAndStorage: true,
  ShardedListAndWatch: true,
};

export interface ControlPlaneOptions {
  /** Gates to set over {@link FEATURE_GATES} (e.g. `{ ShardedListAndWatch: false }`). */
  featureGates?: Record<string, boolean>;
  /** `--service-cluster-ip-range` (default 10.96.0.0/16); two CIDRs, one per family, for dual stack. */
  serviceClusterIpRange?: string;
  /**
   * Chooses the plane's ports, in the order etcd client, etcd peer, apiserver, controller manager
   * (default {@link freePorts}): the harness's own test hands out a taken port through it.
   */
  choosePorts?: (count: number) => Promise<number[]>;
}

export class ControlPlane {
  readonly state: ControlPlaneState;
  /** Where each component's log ended when it was last launched. */
  readonly #logStart: Partial<Record<Component, number>> = {};

  private constructor(state: ControlPlaneState) {
    this.state = state;
  }

  get kubeconfig(): string {
    return this.state.kubeconfig;
  }

  get server(): string {
    return this.state.server;
  }

  /** The running components' process ids. */
  pids(): Partial<Record<Component, number>> {
    return { ...this.state.pids };
  }

  /** Attach to a control plane started earlier (by this or another process) in `dir`. */
  static async attach(dir: string): Promise<ControlPlane> {
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as ControlPlaneState;
    return new ControlPlane(state);
  }

  static exists(dir: string): boolean {
    return existsSync(join(dir, 'state.json'));
  }

  /**
   * Start a new control plane in `dir` (wiped first) and wait until it is ready.
   *
   * A component binds its port seconds after the port was chosen; another process (a second test
   * suite on the machine) may take it meanwhile. The component then exits with "address already in
   * use", and the whole plane is started again on fresh ports, START_ATTEMPTS times at most.
   */
  static async start(
    dir: string,
    binaries: Binaries,
    log: (line: string) => void = () => undefined,
    options: ControlPlaneOptions = {},
  ): Promise<ControlPlane> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ControlPlane.startOnce(dir, binaries, log, options);
      } catch (err) {
        if (!(err instanceof PortTakenError) || attempt >= START_ATTEMPTS) throw err;
        log(`${err.message.split('\n')[0]}; starting again on fresh ports`);
      }
    }
  }

  private static async startOnce(
    dir: string,
    binaries: Binaries,
    log: (line: string) => void,
    options: ControlPlaneOptions,
  ): Promise<ControlPlane> {
    const gates = { ...FEATURE_GATES, ...options.featureGates };
    await rm(dir, { recursive: true, force: true });
    await mkdir(join(dir, 'logs'), { recursive: true });
    await mkdir(join(dir, 'pki'), { recursive: true });
    const pki = await generatePki(join(dir, 'pki'));
    const [etcdClient = 0, etcdPeer = 0, apiserver = 0, controllerManager = 0] = await (
      options.choosePorts ?? freePorts
    )(4);
    const ports = { etcdClient, etcdPeer, apiserver, controllerManager };
    const token = randomBytes(24).toString('hex');
    await writeFile(
      join(dir, 'pki', 'tokens.csv'),
      `${token},raven-token-admin,raven-token-admin,"system:masters"\n`,
      {
        mode: 0o600,
      },
    );
    const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
    const server = `https://127.0.0.1:${ports.apiserver}`;
    const peer = `http://127.0.0.1:${ports.etcdPeer}`;
    const base = {
      dir,
      kubernetesVersion: binaries.kubernetesVersion,
      ports,
      pids: {},
      pki,
      token,
      server,
      etcdUrl,
    };
    const cmKubeconfig = join(dir, 'controller-manager.kubeconfig');
    const argv: Record<Component, string[]> = {
      etcd: [
        binaries.etcd,
        '--name=raven',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=raven=${peer}`,
        // A throwaway test store: skipping fsync makes every write ~10x cheaper on a shared disk.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      apiserver: [
        binaries.apiserver,
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${ports.apiserver}`,
        `--tls-cert-file=${pki.serverCert}`,
        `--tls-private-key-file=${pki.serverKey}`,
        `--client-ca-file=${pki.caCert}`,
        `--service-account-key-file=${pki.serviceAccountPub}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--token-auth-file=${join(dir, 'pki', 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        `--service-cluster-ip-range=${options.serviceClusterIpRange ?? '10.96.0.0/16'}`,
        // The apiserver cannot publish a loopback address as the kubernetes Service endpoint.
        '--endpoint-reconciler-type=none',
        '--allow-privileged=true',
        '--profiling=false',
        `--cert-dir=${join(dir, 'pki')}`,
        `--feature-gates=${Object.entries(gates)
          .map(([gate, on]) => `${gate}=${String(on)}`)
          .join(',')}`,
        '--v=1',
      ],
      controllerManager: [
        binaries.controllerManager,
        `--kubeconfig=${cmKubeconfig}`,
        `--authentication-kubeconfig=${cmKubeconfig}`,
        `--authorization-kubeconfig=${cmKubeconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.controllerManager}`,
        `--cert-dir=${join(dir, 'pki', 'controller-manager')}`,
        '--leader-elect=false',
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        `--root-ca-file=${pki.caCert}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        '--use-service-account-credentials=true',
        '--controllers=*,-node-lifecycle-controller,-cloud-node-lifecycle-controller',
        '--v=1',
      ],
    };
    const kubeconfig = join(dir, 'kubeconfig');
    const state: ControlPlaneState = { ...base, argv, kubeconfig };
    await writeFile(kubeconfig, kubeconfigYaml(base), { mode: 0o600 });
    await writeFile(cmKubeconfig, controllerManagerKubeconfig(base), { mode: 0o600 });
    const plane = new ControlPlane(state);
    try {
      log('starting etcd');
      await plane.launch('etcd');
      await plane.waitFor('etcd', () => plane.etcdHealthy(), READY_MS);
      log('starting kube-apiserver');
      await plane.launch('apiserver');
      await plane.waitFor('apiserver', () => plane.apiserverReady(), READY_MS);
      log('starting kube-controller-manager');
      await plane.launch('controllerManager');
      await plane.waitFor('controllerManager', () => plane.controllerManagerHealthy(), READY_MS);
    } catch (err) {
      await plane.stop();
      throw err;
    }
    return plane;
  }

  /** Stop every process this control plane started; the state directory is kept for its logs. */
  async stop(): Promise<void> {
    for (const component of ['controllerManager', 'apiserver', 'etcd'] as const) await this.kill(component);
    await this.save();
  }

  /** Stop the apiserver and start it again on the same port; resolves when it is ready again. */
  async restartApiserver(options: { downMs?: number } = {}): Promise<void> {
    await this.kill('apiserver');
    if (options.downMs) await new Promise((r) => setTimeout(r, options.downMs));
    await this.launch('apiserver');
    await this.waitFor('apiserver', () => this.apiserverReady(), READY_MS);
  }

  /**
   * Stop the apiserver and start it again on a new free port, as a local cluster restarted on
   * another port is: the kubeconfig file is rewritten with the new address (the controller
   * manager's is not: it keeps failing to reach the old one). Resolves with the new port when the
   * apiserver is ready.
   */
  async moveApiserver(options: { downMs?: number; kubeconfigAheadMs?: number } = {}): Promise<number> {
    await this.kill('apiserver');
    if (options.downMs) await new Promise((r) => setTimeout(r, options.downMs));
    const [port] = await freePorts(1);
    if (port === undefined) throw new Error('no free port for the apiserver');
    const argv = this.state.argv.apiserver.map((a) =>
      a.startsWith('--secure-port=') ? `--secure-port=${port}` : a,
    );
    this.state.argv.apiserver = argv;
    this.state.ports.apiserver = port;
    this.state.server = `https://127.0.0.1:${port}`;
    await writeFile(this.state.kubeconfig, kubeconfigYaml(this.state), { mode: 0o600 });
    // The kubeconfig names the new address this long before anything listens there.
    if (options.kubeconfigAheadMs) await new Promise((r) => setTimeout(r, options.kubeconfigAheadMs));
    await this.launch('apiserver');
    await this.waitFor('apiserver', () => this.apiserverReady(), READY_MS);
    return port;
  }

  /** Compact etcd at its current revision: every older resourceVersion becomes 410 Expired. */
  async compactEtcd(): Promise<string> {
    const range = await this.etcdPost('/v3/kv/range', { key: Buffer.from('/').toString('base64') });
    const revision = (range as { header?: { revision?: string } }).header?.revision;
    if (revision === undefined) throw new Error(`etcd returned no revision: ${JSON.stringify(range)}`);
    await this.etcdPost('/v3/kv/compaction', { revision, physical: true });
    return revision;
  }

  /** Paths of the components' log files. */
  logFile(component: Component): string {
    return join(this.state.dir, 'logs', `${component}.log`);
  }

  /** Whether every component this plane started is still running. */
  running(): Record<Component, boolean> {
    const { pids } = this.state;
    return {
      etcd: isAlive(pids.etcd ?? 0),
      apiserver: isAlive(pids.apiserver ?? 0),
      controllerManager: isAlive(pids.controllerManager ?? 0),
    };
  }

  private async launch(component: Component): Promise<void> {
    const [command, ...args] = this.state.argv[component];
    if (command === undefined) throw new Error(`no command for ${component}`);
    const out = openSync(this.logFile(component), 'a');
    this.#logStart[component] = fstatSync(out).size;
    const child = spawn(command, args, { detached: true, stdio: ['ignore', out, out] });
    closeSync(out);
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${component} (${command})`);
    this.state.pids[component] = child.pid;
    await this.save();
  }

  /** Stop `component`: SIGTERM, and SIGKILL if it lingers (at once with `force`). */
  private async kill(component: Component, { force = false } = {}): Promise<void> {
    const pid = this.state.pids[component];
    if (pid === undefined) return;
    if (isAlive(pid)) {
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + (force ? 0 : 15_000);
      while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await new Promise((r) => setTimeout(r, 20));
    }
    this.state.pids = Object.fromEntries(
      Object.entries(this.state.pids).filter(([name]) => name !== component),
    );
    await this.save();
  }

  private async save(): Promise<void> {
    await writeFile(join(this.state.dir, 'state.json'), JSON.stringify(this.state, null, 2));
  }

  private async waitFor(
    component: Component,
    probe: () => Promise<boolean>,
    timeoutMs: number,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const alive = isAlive(this.state.pids[component] ?? 0);
      // A component that cannot bind may linger for minutes before it exits (kube-apiserver waits
      // out its shutdown): its log says so at once.
      const output = await this.outputSinceLaunch(component);
      const portTaken = output.includes('address already in use');
      if (!alive || portTaken) {
        const tail = output.split('\n').slice(-30).join('\n');
        const what = portTaken ? 'could not bind its port' : 'exited during start-up';
        const message = `${component} ${what}; last lines of ${this.logFile(component)}:\n${tail}`;
        if (!portTaken) throw new Error(message);
        await this.kill(component, { force: true });
        throw new PortTakenError(message);
      }
      if (await probe().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(
      `${component} was not ready within ${timeoutMs / 1000} s; see ${this.logFile(component)}`,
    );
  }

  /** What `component` has written to its log since it was last launched. */
  private async outputSinceLaunch(component: Component): Promise<string> {
    const log = await readFile(this.logFile(component)).catch(() => Buffer.alloc(0));
    return log.subarray(this.#logStart[component] ?? 0).toString('utf8');
  }

  private etcdHealthy(): Promise<boolean> {
    return new Promise((resolve) => {
      const req = httpRequest(`${this.state.etcdUrl}/health`, { timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
  }

  private async etcdPost(path: string, body: unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${this.state.etcdUrl}${path}`, { method: 'POST', timeout: 30_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`etcd ${path}: ${res.statusCode} ${text}`));
          else resolve(JSON.parse(text));
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }

  /** A request to the apiserver as admin (client certificate); resolves with status and body text. */
  async adminRequest(
    method: string,
    path: string,
    body?: unknown,
    contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
    // An idle timeout, a safety net for a request that hangs; a busy apiserver can take seconds to answer.
    timeoutMs = 60_000,
  ): Promise<{ status: number; body: string }> {
    const [ca, cert, key] = await Promise.all([
      readFile(this.state.pki.caCert),
      readFile(this.state.pki.adminCert),
      readFile(this.state.pki.adminKey),
    ]);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const headers = payload === undefined ? {} : { 'content-type': contentType };
      const req = httpsRequest(
        `${this.state.server}${path}`,
        { method, ca, cert, key, headers, timeout: timeoutMs },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${path}`)));
      req.end(payload);
    });
  }

  private async apiserverReady(): Promise<boolean> {
    // Polled until ready: a probe that hangs (something else took the port) is given up and retried.
    // The idle timeout can run twice (connect, then the TLS handshake): 10 s at most.
    const { status } = await this.adminRequest('GET', '/readyz', undefined, undefined, 5_000);
    return status === 200;
  }

  private controllerManagerHealthy(): Promise<boolean> {
    return new Promise((resolve) => {
      const url = `https://127.0.0.1:${this.state.ports.controllerManager}/healthz`;
      // Its serving certificate is self-signed at start-up; this probe only asks whether it is up.
      const req = httpsRequest(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
  }
}
