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
 * at worst a gap in the numbering, never an overwritten file.
 *
 * Group commit: deliveries that arrive while a write is under way (the delivery layer keeps
 * several in flight) are written together next, in the order they came, with one write and, with
 * `fsync: always`, one flush to disk; each resolves only once that flush covers its line, so the
 * guarantee is the same, for a fraction of the system calls. If such a write fails, every line in
 * it fails and is retried (a line that reached the file before the failure may then appear twice:
 * at least once). Every file-system error is retryable: disk space and permissions can be fixed
 * while Raven waits.
 */
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { abortReason } from '../../util/signals.js';
import { ConfigError, SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../model/gap-notice.js';
import type { Sink } from './sink.js';
import { recordLine } from '../model/record-json.js';

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

/** A line waiting for the next group write. */
interface Waiting {
  line: Buffer;
  signal: AbortSignal;
  resolve: () => void;
  reject: (err: Error) => void;
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
  /** Lines delivered since the last group write began. */
  #waiting: Waiting[] = [];

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
    const line = recordLine(record);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ line, signal, resolve, reject });
      // The first line of a group schedules its write; the rest join it until it begins.
      if (this.#waiting.length === 1) void this.#serial(() => this.#writeGroup());
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

  /** Write every waiting line, then settle each: never rejects. */
  async #writeGroup(): Promise<void> {
    const group: Waiting[] = [];
    for (const item of this.#waiting.splice(0)) {
      if (item.signal.aborted) item.reject(abortReason(item.signal));
      else group.push(item);
    }
    if (group.length === 0) return;
    try {
      await this.#append(group.map((item) => item.line));
    } catch (err) {
      await this.#drop();
      const error = new SinkError(
        `file sink "${this.name}": writing ${this.#path} failed: ${describe(err)}`,
        {
          retryable: true,
          cause: err,
        },
      );
      for (const item of group) item.reject(error);
      return;
    }
    for (const item of group) item.resolve();
  }

  /** Append `lines` in order, rotating before a line that would take the file past `maxBytes`. */
  async #append(lines: readonly Buffer[]): Promise<void> {
    let file = this.#file ?? (await this.#open());
    let chunk: Buffer[] = [];
    let bytes = 0;
    for (const line of lines) {
      if (file.size + bytes > 0 && file.size + bytes + line.length > this.#maxBytes) {
        await this.#write(file, chunk, bytes);
        await this.#rotate(file);
        file = await this.#open();
        chunk = [];
        bytes = 0;
      }
      chunk.push(line);
      bytes += line.length;
    }
    await this.#write(file, chunk, bytes);
    if (this.#fsync === 'always') await file.handle.sync();
  }

  async #write(file: OpenFile, lines: readonly Buffer[], bytes: number): Promise<void> {
    if (bytes === 0) return;
    const data = lines.length === 1 ? (lines[0] as Buffer) : Buffer.concat(lines, bytes);
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await file.handle.write(data, offset);
      offset += bytesWritten;
    }
    file.size += data.length;
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
