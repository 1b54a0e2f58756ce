/**
 * What a benchmark run measures inside its own process: wall time, CPU time (user + system), peak
 * RSS (`VmHWM`), peak heap, and how long the event loop stalled. Heap and stalls are sampled on a timer, so
 * they are as coarse as its period; the timers run for every contestant alike.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { ownPeakRssMb } from './proc.js';

export interface Measurement {
  ms: number;
  cpuMs: number;
  /** The kernel's part of cpuMs (page faults, system calls). */
  systemCpuMs: number;
  /** The process's own peak resident set (`VmHWM`), runtime included: see `processPeakRssMb`. */
  peakRssMb: number;
  peakHeapMb: number;
  /** monitorEventLoopDelay max. */
  maxDelayMs: number;
  /** Longest lateness of a 10 ms interval timer. */
  maxLagMs: number;
  /**
   * The most CPU the main thread spent between two ticks of that timer: the longest the program
   * itself held the event loop, apart from time the OS gave to other processes (a lateness is
   * wall time, and on a loaded machine much of it can be spent descheduled). Needs
   * `process.threadCpuUsage` (Node 23.9 and later); undefined before.
   */
  maxBlockCpuMs?: number;
  /** The main thread's CPU during the tick that was latest (maxLagMs). */
  lagCpuMs?: number;
  /** The main thread's CPU over the whole run (cpuMs less V8's and libuv's helper threads). */
  threadCpuMs?: number;
}

type ThreadCpu = () => NodeJS.CpuUsage;
const threadCpu = (process as { threadCpuUsage?: ThreadCpu }).threadCpuUsage?.bind(process);
const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

const SAMPLE_MS = 10;

export class Meter {
  readonly #t0 = performance.now();
  readonly #cpu0 = process.cpuUsage();
  readonly #threadCpu0 = threadCpu === undefined ? 0 : cpuMs(threadCpu());
  readonly #delay = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  readonly #timer: NodeJS.Timeout;
  #last = performance.now();
  #maxLag = 0;
  #lagCpu = 0;
  #lastThreadCpu = threadCpu === undefined ? 0 : cpuMs(threadCpu());
  #maxBlockCpu = 0;
  #peakHeap = process.memoryUsage().heapUsed;

  constructor() {
    this.#delay.enable();
    this.#timer = setInterval(() => {
      const now = performance.now();
      const lag = now - this.#last - SAMPLE_MS;
      const thread = threadCpu === undefined ? 0 : cpuMs(threadCpu());
      const busy = thread - this.#lastThreadCpu;
      if (lag > this.#maxLag) {
        this.#maxLag = lag;
        this.#lagCpu = busy;
      }
      this.#maxBlockCpu = Math.max(this.#maxBlockCpu, busy);
      this.#lastThreadCpu = thread;
      this.#last = now;
      this.#peakHeap = Math.max(this.#peakHeap, process.memoryUsage().heapUsed);
    }, SAMPLE_MS);
  }

  /** Milliseconds since the meter started. */
  elapsed(): number {
    return performance.now() - this.#t0;
  }

  stop(): Measurement {
    const ms = this.elapsed();
    const cpu = process.cpuUsage(this.#cpu0);
    clearInterval(this.#timer);
    this.#delay.disable();
    this.#peakHeap = Math.max(this.#peakHeap, process.memoryUsage().heapUsed);
    return {
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      systemCpuMs: cpu.system / 1000,
      peakRssMb: ownPeakRssMb(),
      peakHeapMb: this.#peakHeap / 2 ** 20,
      maxDelayMs: this.#delay.max / 1e6,
      maxLagMs: this.#maxLag,
      ...(threadCpu === undefined
        ? {}
        : {
            maxBlockCpuMs: this.#maxBlockCpu,
            lagCpuMs: this.#lagCpu,
            threadCpuMs: cpuMs(threadCpu()) - this.#threadCpu0,
          }),
    };
  }
}
