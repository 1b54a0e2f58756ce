/**
 * Where this installation's redaction key comes from (the key of the fingerprints `redact.ts`
 * shows in place of Secret values), first found wins:
 * 1. `RAVEN_REDACTION_KEY` in the environment: any string of at least 16 characters, used as is
 *    (share it to make several installations' fingerprints comparable);
 * 2. the file `redaction.key` in `dir` (the daemon passes its checkpoint's directory, so the key
 *    lives and moves with the checkpoint that holds fingerprints);
 * 3. the file `redaction.key` in the user's state directory: `$XDG_STATE_HOME/raven`, else
 *    `~/.local/state/raven`.
 * A missing file is created once with 32 random bytes (64 hex digits), mode 0600, atomically: two
 * processes starting together end with the same key. If it cannot be written (a read-only home),
 * a key made for this process is used and the caller is told why, to warn: fingerprints then
 * compare within one run only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RavenError } from '../../errors/raven-error.js';
import { useRedactionKey } from './redact.js';
import { stateDir } from './state-dir.js';

export { stateDir };

export const REDACTION_KEY_ENV = 'RAVEN_REDACTION_KEY';
export const REDACTION_KEY_FILE = 'redaction.key';

/** Shorter keys are refused: they could be guessed, and with the key every fingerprint. */
const MIN_ENV_KEY_LENGTH = 16;

export interface RedactionKeyOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** The directory of the key file; default: the user's state directory. */
  dir?: string;
  homeDir?: string;
}

export interface LoadedRedactionKey {
  key: Uint8Array;
  /** Where it came from: the variable's name or the file's path ('' for a key made for this run). */
  source: string;
  /** Set when the key is usable but not as intended (made for this run, or a file others can read). */
  warning?: string;
}

function keyError(message: string, cause?: unknown): RavenError {
  return new RavenError('ERR_REDACTION_KEY', message, cause === undefined ? {} : { cause });
}

function parseKeyFile(text: string, file: string): Uint8Array {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw keyError(
      `${file} is not a redaction key (64 hex digits); remove it to have a new one made (fingerprints shown so far will not match the new ones), or set ${REDACTION_KEY_ENV}`,
    );
  return Buffer.from(hex, 'hex');
}

async function readOrCreate(file: string): Promise<LoadedRedactionKey> {
  try {
    const key = parseKeyFile(await readFile(file, 'utf8'), file);
    const mode = (await stat(file)).mode;
    return (mode & 0o077) === 0
      ? { key, source: file }
      : { key, source: file, warning: `${file} can be read by other users; run chmod 600 ${file}` };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw wrapRead(err, file);
  }
  // Written under a temporary name and linked into place: linking fails if another process made
  // the key first, and then its key is the one everybody uses.
  const temporary = `${file}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  return { key: parseKeyFile(await readFile(file, 'utf8'), file), source: file };
}

function wrapRead(err: unknown, file: string): unknown {
  return err instanceof RavenError
    ? err
    : keyError(`cannot read the redaction key ${file}: ${(err as Error).message}`, err);
}

/**
 * The redaction key, from the environment or its file (made if missing).
 *
 * @example
 * const { key, source } = await loadRedactionKey({ env: process.env });
 * // key: the HMAC key of Secret fingerprints; source: 'RAVEN_REDACTION_KEY' or the key file's path
 */
export async function loadRedactionKey(options: RedactionKeyOptions = {}): Promise<LoadedRedactionKey> {
  const env = options.env ?? process.env;
  const fromEnv = env[REDACTION_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < MIN_ENV_KEY_LENGTH)
      throw keyError(
        `${REDACTION_KEY_ENV} must be at least ${MIN_ENV_KEY_LENGTH} characters (e.g. the output of openssl rand -hex 32); it has ${fromEnv.length}`,
      );
    return { key: Buffer.from(fromEnv, 'utf8'), source: REDACTION_KEY_ENV };
  }
  const dir = options.dir ?? stateDir(env, options.homeDir);
  const file = join(dir, REDACTION_KEY_FILE);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return await readOrCreate(file);
  } catch (err) {
    if (err instanceof RavenError) throw err;
    return {
      key: randomBytes(32),
      source: '',
      warning: `cannot keep a redaction key in ${file} (${(err as Error).message}): Secret fingerprints made in this run will not match later runs' fingerprints; set ${REDACTION_KEY_ENV} to fix it`,
    };
  }
}

/**
 * Load the key and use it for this process's fingerprints; resolves with a warning to show when
 * the key is not as intended (made for this run only, or in a file others can read).
 */
export async function installRedactionKey(options: RedactionKeyOptions = {}): Promise<string | undefined> {
  const loaded = await loadRedactionKey(options);
  useRedactionKey(loaded.key);
  return loaded.warning;
}
