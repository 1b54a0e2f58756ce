/**
 * A bearer token read from a file, as mounted for service accounts. Projected service-account
 * tokens are rotated on disk, so the file is re-read when the cached copy is older than
 * `maxAgeMs` (60 s, the interval the kubelet's rotation is designed around) and after
 * invalidate(). If a periodic re-read fails the previous token keeps being used, with a warning;
 * after invalidate() a failed read is an {@link AuthError}.
 */
import { readFile } from 'node:fs/promises';
import { AuthError } from '../../errors/raven-error.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
import type { AuthProvider, Credentials } from './auth-provider.js';

export interface TokenFileAuthOptions {
  file: string;
  /** Re-read the file when the cached token is older than this; default 60 000 ms. */
  maxAgeMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/**
 * `Authorization: Bearer <contents of file>`, refreshed from disk.
 *
 * @example
 * const auth = new TokenFileAuth({ file: '/var/run/secrets/kubernetes.io/serviceaccount/token' });
 */
export class TokenFileAuth implements AuthProvider {
  readonly kind = 'token-file';
  readonly #file: string;
  readonly #maxAgeMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #token: string | undefined;
  #readAt = 0;
  #invalid = true;
  #reading: Promise<string> | undefined;

  constructor(options: TokenFileAuthOptions) {
    this.#file = options.file;
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
  }

  async authenticate(): Promise<Credentials> {
    const fresh = !this.#invalid && this.#clock.now() - this.#readAt < this.#maxAgeMs;
    const token = fresh && this.#token !== undefined ? this.#token : await this.#refresh();
    return { headers: { authorization: `Bearer ${token}` } };
  }

  invalidate(): void {
    this.#invalid = true;
  }

  #refresh(): Promise<string> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(): Promise<string> {
    try {
      const token = (await readFile(this.#file, 'utf8')).trim();
      if (token === '') throw new Error('the file is empty');
      this.#token = token;
      this.#readAt = this.#clock.now();
      this.#invalid = false;
      return token;
    } catch (err) {
      const reason = (err as Error).message;
      if (this.#token !== undefined && !this.#invalid) {
        this.#logger.warn(
          { file: this.#file, err: reason },
          'token file re-read failed; keeping the previous token',
        );
        this.#readAt = this.#clock.now();
        return this.#token;
      }
      throw new AuthError(`cannot read token file ${this.#file}: ${reason}`, { cause: err });
    }
  }
}
