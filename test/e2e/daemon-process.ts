/**
 * `raven run` as an operator runs it, for the daemon's end-to-end tests: a child process started
 * with `node --import tsx src/cli/main.ts run -c <config>`, its stdout split into lines (a stdout
 * sink's JSON events), its stderr parsed as the daemon's JSON log lines. Every child is killed when
 * the test process exits, so a failed assertion never leaves a daemon running.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlPlane } from '../harness/control-plane.js';
import { HttpReceiver, type ReceivedRequest } from '../harness/http-receiver.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

const root = resolve(import.meta.dirname, '..', '..');

/**
 * How long a wait goes on before it fails with what it saw: a safety net for a stuck daemon, far
 * above the seconds a daemon needs to start or deliver on a loaded machine. No pass depends on it.
 */
import { GIVE_UP_MS, until } from '../harness/until.js';

export { until };

/** One line of the daemon's log (pino JSON): `msg`, `level` and whatever fields it carried. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RavenProcess {
  readonly pid: number | undefined;
  /** Complete stdout lines so far. */
  readonly stdout: string[];
  /** Parsed stderr log lines so far. */
  readonly logs: LogLine[];
  /** All of stderr, including lines that were not JSON. */
  stderr(): string;
  readonly exited: Promise<Exit>;
  /** Whether the process has exited. */
  readonly exitedYet: () => boolean;
  kill(signal: NodeJS.Signals): void;
  /** The first log line with this message (waiting for it). */
  waitForLog(msg: string | RegExp, count?: number, timeoutMs?: number): Promise<LogLine>;
}

const children = new Set<{ kill: (s: NodeJS.Signals) => boolean }>();
/** Every raven this file started, in order: a folder from tempDir stops those started after it. */
const started = new Set<RavenProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface StartOptions {
  kubeconfig?: string;
  env?: Record<string, string>;
  /**
   * The program and its arguments before raven's, instead of `node --import tsx src/cli/main.ts`
   * (e.g. `podman run ... IMAGE`, whose entrypoint is raven).
   */
  command?: readonly [string, ...string[]];
  /** The working directory; default the repository's root (the default command's path is relative to it). */
  cwd?: string;
}

/**
 * `raven <command> -c examples/configs/<name>` against the test control plane: its kubeconfig and
 * context replace the example's.
 */
export function exampleArgs(command: 'run' | 'check', name: string, kubeconfig: string): string[] {
  const args = [command, '-c', join(root, 'examples', 'configs', name), '--kubeconfig', kubeconfig];
  return [...args, '--context', 'raven-local'];
}

/** Start `raven <args>` with the control plane's kubeconfig. */
export function startRaven(args: string[], options: StartOptions = {}): RavenProcess {
  const [program, ...before] = options.command ?? [process.execPath, '--import', 'tsx', 'src/cli/main.ts'];
  const child = spawn(program, [...before, ...args], {
    cwd: options.cwd ?? root,
    env: {
      ...process.env,
      ...(options.kubeconfig === undefined ? {} : { KUBECONFIG: options.kubeconfig }),
      NO_COLOR: '1',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const stdout: string[] = [];
  const logs: LogLine[] = [];
  let stderr = '';
  let outBuffer = '';
  let errBuffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    outBuffer += chunk;
    const parts = outBuffer.split('\n');
    outBuffer = parts.pop() ?? '';
    stdout.push(...parts);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    errBuffer += chunk;
    const parts = errBuffer.split('\n');
    errBuffer = parts.pop() ?? '';
    for (const line of parts) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line (an error message printed by the CLI): kept in stderr().
      }
    }
  });
  let done = false;
  // 'close', not 'exit': the child's last output may still be in the pipes when it has exited.
  const exited = new Promise<Exit>((resolveExit) =>
    child.on('close', (code, signal) => {
      done = true;
      children.delete(child);
      resolveExit({ code, signal });
    }),
  );
  const matches = (line: LogLine, msg: string | RegExp): boolean =>
    typeof msg === 'string' ? line.msg === msg : msg.test(line.msg);
  const raven: RavenProcess = {
    pid: child.pid,
    stdout,
    logs,
    stderr: () => stderr,
    exited,
    exitedYet: () => done,
    kill: (signal) => {
      if (!done) child.kill(signal);
    },
    waitForLog: async (msg, count = 1, timeoutMs = GIVE_UP_MS) => {
      const found = (): LogLine | undefined => logs.filter((l) => matches(l, msg))[count - 1];
      await until(`log "${String(msg)}" x${count}`, () => found() !== undefined || done, {
        timeoutMs,
        show: () => stderr,
      });
      const line = found();
      assert.ok(line, `the daemon exited before logging "${String(msg)}":\n${stderr}`);
      return line;
    },
  };
  started.add(raven);
  return raven;
}

