/**
 * Byte helpers shared by the stream decoders. Node-only: Buffer's UTF-8 decoding is the fastest
 * available and replaces invalid sequences with U+FFFD, as the apiserver's own JSON decoder does.
 */

/**
 * Decode UTF-8 bytes (the first `end` of them, if given) without copying them first. A Buffer
 * (what a socket gives) is decoded as it is: wrapping it, or slicing a prefix, would cost an
 * object each time, as much as decoding a few hundred bytes.
 */
export function utf8(bytes: Uint8Array, end = bytes.byteLength): string {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return end >= buffer.byteLength ? buffer.toString('utf8') : buffer.toString('utf8', 0, end);
}

/**
 * Join pieces into one array with a single copy. `total` is their summed length, which callers
 * track anyway; one piece is returned as is.
 */
export function concatBytes(pieces: readonly Uint8Array[], total: number): Uint8Array {
  if (pieces.length === 1 && pieces[0] !== undefined) return pieces[0];
  return Buffer.concat(pieces, total);
}
