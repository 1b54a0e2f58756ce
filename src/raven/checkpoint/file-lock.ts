/**
 * One daemon per checkpoint file: an exclusive lock file beside it (`<file>.owner`) naming the
 * holder's pid and host. The lock is created atomically (written under a temporary name, then
 * hard-linked into place, which fails if it exists), so a reader never sees a half-written lock.
 *
 * A lock left by a process that is gone is stale and reclaimed:
 * - same host: its pid is not alive, or it is this process's own pid but this process does not
 *   hold it (a container restarted: the new process is pid 1 again);
 * - another host (a pod rescheduled with the volume): its heartbeat, rewritten every `refreshMs`
 *   by the holder, is older than `staleAfterMs`.
 * Two processes that both find the same stale lock at the same instant may both reclaim it; the
 * window is one file operation wide, and only at start-up.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { resolve } from 'node:path';
import type { Clock, TimerHandle } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
import { CheckpointError } from './checkpoint-error.js';

/** What a lock file says. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** Tells this holder's lock from a later one with the same pid. */
  token: string;
  /** `clock.now()` at the last refresh. */
  heartbeat: number;
}

export interface FileLockOptions {
  clock: Clock;
  logger?: Logger;
  /** How often the holder rewrites its heartbeat. Default 10 s. */
  refreshMs?: number;
  /** A lock from another host is stale when its heartbeat is older. Default 60 s: six missed refreshes. */
  staleAfterMs?: number;
}

/** Locks held by this process, so a second open in the same process is refused, not reclaimed. */
const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof parsed.pid !== 'number' || typeof parsed.hostname !== 'string') return undefined;
    return {
      pid: parsed.pid,
      hostname: parsed.hostname,
      token: String(parsed.token),
      heartbeat: Number(parsed.heartbeat),
    };
  } catch {
    return undefined;
  }
}

function writeFileDurably(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

export class FileLock {
  readonly path: string;
  readonly #owner: LockOwner;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  #timer: TimerHandle | undefined;

  private constructor(path: string, owner: LockOwner, clock: Clock, refreshMs: number) {
    this.path = path;
    this.#owner = owner;
    this.#clock = clock;
    this.#refreshMs = refreshMs;
    this.#schedule();
  }

  /**
   * Take the lock at `path` for `resource` (named in errors), reclaiming a stale one.
   *
   * @throws CheckpointError `ERR_CHECKPOINT_LOCKED` when a live process holds it.
   * @example
   * const lock = FileLock.acquire('/var/lib/raven/checkpoints.db.owner', '/var/lib/raven/checkpoints.db', { clock });
   */
  static acquire(path: string, resource: string, options: FileLockOptions): FileLock {
    const absolute = resolve(path);
    const logger = options.logger ?? silentLogger;
    const staleAfterMs = options.staleAfterMs ?? 60_000;
    const owner: LockOwner = {
      pid: process.pid,
      hostname: osHostname(),
      token: randomUUID(),
      heartbeat: options.clock.now(),
    };
    for (let attempt = 0; ; attempt++) {
      if (FileLock.#tryCreate(absolute, resource, owner)) break;
      const holder = readOwner(absolute);
      const reason = FileLock.#staleReason(absolute, holder, options.clock.now(), staleAfterMs);
      if (reason === undefined || attempt >= 2) {
        const who = holder === undefined ? 'another process' : `pid ${holder.pid} on ${holder.hostname}`;
        throw new CheckpointError(
          'ERR_CHECKPOINT_LOCKED',
          `checkpoint file ${resource} is in use by ${who} (lock file ${absolute}); run one Raven ` +
            `daemon per checkpoint file, or give this one another file. If that process is gone, ` +
            `delete ${absolute} and start again.`,
          { path: resource },
        );
      }
      logger.warn({ lock: absolute, holder, reason }, 'reclaiming a stale checkpoint lock');
      removeIfPresent(absolute);
    }
    heldHere.add(absolute);
    return new FileLock(absolute, owner, options.clock, options.refreshMs ?? 10_000);
  }

  static #tryCreate(path: string, resource: string, owner: LockOwner): boolean {
    const temporary = `${path}.${owner.token}.tmp`;
    try {
      writeFileDurably(temporary, JSON.stringify(owner));
      linkSync(temporary, path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw new CheckpointError(
        'ERR_CHECKPOINT_UNREADABLE',
        `cannot create the lock file ${path} for checkpoint file ${resource}: ${(err as Error).message}; ` +
          `check that the directory exists and is writable`,
        { path: resource, cause: err },
      );
    } finally {
      removeIfPresent(temporary);
    }
  }

  static #staleReason(
    path: string,
    holder: LockOwner | undefined,
    now: number,
    staleAfterMs: number,
  ): string | undefined {
    if (holder === undefined) return 'the lock file is unreadable';
    if (holder.hostname === osHostname()) {
      if (holder.pid === process.pid)
        return heldHere.has(path) ? undefined : 'left by an earlier process with this pid';
      return isAlive(holder.pid) ? undefined : `process ${holder.pid} is gone`;
    }
    return now - holder.heartbeat > staleAfterMs
      ? `no heartbeat for ${now - holder.heartbeat} ms`
      : undefined;
  }

  /** Release the lock, if it is still ours. */
  release(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!heldHere.delete(this.path)) return;
    if (readOwner(this.path)?.token === this.#owner.token) removeIfPresent(this.path);
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#refresh();
      this.#schedule();
    }, this.#refreshMs);
  }

  /** Rewrite the heartbeat (atomically, by rename) while the lock is still ours. */
  #refresh(): void {
    if (readOwner(this.path)?.token !== this.#owner.token) return;
    this.#owner.heartbeat = this.#clock.now();
    const temporary = `${this.path}.${this.#owner.token}.tmp`;
    try {
      writeFileDurably(temporary, JSON.stringify(this.#owner));
      renameSync(temporary, this.path);
    } catch {
      // A missed heartbeat only matters after six in a row; the next refresh tries again.
      try {
        removeIfPresent(temporary);
      } catch {
        // Nothing more to do: the temporary file is named by our token and harmless.
      }
    }
  }
}
