/**
 * Credentials from an exec plugin (client.authentication.k8s.io v1/v1beta1): the configured
 * command is spawned with KUBERNETES_EXEC_INFO and prints an ExecCredential on stdout.
 *
 * Guarantees: concurrent callers share one running invocation; a result is cached until its
 * `expirationTimestamp` (forever when there is none) and dropped by invalidate(); a plugin that
 * runs longer than `timeoutMs` is killed. Failures are {@link AuthError}s that say what to do:
 * the install hint when the command is missing, the trimmed stderr when it exits non-zero.
 */
import { spawn } from 'node:child_process';
import { AuthError, ConfigError } from '../../errors/raven-error.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
import type { ExecConfig } from '../kubeconfig-file.js';
import { raceSignal } from '../../util/signals.js';
import type { AuthProvider, Credentials } from './auth-provider.js';
import {
  checkExecConfig,
  execInfo,
  interactiveModeOf,
  parseExecOutput,
  type ExecClusterInfo,
  type ExecResult,
} from './exec-credential.js';

export interface ExecAuthOptions {
  exec: ExecConfig;
  /** Passed to the plugin when `exec.provideClusterInfo` is set. */
  cluster?: ExecClusterInfo;
  /** Kill the plugin after this long; default 60 000 ms. */
  timeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Base environment, default `process.env`; the stanza's `env` is merged over it. */
  env?: Record<string, string | undefined>;
  /** Whether stdin is a terminal; default `process.stdin.isTTY`. */
  stdinIsTTY?: boolean;
}

/** Keep this much of a failing plugin's stderr: enough for an error message, not a log dump. */
const maxStderr = 4096;

/**
 * Run an exec credential plugin on demand.
 *
 * @example
 * const auth = new ExecAuth({ exec: { apiVersion: 'client.authentication.k8s.io/v1',
 *   command: 'my-login', args: ['token'], env: [], provideClusterInfo: false, interactiveMode: 'Never' } });
 */
export class ExecAuth implements AuthProvider {
  readonly kind = 'exec';
  readonly #exec: ExecConfig & { apiVersion: string };
  readonly #options: ExecAuthOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #cached: ExecResult | undefined;
  #running: Promise<ExecResult> | undefined;

  constructor(options: ExecAuthOptions) {
    const problem = checkExecConfig(options.exec);
    if (problem !== undefined) throw new ConfigError(problem.message, { path: `exec.${problem.field}` });
    this.#exec = options.exec as ExecConfig & { apiVersion: string };
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? silentLogger).child({ auth: 'exec', command: options.exec.command });
  }

  async authenticate(signal?: AbortSignal): Promise<Credentials> {
    let result = this.#cached;
    if (result === undefined || (result.expiresAt !== undefined && this.#clock.now() >= result.expiresAt)) {
      this.#running ??= this.#run().finally(() => {
        this.#running = undefined;
      });
      result = await raceSignal(this.#running, signal);
    }
    const creds: Credentials = { headers: {} };
    if (result.token !== undefined) creds.headers.authorization = `Bearer ${result.token}`;
    if (result.cert !== undefined && result.key !== undefined) {
      creds.cert = result.cert;
      creds.key = result.key;
    }
    return creds;
  }

  invalidate(): void {
    this.#cached = undefined;
  }

  async #run(): Promise<ExecResult> {
    const { stdout } = await this.#spawn();
    let result: ExecResult;
    try {
      result = parseExecOutput(stdout, this.#exec.apiVersion);
    } catch (err) {
      throw new AuthError(
        `exec plugin ${JSON.stringify(this.#exec.command)} returned bad output: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    this.#cached = result;
    this.#logger.debug({ expiresAt: result.expiresAt }, 'exec plugin returned credentials');
    return result;
  }

  #interactive(): boolean {
    // isTTY is undefined at runtime when stdin is not a terminal, whatever the typings say.
    const tty = this.#options.stdinIsTTY ?? (process.stdin.isTTY as boolean | undefined) === true;
    switch (interactiveModeOf(this.#exec)) {
      case 'Never':
        return false;
      case 'IfAvailable':
        return tty;
      case 'Always':
        if (!tty) {
          throw new AuthError(
            `exec plugin ${JSON.stringify(this.#exec.command)} has interactiveMode Always but stdin is not a terminal`,
          );
        }
        return true;
    }
  }

  #spawn(): Promise<{ stdout: string }> {
    const exec = this.#exec;
    const name = JSON.stringify(exec.command);
    const interactive = this.#interactive();
    const env: Record<string, string | undefined> = { ...(this.#options.env ?? process.env) };
    for (const { name: key, value } of exec.env) env[key] = value;
    env.KUBERNETES_EXEC_INFO = execInfo(exec, interactive, this.#options.cluster);
    const timeoutMs = this.#options.timeoutMs ?? 60_000;

    return new Promise((resolve, reject) => {
      const child = spawn(exec.command, exec.args, {
        env,
        stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      let err = '';
      let settled = false;
      const fail = (error: AuthError): void => {
        if (settled) return;
        settled = true;
        this.#clock.clearTimeout(timer);
        reject(error);
      };
      // On timeout, reject at once: a wrapper script's children may keep the pipes open after the
      // kill, so waiting for 'close' could hang.
      const timer = this.#clock.setTimeout(() => {
        child.kill('SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
        fail(new AuthError(`exec plugin ${name} did not finish within ${timeoutMs} ms and was killed`));
      }, timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        if (interactive) process.stderr.write(chunk);
        err = (err + chunk.toString('utf8')).slice(-maxStderr);
      });
      child.on('error', (e: NodeJS.ErrnoException) => {
        fail(spawnError(exec, e));
      });
      child.on('close', (code, sig) => {
        if (code === 0) {
          if (settled) return;
          settled = true;
          this.#clock.clearTimeout(timer);
          resolve({ stdout: Buffer.concat(out).toString('utf8') });
          return;
        }
        const detail = err.trim() === '' ? '' : `: ${err.trim()}`;
        const how = code === null ? `signal ${sig ?? 'unknown'}` : `code ${code}`;
        fail(new AuthError(`exec plugin ${name} exited with ${how}${detail}`));
      });
    });
  }
}

function spawnError(exec: ExecConfig, e: NodeJS.ErrnoException): AuthError {
  const name = JSON.stringify(exec.command);
  if (e.code === 'ENOENT') {
    const hint = exec.installHint === undefined ? '' : `\n${exec.installHint.trim()}`;
    return new AuthError(`exec plugin ${name} not found (is it installed and on PATH?)${hint}`, { cause: e });
  }
  return new AuthError(`exec plugin ${name} could not be started: ${e.message}`, { cause: e });
}
