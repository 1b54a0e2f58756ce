/**
 * A CBOR (RFC 8949) decoder for what the Kubernetes apiserver serves as `application/cbor` and
 * `application/cbor-seq` (KEP-4222), producing the same values `JSON.parse` gives for the JSON form
 * of the same object:
 *
 * - Kubernetes encodes every string and every field name as a *byte* string (major type 2) and
 *   never validates UTF-8 on the way out; byte strings are decoded as UTF-8 text here (invalid
 *   sequences become U+FFFD, as `JSON.parse` of the JSON form would show them).
 * - A byte string under tag 22 ("expected conversion to base64") is a Go `[]byte` (a Secret's
 *   data), which JSON shows as base64: it becomes that base64 string.
 * - The self-described CBOR tag 55799 that starts each object is dropped; other tags yield their
 *   content.
 * - Integers beyond 2^53 become (inexact) numbers, as in JSON.parse; `undefined` becomes null.
 *
 * General-purpose CBOR libraries decode byte strings to `Uint8Array`s (and cannot make them object
 * keys), so a second pass would be needed to match JSON; this decoder is one pass. It reads
 * definite and indefinite lengths, although the apiserver only writes definite ones.
 *
 * @example
 * const pod = decodeCbor(new Uint8Array([0xa1, 0x44, 0x6b, 0x69, 0x6e, 0x64, 0x43, 0x50, 0x6f, 0x64]));
 * // { kind: 'Pod' }
 */
import { Buffer } from 'node:buffer';
import { DecodeError } from '../../errors/raven-error.js';

