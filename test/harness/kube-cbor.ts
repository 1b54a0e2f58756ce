/**
 * A small CBOR encoder that writes what the Kubernetes apiserver writes (KEP-4222): every string
 * and field name as a byte string, each top-level object under the self-described tag 55799,
 * integers in the shortest head, other numbers as float64. For fixtures only.
 */
import { Buffer } from 'node:buffer';

export const SELF_DESCRIBED = [0xd9, 0xd9, 0xf7];

function head(major: number, value: number, out: number[]): void {
  const m = major << 5;
  if (value < 24) out.push(m | value);
  else if (value < 0x100) out.push(m | 24, value);
  else if (value < 0x10000) out.push(m | 25, value >> 8, value & 0xff);
  else if (value < 0x1_0000_0000)
    out.push(m | 26, (value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
  else {
    const high = Math.floor(value / 0x1_0000_0000);
    const low = value >>> 0;
    out.push(m | 27);
    for (const word of [high, low])
      out.push((word >>> 24) & 0xff, (word >>> 16) & 0xff, (word >>> 8) & 0xff, word & 0xff);
  }
}

function item(value: unknown, out: number[]): void {
  if (value === null || value === undefined) out.push(0xf6);
  else if (value === false) out.push(0xf4);
  else if (value === true) out.push(0xf5);
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) {
      if (value >= 0) head(0, value, out);
      else head(1, -1 - value, out);
    } else {
      const bytes = Buffer.alloc(8);
      bytes.writeDoubleBE(value);
      out.push(0xfb, ...bytes);
    }
  } else if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    head(2, bytes.length, out);
    out.push(...bytes);
  } else if (value instanceof Uint8Array) {
    // A Go []byte: tag 22 (expected base64) around a byte string.
    out.push(0xd6);
    head(2, value.length, out);
    out.push(...value);
  } else if (Array.isArray(value)) {
    head(4, value.length, out);
    for (const element of value) item(element, out);
  } else if (typeof value === 'object') {
    const entries = Object.entries(value);
    head(5, entries.length, out);
    for (const [key, element] of entries) {
      item(key, out);
      item(element, out);
    }
  } else {
    throw new Error(`cannot encode ${typeof value}`);
  }
}

/** One object as the apiserver sends it: tag 55799, then the item. */
export function kubeCbor(value: unknown): Uint8Array {
  const out: number[] = [...SELF_DESCRIBED];
  item(value, out);
  return Uint8Array.from(out);
}

/** A watch event as the apiserver streams it: the event and its object each self-described. */
export function kubeCborEvent(type: string, object: unknown): Uint8Array {
  const out: number[] = [...SELF_DESCRIBED];
  head(5, 2, out);
  item('type', out);
  item(type, out);
  item('object', out);
  out.push(...SELF_DESCRIBED);
  item(object, out);
  return Uint8Array.from(out);
}
