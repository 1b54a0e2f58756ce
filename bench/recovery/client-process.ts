/**
 * A running contestant (bench/recovery/client.ts in its own Node process), seen from the suite:
 * when it became ready and every ticker seq its handler received, with the time it received it.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { repoRoot } from '../lib/child.js';

export interface Sighting {
  seq: number;
  at: number;
}

export class ClientProcess {
  readonly name: string;
  readonly #child: ChildProcessByStdio<null, Readable, Readable>;
  readonly sightings: Sighting[] = [];
  readyAt: number | undefined;
  /** Set when the process ended before it was killed. */
  exited: string | undefined;
  #stderr = '';
  #killed = false;

  private constructor(name: string, child: ChildProcessByStdio<null, Readable, Readable>) {
    this.name = name;
    this.#child = child;
  }

  static spawn(node: string, name: string, kubeconfig: string, namespace: string): ClientProcess {
    const child = spawn(node, ['--import', 'tsx', 'bench/recovery/client.ts', name, kubeconfig, namespace], {
      cwd: repoRoot,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = new ClientProcess(name, child);
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) proc.#line(line);
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      proc.#stderr = (proc.#stderr + s).slice(-2000);
    });
    child.on('exit', (code, signal) => {
      if (proc.#killed) return;
      const tail = proc.#stderr.trim().split('\n').slice(-4).join(' | ');
      proc.exited = `${name} exited (${signal ?? `code ${code}`}): ${tail}`;
    });
    return proc;
  }

  #line(line: string): void {
    if (!line.startsWith('EV ')) return;
    const event = JSON.parse(line.slice(3)) as { t: string; seq?: number; at: number };
    if (event.t === 'ready') this.readyAt ??= event.at;
    else if (event.t === 'saw' && event.seq !== undefined)
      this.sightings.push({ seq: event.seq, at: event.at });
  }

  /** Ready, and its handler has received a change made after it became ready: it is watching. */
  watching(sentAt: (seq: number) => number | undefined): boolean {
    const ready = this.readyAt;
    if (ready === undefined) return false;
    return this.sightings.some((s) => (sentAt(s.seq) ?? 0) >= ready);
  }

  /** The first time its handler received a change whose write was sent at or after `t`. */
  firstChangeMadeAfter(t: number, sentAt: (seq: number) => number | undefined): number | undefined {
    let first: number | undefined;
    for (const s of this.sightings) {
      const sent = sentAt(s.seq);
      if (sent !== undefined && sent >= t && (first === undefined || s.at < first)) first = s.at;
    }
    return first;
  }

  /** Where it is, for a failure message. */
  state(): string {
    const ready = this.readyAt === undefined ? 'not ready' : 'ready';
    const tail = this.#stderr.trim().split('\n').slice(-2).join(' | ');
    return `${ready}, ${this.sightings.length} changes seen${tail === '' ? '' : `; stderr: ${tail}`}`;
  }

  kill(): void {
    this.#killed = true;
    this.#child.kill('SIGKILL');
  }
}