/** Run `raven <args>` to the end. */
export async function runRaven(
  args: string[],
  options: StartOptions = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const raven = startRaven(args, options);
  const exit = await raven.exited;
  return { ...exit, stdout: raven.stdout.join('\n'), stderr: raven.stderr() };
}

/** A temporary directory removed after the test. */
export async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-daemon-'));
  const before = new Set(started);
  // Hooks run in the order they were added, so this one runs before the test's own kill of a
  // raven started in the folder: a raven still writing there made the removal fail (ENOTEMPTY),
  // and a failed hook skips the hooks after it, leaving the raven running and the file hung. So
  // the ravens started since are stopped first, and the removal retries.
  t.after(async () => {
    const since = [...started].filter((raven) => !before.has(raven));
    for (const raven of since) raven.kill('SIGKILL');
    await Promise.all(since.map((raven) => raven.exited));
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  return dir;
}

/** Write `raven.yaml` in `dir`; returns its path. */
export async function writeConfig(dir: string, yaml: string, name = 'raven.yaml'): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, yaml);
  return path;
}

/** The health server's URL, from the start-up log line (the config uses `server.port: 0`). */
export async function healthUrl(raven: RavenProcess): Promise<string> {
  const line = await raven.waitForLog('serving /healthz, /readyz and /metrics');
  assert.equal(typeof line.url, 'string', 'the start-up line carries the url');
  return line.url as string;
}

/** GET `url` from the health server: status and body text (status 0 when nothing answers). */
export async function httpGet(url: string): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(url);
    return { status: res.status, body: await res.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

/** Resolves with the health server's URL once /readyz answers 200. */
export async function waitReady(raven: RavenProcess): Promise<string> {
  const url = await healthUrl(raven);
  const deadline = Date.now() + GIVE_UP_MS;
  let last = { status: 0, body: '' };
  while (Date.now() < deadline && !raven.exitedYet()) {
    last = await httpGet(`${url}/readyz`);
    if (last.status === 200) return url;
    await delay(100);
  }
  assert.fail(
    `the daemon never became ready (last /readyz: ${last.status} ${last.body}):\n${raven.stderr()}`,
  );
}

/** A driver request to the apiserver that must succeed; resolves with the parsed answer. */
export async function ok<T = KubeAnswer>(call: Promise<{ status: number; body: string }>): Promise<T> {
  const { status, body } = await call;
  assert.ok(status >= 200 && status < 300, `driver request failed: ${status} ${body}`);
  return JSON.parse(body) as T;
}

export interface KubeAnswer {
  metadata: { name: string; namespace?: string; uid: string; resourceVersion: string };
}

/** The parts of a delivered ChangeEvent the tests look at. */
export interface DeliveredEvent {
  id: string;
  watcher: string;
  type: 'added' | 'modified' | 'deleted';
  origin: 'live' | 'relist' | 'restart' | 'resync';
  resource: { group: string; version: string; resource: string; kind: string };
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  object: { metadata?: Record<string, unknown>; data?: Record<string, string> } & Record<string, unknown>;
  previous?: unknown;
  diff: { path: string; op: string; old?: unknown; new?: unknown }[];
  tombstone: boolean;
  time: string;
}

/** Parse JSON lines (blank lines skipped). */
export function jsonLines<T = DeliveredEvent>(lines: readonly string[]): T[] {
  return lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
}

/** Compare resourceVersions of one object (etcd revisions: decimal integers). */
export function rvCompare(a: string | undefined, b: string | undefined): number {
  const x = BigInt(a ?? '0');
  const y = BigInt(b ?? '0');
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * What most daemon tests start from: the shared control plane, a fresh namespace (deleted after),
 * a temporary directory for the config and state, and a local HTTP receiver (closed after).
 */
export async function daemonFixture(
  t: TestContext,
): Promise<{ plane: ControlPlane; ns: string; dir: string; hook: HttpReceiver }> {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  const hook = await HttpReceiver.start();
  t.after(() => hook.close());
  return { plane, ns, dir, hook };
}

/** The event id a webhook delivery carries (the same on every copy of one change). */
export function eventIdOf(request: ReceivedRequest): string {
  return String(request.headers['x-raven-event-id']);
}

/** What a receiver that deduplicates on the event id processes: the first copy of each id. */
export function processedOnce(requests: readonly ReceivedRequest[]): ReceivedRequest[] {
  const seen = new Set<string>();
  return requests.filter((r) => {
    const id = eventIdOf(r);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
