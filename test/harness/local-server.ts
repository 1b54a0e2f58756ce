/**
 * A server (PostgreSQL, nats-server, redis-server from Debian's packages; Grafana Loki) run by a
 * test on a free loopback port with all its state in a temporary directory: started, stopped (its
 * listener closes: connections are refused) and started again on the same port with the same
 * data, as a real outage and recovery. Output goes to `<dir>/<name>.log`; the process is killed
 * when the test process exits, so a failed test never leaves a server running.
 *
 * `TestServer` is what the per-server classes (PostgresServer, NatsServer, RedisServer,
 * LokiServer) share: down() and up() for an outage, stop() to end it and remove its directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePorts } from './ports.js';

/**
 * How long a server may take to serve before up() gives up: a safety net for a stuck server, far
 * above the seconds each needs on a loaded machine (Loki, the slowest, joins its ring in a few).
 */
const READY_MS = 180_000;

export interface LocalServerSpec {
  /** For logs and messages: `postgres`, `nats`, `redis`. */
  name: string;
  /** The command line to start it listening on 127.0.0.1:`port`. */
  argv: (port: number) => string[];
  /** Run as this user and group (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  env?: NodeJS.ProcessEnv;
  /** Signal that shuts it down cleanly; default SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /**
   * Whether it serves, not only accepts connections (most open their listener before they have
   * recovered their data): rejects while it does not; up() asks again every 100 ms.
   */
  ready?: (port: number) => Promise<void>;
}

/** A temporary directory for a test server's state: `raven-test-<name>-XXXXXX`. */
export function serverDir(name: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `raven-test-${name}-`));
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class LocalServer {
  readonly port: number;
  readonly dir: string;
  readonly #spec: LocalServerSpec;
  #child: ChildProcess | undefined;
  #exited: Promise<void> | undefined;

  private constructor(spec: LocalServerSpec, dir: string, port: number) {
    this.#spec = spec;
    this.dir = dir;
    this.port = port;
  }

  /** Start on a free port; resolves once it accepts connections. */
  static async start(spec: LocalServerSpec, dir: string): Promise<LocalServer> {
    const [port] = await freePorts(1);
    if (port === undefined) throw new Error('no free port');
    const server = new LocalServer(spec, dir, port);
    await server.up();
    return server;
  }

  get logFile(): string {
    return join(this.dir, `${this.#spec.name}.log`);
  }

  /** The server's log so far (for failure messages). */
  async log(): Promise<string> {
    return readFile(this.logFile, 'utf8').catch(() => '');
  }

  /** Start (again) on the same port; resolves once it accepts connections and is ready. */
  async up(): Promise<void> {
    if (this.#child !== undefined) return;
    const [command, ...args] = this.#spec.argv(this.port);
    if (command === undefined) throw new Error(`${this.#spec.name}: empty command`);
    const out = openSync(this.logFile, 'a');
    const child = spawn(command, args, {
      stdio: ['ignore', out, out],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...this.#spec.env },
      cwd: this.dir,
      ...(this.#spec.uid === undefined ? {} : { uid: this.#spec.uid }),
      ...(this.#spec.gid === undefined ? {} : { gid: this.#spec.gid }),
    });
    closeSync(out);
    running.add(child);
    this.#child = child;
    const state = { exited: false };
    this.#exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        state.exited = true;
        running.delete(child);
        resolve();
      }),
    );
    const deadline = Date.now() + READY_MS;
    while (!(await accepts(this.port))) {
      if (state.exited) {
        this.#child = undefined;
        throw new Error(`${this.#spec.name} exited while starting:\n${await this.log()}`);
      }
      if (Date.now() > deadline)
        throw new Error(
          `${this.#spec.name} not accepting connections after ${READY_MS} ms:\n${await this.log()}`,
        );
      await delay(100);
    }
    const ready = this.#spec.ready;
    if (ready === undefined) return;
    for (;;) {
      try {
        await ready(this.port);
        return;
      } catch (err) {
        if (state.exited) {
          this.#child = undefined;
          throw new Error(`${this.#spec.name} exited while starting:\n${await this.log()}`);
        }
        if (Date.now() > deadline)
          throw new Error(
            `${this.#spec.name} not ready after ${READY_MS} ms (${String(err)}):\n${await this.log()}`,
          );
        await delay(100);
      }
    }
  }

  /** Shut down cleanly and wait for the process to end: connections are refused from then on. */
  async down(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill(this.#spec.stopSignal ?? 'SIGTERM');
    await this.#exited;
    this.#child = undefined;
  }

  /** Kill without a clean shutdown (a crash). */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill('SIGKILL');
    await this.#exited;
    this.#child = undefined;
  }

  /** Shut down and remove its directory. */
  async stop(): Promise<void> {
    await this.down();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The shared part of a test's own server: its LocalServer, an outage by down() and up(). */
export class TestServer {
  readonly server: LocalServer;

  protected constructor(server: LocalServer) {
    this.server = server;
  }

  /** Shut down cleanly: connections are refused until up(). */
  async down(): Promise<void> {
    await this.server.down();
  }

  /** Start again on the same port with the same data; resolves once it serves. */
  async up(): Promise<void> {
    await this.server.up();
  }

  /** Shut down and remove everything it stored. */
  async stop(): Promise<void> {
    await this.server.stop();
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
  });
}