/** Bytes that are not well-formed CBOR: a {@link DecodeError} that knows the offending byte. */
export class CborError extends DecodeError {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at byte ${String(offset)}`);
  }
}

const EXPECT_BASE64 = 22;
const BREAK = 0xff;
/** Strings up to this length are built byte by byte when they are ASCII (cheaper than a slice). */
const SHORT_STRING = 24;

/** Options for {@link decodeCbor}. */
export interface DecodeCborOptions {
  /** Skip `metadata.managedFields` without decoding it (the bytes are stepped over). */
  dropManagedFields?: boolean;
}

class Reader {
  pos = 0;
  readonly view: DataView;
  readonly buffer: Buffer;
  constructor(
    readonly bytes: Uint8Array,
    readonly dropManagedFields: boolean,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(message: string): never {
    throw new CborError(message, this.pos);
  }

  /** The argument of a head whose additional information is `info` (-1: indefinite). */
  argument(info: number): number {
    if (info < 24) return info;
    const { pos, bytes } = this;
    switch (info) {
      case 24:
        if (pos + 1 > bytes.length) this.fail('truncated');
        this.pos = pos + 1;
        return bytes[pos] as number;
      case 25:
        if (pos + 2 > bytes.length) this.fail('truncated');
        this.pos = pos + 2;
        return this.view.getUint16(pos);
      case 26:
        if (pos + 4 > bytes.length) this.fail('truncated');
        this.pos = pos + 4;
        return this.view.getUint32(pos);
      case 27: {
        if (pos + 8 > bytes.length) this.fail('truncated');
        this.pos = pos + 8;
        return this.view.getUint32(pos) * 0x1_0000_0000 + this.view.getUint32(pos + 4);
      }
      case 31:
        return -1;
      default:
        return this.fail(`reserved additional information ${String(info)}`);
    }
  }

  text(length: number): string {
    const start = this.pos;
    const end = start + length;
    if (end > this.bytes.length) this.fail('truncated string');
    this.pos = end;
    if (length <= SHORT_STRING) {
      const bytes = this.bytes;
      let ascii = true;
      for (let i = start; i < end; i++) {
        if ((bytes[i] as number) >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        let out = '';
        for (let i = start; i < end; i++) out += String.fromCharCode(bytes[i] as number);
        return out;
      }
    }
    return this.buffer.toString('utf8', start, end);
  }

  /** The concatenated chunks of an indefinite-length string. */
  chunks(major: number): Buffer {
    const parts: Buffer[] = [];
    for (;;) {
      if (this.pos >= this.bytes.length) this.fail('truncated string');
      if (this.bytes[this.pos] === BREAK) {
        this.pos++;
        return Buffer.concat(parts);
      }
      const head = this.bytes[this.pos++] as number;
      if (head >> 5 !== major || (head & 0x1f) === 31) this.fail('bad chunk in an indefinite string');
      const length = this.argument(head & 0x1f);
      if (this.pos + length > this.bytes.length) this.fail('truncated string');
      parts.push(this.buffer.subarray(this.pos, this.pos + length));
      this.pos += length;
    }
  }

  /** The next data item; `metadata` when it is the value of a `metadata` field. */
  value(metadata = false): unknown {
    if (this.pos >= this.bytes.length) this.fail('truncated');
    const head = this.bytes[this.pos++] as number;
    const major = head >> 5;
    const info = head & 0x1f;
    switch (major) {
      case 0:
        return this.argument(info);
      case 1:
        return -1 - this.argument(info);
      case 2:
      case 3: {
        const length = this.argument(info);
        return length < 0 ? this.chunks(major).toString('utf8') : this.text(length);
      }
      case 4: {
        const length = this.argument(info);
        const out: unknown[] = [];
        if (length < 0) {
          while (this.peekNotBreak()) out.push(this.value());
          this.pos++;
        } else {
          for (let i = 0; i < length; i++) out.push(this.value());
        }
        return out;
      }
      case 5: {
        const length = this.argument(info);
        const out: Record<string, unknown> = {};
        const drop = metadata && this.dropManagedFields;
        if (length < 0) {
          while (this.peekNotBreak()) this.entry(out, drop);
          this.pos++;
        } else {
          for (let i = 0; i < length; i++) this.entry(out, drop);
        }
        return out;
      }
      case 6: {
        const tag = this.argument(info);
        if (tag === EXPECT_BASE64) {
          const start = this.pos;
          const inner = this.bytes[start];
          if (inner !== undefined && inner >> 5 === 2) {
            this.pos++;
            const length = this.argument(inner & 0x1f);
            const raw = length < 0 ? this.chunks(2) : this.buffer.subarray(this.pos, (this.pos += length));
            if (this.pos > this.bytes.length) this.fail('truncated string');
            return raw.toString('base64');
          }
        }
        return this.value(metadata);
      }
      default:
        return this.simple(info);
    }
  }

  entry(out: Record<string, unknown>, dropManagedFields: boolean): void {
    const key = this.value();
    const name = typeof key === 'string' ? key : String(key);
    if (dropManagedFields && name === 'managedFields') {
      const end = cborItemEnd(this.bytes, this.pos);
      if (end < 0) this.fail('truncated');
      this.pos = end;
      return;
    }
    const value = this.value(name === 'metadata');
    if (name === '__proto__') {
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    } else {
      out[name] = value;
    }
  }

  peekNotBreak(): boolean {
    if (this.pos >= this.bytes.length) this.fail('truncated');
    return this.bytes[this.pos] !== BREAK;
  }

  simple(info: number): unknown {
    switch (info) {
      case 20:
        return false;
      case 21:
        return true;
      case 22:
      case 23:
        return null;
      case 25: {
        if (this.pos + 2 > this.bytes.length) this.fail('truncated');
        const half = this.view.getUint16(this.pos);
        this.pos += 2;
        return halfToNumber(half);
      }
      case 26: {
        if (this.pos + 4 > this.bytes.length) this.fail('truncated');
        const value = this.view.getFloat32(this.pos);
        this.pos += 4;
        return value;
      }
      case 27: {
        if (this.pos + 8 > this.bytes.length) this.fail('truncated');
        const value = this.view.getFloat64(this.pos);
        this.pos += 8;
        return value;
      }
      default:
        if (info < 20) return info;
        if (info === 24) {
          if (this.pos >= this.bytes.length) this.fail('truncated');
          return this.fail(`unexpected simple value ${String(this.bytes[this.pos++])}`);
        }
        return this.fail(`unexpected simple value ${String(info)}`);
    }
  }
}

function halfToNumber(half: number): number {
  const exponent = (half >> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  const sign = half & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** A CBOR list body taken apart: its own fields decoded, its items left as bytes. */
export interface CborListParts {
  /** Every field but `items`, decoded. */
  fields: Record<string, unknown>;
  /** Each item's bytes (views of the body), or undefined when `items` was absent or null. */
  items: Uint8Array[] | undefined;
  /** Offsets of the items in the body. */
  offsets: number[];
}

/**
 * Takes a list body (one map, under the self-described tag) apart without decoding its items, so
 * each can be decoded (and kept) on its own.
 */
export function splitCborList(bytes: Uint8Array): CborListParts {
  const reader = new Reader(bytes, false);
  while (reader.pos < bytes.length && (bytes[reader.pos] as number) >> 5 === 6) {
    reader.pos++;
    reader.argument((bytes[reader.pos - 1] as number) & 0x1f);
  }
  const head = bytes[reader.pos];
  if (head === undefined || head >> 5 !== 5) return reader.fail('a list body is not a CBOR map');
  reader.pos++;
  const length = reader.argument(head & 0x1f);
  const fields: Record<string, unknown> = {};
  let items: Uint8Array[] | undefined;
  const offsets: number[] = [];
  for (let i = 0; length < 0 ? reader.peekNotBreak() : i < length; i++) {
    const key = reader.value();
    const next = bytes[reader.pos];
    if (key === 'items' && next !== undefined && next >> 5 === 4) {
      reader.pos++;
      const count = reader.argument(next & 0x1f);
      items = [];
      for (let j = 0; count < 0 ? reader.peekNotBreak() : j < count; j++) {
        const end = cborItemEnd(bytes, reader.pos);
        if (end < 0) reader.fail('truncated list item');
        items.push(bytes.subarray(reader.pos, end));
        offsets.push(reader.pos);
        reader.pos = end;
      }
      if (count < 0) reader.pos++;
    } else {
      fields[typeof key === 'string' ? key : String(key)] = reader.value();
    }
  }
  if (length < 0) reader.pos++;
  if (reader.pos !== bytes.length) reader.fail('trailing bytes after the list');
  return { fields, items, offsets };
}

/** Decodes one CBOR data item that fills `bytes` exactly. */
export function decodeCbor(bytes: Uint8Array, options: DecodeCborOptions = {}): unknown {
  const reader = new Reader(bytes, options.dropManagedFields === true);
  const value = reader.value();
  if (reader.pos !== bytes.length) reader.fail('trailing bytes after the item');
  return value;
}

/**
 * Where a data item is while it is walked: resumable, so an item arriving in many chunks is walked
 * once in all, not once per chunk.
 */
export interface CborWalk {
  /** Where the next head starts. */
  pos: number;
  /** Items left at the current level (-1: an indefinite-length container, ended by a break). */
  remaining: number;
  /** `remaining` of each enclosing level. */
  pending: number[];
}

/** A walk of the item that starts at `start`. */
export function startWalk(start: number): CborWalk {
  return { pos: start, remaining: 1, pending: [] };
}

/**
 * Walks heads and lengths (nothing is decoded) and returns where the item ends, or -1 when `bytes`
 * ends first; then `walk` stops at the head it could not read, and a later call with more bytes
 * (the same offsets) carries on from there.
 */
export function walkCbor(bytes: Uint8Array, walk: CborWalk): number {
  let { pos, remaining } = walk;
  const { pending } = walk;
  for (;;) {
    while (remaining === 0) {
      if (pending.length === 0) {
        walk.pos = pos;
        walk.remaining = 0;
        return pos;
      }
      remaining = pending.pop() as number;
    }
    const headAt = pos;
    if (pos >= bytes.length) break;
    const head = bytes[pos++] as number;
    if (head === BREAK) {
      if (remaining !== -1) throw new CborError('unexpected break', headAt);
      remaining = 0;
      continue;
    }
    const major = head >> 5;
    const info = head & 0x1f;
    let argument = info;
    if (info >= 24 && info <= 27) {
      const size = 1 << (info - 24);
      if (pos + size > bytes.length) {
        pos = headAt;
        break;
      }
      argument = 0;
      for (let i = 0; i < size; i++) argument = argument * 256 + (bytes[pos + i] as number);
      pos += size;
    } else if (info === 31) {
      if (major === 0 || major === 1 || major === 6 || major === 7) {
        throw new CborError('bad indefinite length', headAt);
      }
      argument = -1;
    } else if (info > 27) {
      throw new CborError(`reserved additional information ${String(info)}`, headAt);
    }
    if ((major === 2 || major === 3) && argument >= 0) {
      if (pos + argument > bytes.length) {
        pos = headAt;
        break;
      }
      pos += argument;
    }
    if (remaining > 0) remaining--;
    if (major === 4 || major === 5 || major === 6 || ((major === 2 || major === 3) && argument < 0)) {
      pending.push(remaining);
      remaining = major === 6 ? 1 : argument < 0 ? -1 : argument * (major === 5 ? 2 : 1);
    }
  }
  walk.pos = pos;
  walk.remaining = remaining;
  return -1;
}

/** Where the data item starting at `start` ends, or -1 when `bytes` holds only its beginning. */
export function cborItemEnd(bytes: Uint8Array, start: number): number {
  return walkCbor(bytes, startWalk(start));
}
