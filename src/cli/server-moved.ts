/**
 * Whether the cluster `raven watch` cannot reach has moved: a local cluster restarted on a new
 * port rewrites its kubeconfig, and the old address refuses connections forever.
 *
 * Once connections have failed before reaching the server (refused, unreachable, host not found,
 * connect timeout: `isNotSent`) for {@link REFUSED_FOR_MS} in a row, and then at most every
 * {@link RECHECK_MS} while they go on, the kubeconfig is read again (the same file and context).
 * A server address different from the one in use is the answer; anything else (the same address,
 * a kubeconfig that cannot be read at the moment) is not, and the watch keeps retrying. Any event
 * that is not an error ends the streak: the server answers.
 */
import { isNotSent } from '../errors/classify.js';
import type { ResolvedConfig } from '../client/resolved-config.js';

/** Refused this long before the kubeconfig is read again: a restart on the same port is back by then or soon. */
export const REFUSED_FOR_MS = 5_000;
/** Then at most this often: reading a kubeconfig is cheap, but not once per retry. */
export const RECHECK_MS = 5_000;

export interface ServerMovedOptions {
  /** The server in use. */
  current: string;
  /** Read the kubeconfig again (same file, same context). */
  reload(): Promise<ResolvedConfig>;
  now(): number;
}

/**
 * @example
 * const moved = new ServerMoved({ current: client.server, reload: () => loadConfig(), now: () => Date.now() });
 * for await (const event of watcher) {
 *   if (event.type !== 'error') moved.answered();
 *   else if ((await moved.failed(event.error)) !== undefined) break; // watch the server it names now
 * }
 */
export class ServerMoved {
  readonly #o: ServerMovedOptions;
  /** When the current streak of connection failures began. */
  #since: number | undefined;
  #lastCheck: number | undefined;

  constructor(options: ServerMovedOptions) {
    this.#o = options;
  }

  /** The server answered (any event but an error): the streak ends. */
  answered(): void {
    this.#since = undefined;
  }

  /** A failure of the watch: a config naming another server when the kubeconfig now does. */
  async failed(error: Error): Promise<ResolvedConfig | undefined> {
    if (!isNotSent(error)) {
      this.#since = undefined;
      return undefined;
    }
    const now = this.#o.now();
    this.#since ??= now;
    if (now - this.#since < REFUSED_FOR_MS) return undefined;
    if (this.#lastCheck !== undefined && now - this.#lastCheck < RECHECK_MS) return undefined;
    this.#lastCheck = now;
    let config: ResolvedConfig;
    try {
      config = await this.#o.reload();
    } catch {
      // Being rewritten, or gone for a moment: the next check reads it again.
      return undefined;
    }
    return config.server === this.#o.current ? undefined : config;
  }
}
