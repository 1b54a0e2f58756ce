/**
 * Splits a byte stream into newline-terminated lines. The split happens on the newline byte, before
 * any text decoding: 0x0A never occurs inside a multi-byte UTF-8 sequence, so a chunk boundary
 * anywhere (mid-line, mid-character) cannot corrupt a line.
 *
 * Copying is minimal: a line that lies inside one chunk is a view of that chunk; a line spanning
 * several chunks is joined once, when its newline arrives, so a many-MB object arriving in small
 * chunks costs one copy, not a quadratic series of them. Chunks must not be mutated after they are
 * pushed (response bodies never are).
 */
import { concatBytes } from './bytes.js';
import { StreamDecodeError } from './stream-decode-error.js';

/**
 * Default maximum line size. Large enough for any object etcd will store (1.5 MiB by default, and
 * watch events are one object each) with a wide margin for big custom resources; small enough that
 * a runaway stream fails long before memory does.
 */
export const DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024;

/** One line, without its newline. */
export interface RawLine {
  bytes: Uint8Array;
  /** Offset of the line's first byte in the stream. */
  byteOffset: number;
  /** 1-based line number. */
  line: number;
}

const NEWLINE = 0x0a;

/**
 * Incremental newline splitter: {@link LineSplitter.push} each chunk, then {@link LineSplitter.end}.
 *
 * @example
 * const splitter = new LineSplitter();
 * const lines: RawLine[] = [];
 * for await (const chunk of body) lines.push(...splitter.push(chunk));
 * const last = splitter.end(); // bytes after the final newline, if any
 * if (last !== undefined) lines.push(last);
 */
export class LineSplitter {
  readonly maxLineBytes: number;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #offset = 0;
  #line = 0;

  constructor(maxLineBytes = DEFAULT_MAX_LINE_BYTES) {
    this.maxLineBytes = maxLineBytes;
  }

  /** The complete lines `chunk` finishes; a trailing partial line is kept for the next push. */
  push(chunk: Uint8Array): RawLine[] {
    const lines: RawLine[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) break;
      let bytes = chunk.subarray(start, newline);
      if (this.#pendingBytes > 0) {
        this.#pending.push(bytes);
        bytes = concatBytes(this.#pending, this.#pendingBytes + bytes.length);
        this.#pending = [];
        this.#pendingBytes = 0;
      }
      this.#checkSize(bytes.length);
      lines.push({ bytes, byteOffset: this.#offset, line: ++this.#line });
      this.#offset += bytes.length + 1;
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#checkSize(this.#pendingBytes + rest.length);
      this.#pending.push(rest);
      this.#pendingBytes += rest.length;
    }
    return lines;
  }

  /** The bytes after the last newline, or undefined when the stream ended on a newline. */
  end(): RawLine | undefined {
    if (this.#pendingBytes === 0) return undefined;
    const bytes = concatBytes(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    return { bytes, byteOffset: this.#offset, line: this.#line + 1 };
  }

  #checkSize(size: number): void {
    if (size > this.maxLineBytes) {
      throw new StreamDecodeError(`line longer than the maximum of ${this.maxLineBytes} bytes`, {
        byteOffset: this.#offset,
        line: this.#line + 1,
      });
    }
  }
}
