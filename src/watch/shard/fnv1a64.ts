/**
 * 64-bit FNV-1a, the hash Kubernetes' sharded list and watch (KEP-5866, `ShardedListAndWatch`)
 * applies to `metadata.uid` or `metadata.namespace`: over the UTF-8 bytes of the value, as Go's
 * `hash/fnv` New64a does. A client that filters by the same hash agrees with the apiserver on
 * which shard owns each object, so server-side and client-side sharding are interchangeable.
 *
 * A client-side sharded replica hashes every event it receives, so the loop keeps the 64-bit
 * state in four 16-bit limbs of plain numbers, not a bigint: every product and sum stays below
 * 2^26, a small integer to V8, and the bigint is made once, at the end.
 */

const encoder = new TextEncoder();
/** Scratch for making the bigint: from two 32-bit halves it is quicker than bigint shifts. */
const scratch = new DataView(new ArrayBuffer(8));
/** The last hash's low and high 32 bits. */
const state = new Uint32Array(2);

/**
 * The 64-bit FNV-1a hash of `value`'s UTF-8 bytes, as an unsigned bigint.
 *
 * @example
 * fnv1a64(''); // => 0xcbf29ce484222325n
 * fnv1a64('a'); // => 0xaf63dc4c8601ec8cn
 */
export function fnv1a64(value: string): bigint {
  hashInto(value);
  scratch.setUint32(0, state[0] as number, true);
  scratch.setUint32(4, state[1] as number, true);
  return scratch.getBigUint64(0, true);
}

/**
 * {@link fnv1a64}'s high and low 32 bits, as numbers, written to `out` (`[high, low]`): for a test
 * run on every event, no bigint made.
 */
export function fnv1a64Halves(value: string, out: Uint32Array): void {
  hashInto(value);
  out[0] = state[1] as number;
  out[1] = state[0] as number;
}

/** The hash of `value` into {@link state}. */
function hashInto(value: string): void {
  // Uids and namespaces are ASCII, where a string's char codes are its UTF-8 bytes; anything else
  // is encoded once (lone surrogates become U+FFFD, as Go's JSON decoding makes them).
  let bytes: Uint8Array | undefined;
  let length = value.length;
  for (let i = 0; i < length; i++) {
    if (value.charCodeAt(i) > 0x7f) {
      bytes = encoder.encode(value);
      length = bytes.length;
      break;
    }
  }
  // The offset basis 0xcbf29ce484222325, lowest limb first.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let i = 0; i < length; i++) {
    h0 ^= bytes === undefined ? value.charCodeAt(i) : (bytes[i] as number);
    // Times the prime 2^40 + 0x1b3: each limb times 0x1b3, plus the state shifted up 40 bits
    // (two limbs and 8 bits), keeping the low 64 bits.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  state[0] = h1 * 0x10000 + h0;
  state[1] = h3 * 0x10000 + h2;
}

/** {@link fnv1a64} as 16 lower-case hex digits, as the apiserver writes it. */
export function fnv1a64Hex(value: string): string {
  return fnv1a64(value).toString(16).padStart(16, '0');
}
