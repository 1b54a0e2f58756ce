/**
 * Replicas as child processes for the end-to-end tests of leader election and lease groups: each
 * runs a TypeScript entry point with `--identity`, and the test waits on its JSON log lines.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { repoRoot } from '../harness/binaries.js';

/** A safety net for each wait, far above what a handover needs on a loaded machine. */
export const giveUpMs = 120_000;

export interface LogLine {
  msg: string;
  leader?: string;
  members?: string[];
  /** When the test received the line. */
  receivedAt: number;
}

/**
 * One replica as a child process running a TypeScript entry point, with its JSON log lines (on
 * stdout) as they arrive.
 */
export class Replica {
  readonly lines: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;
  #waiters: (() => void)[] = [];

  constructor(
    readonly identity: string,
    main: string,
    args: string[],
  ) {
    this.#child = spawn(process.execPath, ['--import', 'tsx', main, '--identity', identity, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': the replica's last log lines may still be in the pipes when it has exited.
      this.#child.on('close', (code, signal) => {
        resolve({ code, signal });
        this.#wake();
      });
    });
    createInterface({ input: this.#child.stdout as NodeJS.ReadableStream }).on('line', (text) => {
      const receivedAt = Date.now();
      try {
        this.lines.push({ ...(JSON.parse(text) as Omit<LogLine, 'receivedAt'>), receivedAt });
      } catch {
        this.stderr.push(text);
      }
      this.#wake();
    });
    createInterface({ input: this.#child.stderr as NodeJS.ReadableStream }).on('line', (text) => {
      this.stderr.push(text);
    });
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.#child.kill(signal);
  }

  has(msg: string): boolean {
    return this.lines.some((l) => l.msg === msg);
  }

  /** The first line matching `match`, waiting for it up to `timeoutMs`. */
  async line(match: (line: LogLine) => boolean, what: string, timeoutMs = giveUpMs): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find(match);
      if (found !== undefined) return found;
      if (!this.running) assert.fail(`${this.identity} exited before ${what}\n${this.transcript()}`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`${this.identity}: no ${what} within ${timeoutMs} ms\n${this.transcript()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  transcript(): string {
    return [...this.lines.map((l) => JSON.stringify(l)), ...this.stderr].slice(-40).join('\n');
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
