import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fnv1a64, fnv1a64Hex } from '../../../src/watch/shard/fnv1a64.js';

/** FNV-1a as the reference writes it, one bigint step per UTF-8 byte: slow but plainly right. */
function reference(value: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(value)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash;
}

function agrees(value: string): void {
  assert.equal(fnv1a64(value), reference(value), `fnv1a64(${JSON.stringify(value.slice(0, 40))})`);
}

test('fnv1a64 agrees with a bigint reference on the empty string and every single char to 0xff', () => {
  agrees('');
  // 0x00-0x7f are one UTF-8 byte each; 0x80-0xff are two.
  for (let code = 0; code <= 0xff; code++) agrees(String.fromCharCode(code));
});

test('fnv1a64 agrees with a bigint reference on random uids', () => {
  for (let i = 0; i < 1000; i++) agrees(randomUUID());
});

test('fnv1a64 agrees with a bigint reference on multi-byte UTF-8', () => {
  // Two, three and four bytes (the emoji is a surrogate pair), alone and after ASCII.
  for (const value of ['é', '漢字', '😀', 'ns-é', 'uid-漢字-😀', 'a😀b', '\ud800 lone surrogate'])
    agrees(value);
});

test('fnv1a64 agrees with a bigint reference on long strings', () => {
  const ascii = Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(0x20 + (i % 95))).join('');
  agrees(ascii);
  agrees('é漢😀x'.repeat(2_000));
  agrees(ascii + 'é');
});

test('fnv1a64Hex writes 16 hex digits, leading zeros kept', () => {
  for (let i = 0; i < 1000; i++) {
    const uid = randomUUID();
    assert.equal(fnv1a64Hex(uid), reference(uid).toString(16).padStart(16, '0'));
  }
});
