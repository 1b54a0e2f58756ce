/**
 * One sharded `raven run` replica for the sharding benchmark: the CLI from dist/ (or
 * RAVEN_BENCH_DIST) in a process of its own, as an operator runs it. Its stdout carries a stdout
 * sink's JSON lines, which are only counted; its stderr is read as the daemon's JSON log lines.
 *
 * Everything measured is read from outside the process, so measuring costs the replica nothing:
 * CPU (user + system) and bytes read (`rchar`: every read the process made, from the apiserver,
 * PostgreSQL and anything else) from /proc, the peak RSS from /proc, and the heap in use from its
 * own /metrics, read once at the end. Every replica still running when the suite's process exits
 * is killed, so a failed run never leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { processCpuMs, processPeakRssMb, processReadBytes, processWakeUps } from '../lib/proc.js';
import { daemonNodeFlags, ravenDist } from '../lib/raven.js';

/** One line of the daemon's log (pino JSON): `msg` and whatever fields it carried. */
export interface LogLine {
  msg: string;
  [field: string]: unknown;
}

/** Cumulative counters of the process since it started. */
export interface Usage {
  cpuMs: number;
  readBytes: number;
  /** The event loop's wake-ups (`processWakeUps`). */
  wakeUps: number;
}

export const MESSAGE = {
  watching: 'watching this replica’s parts of the hash space',
  server: 'the server filters by the shard selector',
  // Both the answer without an echo and a probe that failed leave the replica filtering by hash.
  client: /filtering by hash before parsing/,
  serving: 'serving /healthz, /readyz and /metrics',
} as const;

/** How long a replica may take to leave its group and exit after SIGTERM: a safety net. */
const STOP_MS = 15_000;

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class Replica {
  readonly identity: string;
  readonly logs: LogLine[] = [];
  readonly exited: Promise<void>;
  readonly #child: ChildProcess;
  readonly #pid: number;
  #lines = 0;
  #stderr = '';
  #done = false;

  private constructor(identity: string, child: ChildProcess) {
    this.identity = identity;
    this.#child = child;
    this.#pid = child.pid ?? 0;
    running.add(child);
    child.stdout?.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.#lines++;
    });
    let pending = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-8000);
      const parts = (pending + text).split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) {
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          // Not a log line (an error printed by the CLI): kept in the stderr tail.
        }
      }
    });
    // 'close', not 'exit': the last output may still be in the pipes when the process has exited.
    this.exited = new Promise((resolve) =>
      child.on('close', () => {
        this.#done = true;
        running.delete(child);
        resolve();
      }),
    );
  }

  /**
   * Start `raven run -c <config>` under `node` with this identity (RAVEN_IDENTITY in the config),
   * with RAVEN_BENCH_DAEMON_NODE_FLAGS if set.
   */
  static start(node: string, config: string, identity: string, kubeconfig: string): Replica {
    const main = fileURLToPath(new URL('cli/main.js', ravenDist));
    const child = spawn(node, [...daemonNodeFlags(), main, 'run', '-c', config], {
      env: { ...process.env, KUBECONFIG: kubeconfig, RAVEN_IDENTITY: identity, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Replica(identity, child);
  }

  /** Lines its stdout sink wrote: one per change delivered. */
  get lines(): number {
    return this.#lines;
  }

  get exitedYet(): boolean {
    return this.#done;
  }

  /** The end of its stderr, for failure messages. */
  stderrTail(chars = 1500): string {
    return this.#stderr.slice(-chars).trim();
  }

  /** Whether its last assignment was among exactly `members` and it has synced since. */
  watchingAmong(members: readonly string[]): boolean {
    const want = [...members].sort().join(',');
    const last = this.logs.findLastIndex((l) => l.msg === MESSAGE.watching);
    const line = this.logs[last];
    if (line === undefined || !Array.isArray(line.members)) return false;
    return (
      [...(line.members as string[])].sort().join(',') === want &&
      this.logs.slice(last).some((l) => l.msg === 'synced')
    );
  }

  /** Whether a watcher has synced (an unsharded replica). */
  synced(): boolean {
    return this.logs.some((l) => l.msg === 'synced');
  }

  /** How it filters, as the server's answer to its probe showed; undefined before the probe. */
  filtering(): 'server' | 'client' | undefined {
    if (this.logs.some((l) => l.msg === MESSAGE.server)) return 'server';
    if (this.logs.some((l) => MESSAGE.client.test(l.msg))) return 'client';
    return undefined;
  }

  /** CPU time, bytes read and event-loop wake-ups so far, from /proc. */
  async usage(): Promise<Usage> {
    const [cpuMs, readBytes, wakeUps] = await Promise.all([
      processCpuMs(this.#pid),
      processReadBytes(this.#pid),
      processWakeUps(this.#pid),
    ]);
    return { cpuMs, readBytes, wakeUps };
  }

  /** The peak resident set size of the whole process so far (VmHWM), in bytes. */
  async peakRssBytes(): Promise<number> {
    return (await processPeakRssMb(this.#pid)) * 2 ** 20;
  }

  /** The V8 heap in use now, from the daemon's own metrics (`server: { port: 0 }`). */
  async heapUsedBytes(): Promise<number> {
    const url = this.logs.find((l) => l.msg === MESSAGE.serving)?.url;
    if (typeof url !== 'string') throw new Error(`${this.identity} never logged its metrics address`);
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = /^raven_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    if (value === undefined) throw new Error(`${this.identity}: no raven_nodejs_heap_size_used_bytes`);
    return Number(value);
  }

  /**
   * SIGTERM: it stops watching, drains, writes its checkpoint, leaves its group and exits; one
   * that has not exited by the safety net is killed.
   */
  async stop(): Promise<void> {
    if (this.#done) return;
    this.#child.kill('SIGTERM');
    const deadline = performance.now() + STOP_MS;
    while (!this.exitedYet && performance.now() < deadline) await delay(50);
    if (!this.exitedYet) this.#child.kill('SIGKILL');
    await this.exited;
  }
}
