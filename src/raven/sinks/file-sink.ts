/**
 * Appends each change event (and gap notice) as one JSON line to a file, rotating by size:
 * `events.jsonl` → `events.jsonl.1` → … → `events.jsonl.<maxFiles>`, the oldest dropped.
 *
 * Durability (`fsync`): `always` (default) flushes the file to disk before `deliver` resolves, so
 * an event the delivery layer counts as delivered survives a power loss; `rotate` flushes only
 * when a file is rotated and on close: faster, and still loses nothing when only the process dies
 * (written lines are in the kernel), but a power loss may lose the last acknowledged lines.
 *
 * Restarts: the current size is read from disk when the file is opened, so rotation continues
 * where it stopped; a line cut short by a crash is ended with a newline before appending, so every
 * later line still parses. Rotation renames from the oldest down, so a crash in the middle leaves
 * at worst a gap in the numbering, never an overwritten file. Deliveries are written one at a time.
 * Every file-system error is retryable: disk space and permissions can be fixed while Raven waits.
 */
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { abortReason } from '../../util/signals.js';
import { ConfigError, SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../gap-notice.js';
import type { Sink } from './sink.js';
import { recordJson } from '../record-json.js';

export interface FileSinkOptions {
  name: string;
  path: string;
  /** Rotate before a write would take the file past this size; default 100 MiB. */
  maxBytes?: number;
  /** Rotated files kept (`.1` … `.N`); default 5; 0 truncates instead of keeping any. */
  maxFiles?: number;
  /** Default `always`; see the module comment. */
  fsync?: 'always' | 'rotate';
}

interface OpenFile {
  handle: FileHandle;
  size: number;
}

/**
 * @example
 * const sink = new FileSink({ name: 'archive', path: '/var/lib/raven/events.jsonl', maxBytes: 50e6 });
 */
export class FileSink implements Sink {
  readonly name: string;
  readonly #path: string;
  readonly #maxBytes: number;
  readonly #maxFiles: number;
  readonly #fsync: 'always' | 'rotate';
  #file: OpenFile | undefined;
  /** Writes run one after another: appends and rotations must not interleave. */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: FileSinkOptions) {
    const at = `sinks.${options.name}`;
    if (options.path === '') throw new ConfigError('path must name a file', { path: `${at}.path` });
    const maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
    if (!(maxBytes > 0))
      throw new ConfigError('maxBytes must be a positive number', { path: `${at}.maxBytes` });
    const maxFiles = options.maxFiles ?? 5;
    if (!Number.isInteger(maxFiles) || maxFiles < 0)
      throw new ConfigError('maxFiles must be a whole number, 0 or more', { path: `${at}.maxFiles` });
    this.name = options.name;
    this.#path = options.path;
    this.#maxBytes = maxBytes;
    this.#maxFiles = maxFiles;
    this.#fsync = options.fsync ?? 'always';
  }

  deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    const line = Buffer.from(`${recordJson(record)}\n`);
    return this.#serial(async () => {
      if (signal.aborted) throw abortReason(signal);
      try {
        await this.#append(line);
      } catch (err) {
        await this.#drop();
        throw new SinkError(`file sink "${this.name}": writing ${this.#path} failed: ${describe(err)}`, {
          retryable: true,
          cause: err,
        });
      }
    });
  }

  close(): Promise<void> {
    return this.#serial(async () => {
      const file = this.#file;
      this.#file = undefined;
      if (file === undefined) return;
      await file.handle.sync().catch(() => undefined);
      await file.handle.close();
    });
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(work, work);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #append(line: Buffer): Promise<void> {
    let file = this.#file ?? (await this.#open());
    if (file.size > 0 && file.size + line.length > this.#maxBytes) {
      await this.#rotate(file);
      file = await this.#open();
    }
    let offset = 0;
    while (offset < line.length) {
      const { bytesWritten } = await file.handle.write(line, offset);
      offset += bytesWritten;
    }
    file.size += line.length;
    if (this.#fsync === 'always') await file.handle.sync();
  }

  async #open(): Promise<OpenFile> {
    await mkdir(dirname(this.#path), { recursive: true });
    const handle = await open(this.#path, 'a+');
    try {
      let size = (await handle.stat()).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) {
          await handle.write('\n');
          size += 1;
        }
      }
      this.#file = { handle, size };
      return this.#file;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  async #rotate(file: OpenFile): Promise<void> {
    this.#file = undefined;
    await file.handle.sync();
    await file.handle.close();
    if (this.#maxFiles === 0) {
      await rm(this.#path, { force: true });
      return;
    }
    await rm(`${this.#path}.${this.#maxFiles}`, { force: true });
    for (let n = this.#maxFiles - 1; n >= 1; n--)
      await renameIfPresent(`${this.#path}.${n}`, `${this.#path}.${n + 1}`);
    await rename(this.#path, `${this.#path}.1`);
  }

  /** After a failure, reopen on the next write: the handle may be unusable. */
  async #drop(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.handle.close().catch(() => undefined);
  }
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await stat(from);
  } catch {
    return;
  }
  await rename(from, to);
}

function describe(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string')
    return err.code;
  return err instanceof Error ? err.message : String(err);
}
