/**
 * Splits an `application/cbor-seq` body (RFC 8742: data items back to back, what the apiserver
 * streams for a CBOR watch) into one item each, the CBOR counterpart of {@link LineSplitter}.
 *
 * An item inside one chunk is a view of that chunk. An item spanning chunks is gathered in a
 * buffer that grows by doubling and is walked once in all (the walk resumes where the previous
 * chunk ended), so a many-MB object arriving in small chunks costs linear time.
 */
import { walkCbor, startWalk, CborError, type CborWalk } from './cbor.js';
import type { RawLine } from './line-splitter.js';
import { DEFAULT_MAX_LINE_BYTES } from './line-splitter.js';
import { StreamDecodeError } from './stream-decode-error.js';

/** One data item of the sequence, with where it was. */
export interface CborItem extends RawLine {
  cbor: true;
}

export class CborSequenceSplitter {
  readonly #maxItemBytes: number;
  /** Bytes of an item still incomplete, at the start of this buffer. */
  #carry = new Uint8Array(0);
  #carried = 0;
  /** The walk of the carried item, in offsets of the carried bytes. */
  #walk: CborWalk | undefined;
  /** Stream offset of the first carried byte (or of the next chunk when nothing is carried). */
  #offset = 0;
  #items = 0;

  constructor(maxItemBytes = DEFAULT_MAX_LINE_BYTES) {
    this.#maxItemBytes = maxItemBytes;
  }

  /** The items `chunk` completes, in order; each `line` is the item's 1-based number. */
  push(chunk: Uint8Array): CborItem[] {
    const out: CborItem[] = [];
    let data = chunk;
    let start = 0;
    let walk: CborWalk;
    const fromCarry = this.#carried > 0;
    if (fromCarry) {
      this.#append(chunk);
      data = this.#carry.subarray(0, this.#carried);
      walk = this.#walk ?? startWalk(0);
    } else {
      walk = startWalk(0);
    }
    for (;;) {
      if (start >= data.length) {
        this.#carried = 0;
        this.#walk = undefined;
        return out;
      }
      const end = this.#walkAt(data, walk);
      if (end < 0) break;
      const bytes = fromCarry ? data.slice(start, end) : data.subarray(start, end);
      out.push({ bytes, byteOffset: this.#offset, line: ++this.#items, cbor: true });
      this.#offset += end - start;
      start = end;
      walk = startWalk(start);
    }
    // The rest begins an item: keep it, with its walk shifted to the kept bytes' offsets.
    const rest = data.subarray(start);
    if (rest.length > this.#maxItemBytes) {
      throw new StreamDecodeError(`CBOR data item longer than ${String(this.#maxItemBytes)} bytes`, {
        byteOffset: this.#offset,
        line: this.#items + 1,
      });
    }
    if (!fromCarry || start > 0) {
      const kept = new Uint8Array(Math.max(rest.length * 2, 64 * 1024));
      kept.set(rest);
      this.#carry = kept;
    }
    this.#carried = rest.length;
    this.#walk = shift(walk, start);
    return out;
  }

  /** What followed the last complete item (undefined when nothing did). */
  end(): RawLine | undefined {
    if (this.#carried === 0) return undefined;
    return { bytes: this.#carry.slice(0, this.#carried), byteOffset: this.#offset, line: this.#items + 1 };
  }

  #walkAt(data: Uint8Array, walk: CborWalk): number {
    try {
      return walkCbor(data, walk);
    } catch (error) {
      if (!(error instanceof CborError)) throw error;
      throw new StreamDecodeError(`malformed CBOR (${error.message})`, {
        byteOffset: this.#offset,
        line: this.#items + 1,
      });
    }
  }

  #append(chunk: Uint8Array): void {
    const needed = this.#carried + chunk.length;
    if (needed > this.#carry.length) {
      const grown = new Uint8Array(Math.max(needed, this.#carry.length * 2));
      grown.set(this.#carry.subarray(0, this.#carried));
      this.#carry = grown;
    }
    this.#carry.set(chunk, this.#carried);
    this.#carried = needed;
  }
}

function shift(walk: CborWalk, by: number): CborWalk {
  return { pos: walk.pos - by, remaining: walk.remaining, pending: walk.pending };
}
