/**
 * Byte helpers shared by the stream decoders. Node-only: Buffer's UTF-8 decoding is the fastest
 * available and replaces invalid sequences with U+FFFD, as the apiserver's own JSON decoder does.
 */

/**
 * Decode UTF-8 bytes (those before `end` and from `start`, if given) without copying them first.
 * A Buffer (what a socket gives) is decoded as it is: wrapping it, or slicing a prefix, would cost
 * an object each time, as much as decoding a few hundred bytes.
 */
export function utf8(bytes: Uint8Array, end = bytes.byteLength, start = 0): string {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return start === 0 && end >= buffer.byteLength
    ? buffer.toString('utf8')
    : buffer.toString('utf8', start, end);
}

/**
 * Join pieces into one array with a single copy. `total` is their summed length, which callers
 * track anyway; one piece is returned as is.
 */
export function concatBytes(pieces: readonly Uint8Array[], total: number): Uint8Array {
  if (pieces.length === 1 && pieces[0] !== undefined) return pieces[0];
  return Buffer.concat(pieces, total);
}

/** Bytes copied out by {@link copyOut} share slabs of this size. */
const SLAB_BYTES = 256 * 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/**
 * One Buffer holding `head` then `tail`, copied out of whatever they are views into (a socket's
 * chunk, which a view would keep alive whole). Copies share slabs that are never reused or
 * written again: making an ArrayBuffer per copy cost about twice the copy itself, and a slab is
 * freed once none of its copies is referenced. Copies are meant to be short-lived or few (a
 * record's object, until its line is written); a larger piece gets a buffer of its own.
 */
export function copyOut(head: Uint8Array, tail?: Uint8Array): Buffer {
  const length = head.byteLength + (tail?.byteLength ?? 0);
  let out: Buffer;
  if (length > SLAB_BYTES / 4) out = Buffer.allocUnsafeSlow(length);
  else {
    if (slabUsed + length > SLAB_BYTES) {
      slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      slabUsed = 0;
    }
    out = slab.subarray(slabUsed, slabUsed + length);
    slabUsed += length;
  }
  out.set(head, 0);
  if (tail !== undefined) out.set(tail, head.byteLength);
  return out;
}
