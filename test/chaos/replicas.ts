/**
 * The `raven run` processes of a chaos run, by identity (`r0`, `r1`, ...): started with the run's
 * config and the kubeconfig that points at the TCP proxy, stopped by signal, started again under
 * the same identity. Every process's log is kept (one entry per process, not per identity) for the
 * hand-over figures, with the time it started and ended.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startRaven, type RavenProcess } from '../e2e/daemon-process.js';
import type { ReplicaLog } from './blind-spot.js';

/** A safety net for a SIGTERMed replica that does not finish draining: it is then SIGKILLed. */
const TERM_GRACE_MS = 60_000;

interface Run {
  identity: string;
  process: RavenProcess;
  startedAt: number;
  endedAt?: number;
  /** The run stopped it (a fault or the end), as opposed to an exit of its own. */
  stopped?: boolean;
}

export class ReplicaPool {
  readonly #runs: Run[] = [];

  constructor(
    private readonly config: string,
    private readonly kubeconfig: string,
    private readonly log: (line: string) => void,
  ) {}

  start(identity: string): RavenProcess {
    if (this.#current(identity) !== undefined) throw new Error(`replica ${identity} is already running`);
    const process = startRaven(['run', '-c', this.config], {
      kubeconfig: this.kubeconfig,
      env: { RAVEN_IDENTITY: identity },
    });
    const run: Run = { identity, process, startedAt: Date.now() };
    this.#runs.push(run);
    void process.exited.then((exit) => {
      run.endedAt ??= Date.now();
      const how = exit.signal ?? `status ${String(exit.code)}`;
      if (run.stopped === true) this.log(`replica ${identity} exited (${how})`);
      else
        this.log(
          `replica ${identity} exited on its own (${how}); its last output:\n${process.stderr().slice(-3000)}`,
        );
    });
    this.log(`replica ${identity} started`);
    return process;
  }

  /** Stop `identity` with `signal`; resolves once it has exited. */
  async stop(identity: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const run = this.#current(identity);
    if (run === undefined) return;
    run.stopped = true;
    // A SIGKILLed replica stops watching at once; a SIGTERMed one when it has drained (its exit).
    if (signal === 'SIGKILL') run.endedAt = Date.now();
    run.process.kill(signal);
    const timer =
      signal === 'SIGTERM'
        ? setTimeout(() => {
            this.log(`replica ${identity} still draining after ${TERM_GRACE_MS} ms: SIGKILL`);
            run.process.kill('SIGKILL');
          }, TERM_GRACE_MS)
        : undefined;
    await run.process.exited;
    clearTimeout(timer);
    run.endedAt ??= Date.now();
  }

  async stopAll(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    await Promise.all(this.running().map((id) => this.stop(id, signal)));
  }

  /** Identities whose process exited without being stopped by the run. */
  crashed(): string[] {
    return this.#runs.filter((r) => r.endedAt !== undefined && r.stopped !== true).map((r) => r.identity);
  }

  /** Identities with a process that has not ended. */
  running(): string[] {
    return [...new Set(this.#runs.filter((r) => r.endedAt === undefined).map((r) => r.identity))].sort();
  }

  /** When a running process last logged anything (or started, if it has not logged yet). */
  lastLogAt(): number {
    let last = 0;
    for (const r of this.#runs.filter((run) => run.endedAt === undefined)) {
      const time = r.process.logs.at(-1)?.time;
      last = Math.max(last, r.startedAt, typeof time === 'number' ? time : 0);
    }
    return last;
  }

  /** The running process of `identity`. */
  process(identity: string): RavenProcess | undefined {
    return this.#current(identity)?.process;
  }

  /** Every process's log so far. */
  logs(): ReplicaLog[] {
    return this.#runs.map((r) => ({
      identity: r.identity,
      lines: r.process.logs.map((l) => ({
        msg: l.msg,
        ...(typeof l.time === 'number' ? { time: l.time } : {}),
        ...(Array.isArray(l.parts) ? { parts: l.parts as number[] } : {}),
      })),
      startedAt: r.startedAt,
      ...(r.endedAt === undefined ? {} : { endedAt: r.endedAt }),
    }));
  }

  /** The last lines of every process's stderr, for a report on something stuck. */
  tails(chars = 3000): string {
    return this.#runs
      .map((r) => `--- ${r.identity} (pid ${String(r.process.pid)}):\n${r.process.stderr().slice(-chars)}`)
      .join('\n');
  }

  /** Write each process's stderr to `<dir>/<identity>-<n>.log`, n counting its starts. */
  async writeLogs(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    const starts = new Map<string, number>();
    for (const r of this.#runs) {
      const n = (starts.get(r.identity) ?? 0) + 1;
      starts.set(r.identity, n);
      await writeFile(join(dir, `${r.identity}-${n}.log`), r.process.stderr());
    }
  }

  /** The /metrics URL of each running process that has logged it. */
  metricsUrls(): string[] {
    return this.#runs
      .filter((r) => r.endedAt === undefined)
      .map((r) => r.process.logs.find((l) => l.msg === 'serving /healthz, /readyz and /metrics')?.url)
      .filter((u): u is string => typeof u === 'string')
      .map((u) => `${u}/metrics`);
  }

  #current(identity: string): Run | undefined {
    return this.#runs.find((r) => r.identity === identity && r.endedAt === undefined);
  }
}
