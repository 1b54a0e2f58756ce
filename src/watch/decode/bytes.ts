/**
 * Byte helpers shared by the stream decoders. Node-only: Buffer's UTF-8 decoding is the fastest
 * available and replaces invalid sequences with U+FFFD, as the apiserver's own JSON decoder does.
 */

/** Decode UTF-8 bytes without copying them first. */
export function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * Join pieces into one array with a single copy. `total` is their summed length, which callers
 * track anyway; one piece is returned as is.
 */
export function concatBytes(pieces: readonly Uint8Array[], total: number): Uint8Array {
  if (pieces.length === 1 && pieces[0] !== undefined) return pieces[0];
  return Buffer.concat(pieces, total);
}
