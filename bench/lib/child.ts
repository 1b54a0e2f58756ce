/**
 * One benchmark run in a fresh Node process, so that no contestant inherits another's JIT state,
 * heap or garbage. The child prints one `RESULT <json>` line; anything else it prints is kept for
 * the error message when it fails.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const RESULT = 'RESULT ';

export type ChildOutcome<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ChildOptions {
  /** The node binary to run. */
  node: string;
  /** Path of the TypeScript entry, relative to the repository. */
  script: string;
  args: string[];
  env?: Record<string, string>;
  nodeFlags?: string[];
  timeoutMs: number;
}

/** Run a child to completion; a crash, a timeout or a missing result is a failed outcome. */
export function runChild<T>(options: ChildOptions): Promise<ChildOutcome<T>> {
  const argv = [...(options.nodeFlags ?? []), '--import', 'tsx', options.script, ...options.args];
  const child = spawn(options.node, argv, {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT));
      if (code === 0 && line !== undefined) {
        resolve({ ok: true, value: JSON.parse(line.slice(RESULT.length)) as T });
        return;
      }
      const why = signal === 'SIGKILL' ? `timed out after ${options.timeoutMs / 1000} s` : `exit ${code}`;
      const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-6).join(' | ');
      resolve({ ok: false, error: `${why}: ${tail}` });
    });
  });
}

/** In the child: print the result and exit (open sockets and timers of the peers do not hold it). */
export function reportResult(value: unknown): never {
  process.stdout.write(`${RESULT}${JSON.stringify(value)}\n`, () => process.exit(0));
  // Exits from the write callback; never returns in practice.
  return undefined as never;
}

/** In the child: print the failure and exit non-zero. */
export function reportFailure(err: unknown): void {
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`${message}\n`, () => process.exit(1));
}
