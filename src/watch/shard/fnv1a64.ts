/**
 * 64-bit FNV-1a, the hash Kubernetes' sharded list and watch (KEP-5866, `ShardedListAndWatch`)
 * applies to `metadata.uid` or `metadata.namespace`: over the UTF-8 bytes of the value, as Go's
 * `hash/fnv` New64a does. A client that filters by the same hash agrees with the apiserver on
 * which shard owns each object, so server-side and client-side sharding are interchangeable.
 */

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;
const encoder = new TextEncoder();

/**
 * The 64-bit FNV-1a hash of `value`'s UTF-8 bytes, as an unsigned bigint.
 *
 * @example
 * fnv1a64(''); // => 0xcbf29ce484222325n
 * fnv1a64('a'); // => 0xaf63dc4c8601ec8cn
 */
export function fnv1a64(value: string): bigint {
  let hash = OFFSET_BASIS;
  for (const byte of ascii(value) ? asciiBytes(value) : encoder.encode(value)) {
    hash ^= BigInt(byte);
    hash = (hash * PRIME) & MASK;
  }
  return hash;
}

/** {@link fnv1a64} as 16 lower-case hex digits, as the apiserver writes it. */
export function fnv1a64Hex(value: string): string {
  return fnv1a64(value).toString(16).padStart(16, '0');
}

function ascii(value: string): boolean {
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0x7f) return false;
  return true;
}

function* asciiBytes(value: string): Generator<number> {
  for (let i = 0; i < value.length; i++) yield value.charCodeAt(i);
}
