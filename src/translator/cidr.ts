/**
 * CIDR arithmetic for security-group rules, IPv4 and IPv6: parse and normalise a prefix, and
 * subtract prefixes from one (a NetworkPolicy `ipBlock` with `except`), since Neutron rules only
 * allow and cannot say "all of this but that". The difference is given as the fewest prefixes
 * that cover exactly what is left.
 */
import { RavenError } from '../errors/raven-error.js';

export interface Cidr {
  family: 4 | 6;
  /** The network address as a number (host bits zero). */
  base: bigint;
  prefix: number;
}

const BITS = { 4: 32, 6: 128 } as const;

function parseV4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseV6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string | undefined): string[] => (s === undefined || s === '' ? [] : s.split(':'));
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...tail];
  let value = 0n;
  for (const group of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}

/** A CIDR (`10.0.0.0/8`, `fd00::/64`; a bare address is a /32 or /128) with its host bits cleared, or undefined when it is not one. */
export function parseCidr(text: string): Cidr | undefined {
  const [address = '', bits, ...rest] = text.trim().split('/');
  if (rest.length > 0) return undefined;
  const family = address.includes(':') ? 6 : 4;
  const value = family === 4 ? parseV4(address) : parseV6(address);
  const width = BITS[family];
  const prefix = bits === undefined ? width : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (value === undefined || !(prefix >= 0 && prefix <= width)) return undefined;
  const hostBits = BigInt(width - prefix);
  return { family, base: (value >> hostBits) << hostBits, prefix };
}

/** The text form: dotted quad for IPv4, RFC 5952 (lower case, longest zero run as `::`) for IPv6. */
export function formatCidr(cidr: Cidr): string {
  if (cidr.family === 4) {
    const octets = [24n, 16n, 8n, 0n].map((shift) => String((cidr.base >> shift) & 255n));
    return `${octets.join('.')}/${cidr.prefix}`;
  }
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => (cidr.base >> shift) & 0xffffn);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0n) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0n) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  const text =
    bestStart < 0
      ? hex.join(':')
      : `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
  return `${text}/${cidr.prefix}`;
}

/** Whether `inner` lies within `outer` (same family). */
export function contains(outer: Cidr, inner: Cidr): boolean {
  if (outer.family !== inner.family || inner.prefix < outer.prefix) return false;
  const hostBits = BigInt(BITS[outer.family] - outer.prefix);
  return inner.base >> hostBits === outer.base >> hostBits;
}

/**
 * What is left of `cidr` without each of `excepts`, as the fewest prefixes (an except outside
 * `cidr`, or of the other family, removes nothing).
 *
 * @example
 * subtractCidrs('172.17.0.0/16', ['172.17.1.0/24']); // 8 prefixes: 172.17.0.0/24, 172.17.2.0/23, ... 172.17.128.0/17
 */
export function subtractCidrs(cidr: string, excepts: readonly string[]): string[] {
  const whole = parseCidr(cidr);
  if (whole === undefined) return [];
  const holes = excepts.map(parseCidr).filter((e): e is Cidr => e !== undefined && e.family === whole.family);
  const width = BITS[whole.family];
  const out: Cidr[] = [];
  const split = (block: Cidr): void => {
    if (holes.some((h) => contains(h, block))) return;
    if (!holes.some((h) => contains(block, h))) {
      out.push(block);
      return;
    }
    const prefix = block.prefix + 1;
    const half = 1n << BigInt(width - prefix);
    split({ family: block.family, base: block.base, prefix });
    split({ family: block.family, base: block.base + half, prefix });
  };
  split(whole);
  return out.map(formatCidr);
}

/**
 * A cluster CIDR setting as kube-apiserver takes it (`--service-cluster-ip-range`,
 * `--cluster-cidr`): one CIDR, or one of each family separated by a comma (dual stack; the first
 * is the primary family). Undefined when it is not that.
 *
 * @example
 * splitCidrs('10.96.0.0/16,fd00:10:96::/112'); // [{ family: 4, ... }, { family: 6, ... }]
 */
export function splitCidrs(text: string): Cidr[] | undefined {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length > 2) return undefined;
  const cidrs: Cidr[] = [];
  for (const part of parts) {
    if (!part.includes('/')) return undefined;
    const cidr = parseCidr(part);
    if (cidr === undefined || cidrs.some((c) => c.family === cidr.family)) return undefined;
    cidrs.push(cidr);
  }
  return cidrs;
}

/** The family of an address or CIDR: 6 when it has a colon. */
export function familyOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

/**
 * The last usable address of a CIDR, without the prefix: the service subnet's gateway, so that the
 * first addresses (the `kubernetes` Service's clusterIP) stay free for VIPs. IPv4 keeps its
 * broadcast address free; IPv6 has none.
 */
export function lastUsableAddress(cidr: string): string {
  const parsed = parseCidr(cidr);
  if (parsed === undefined) throw new RavenError('ERR_INVALID_ARGUMENT', `not a CIDR: ${cidr}`);
  const size = 1n << BigInt(BITS[parsed.family] - parsed.prefix);
  const last = parsed.base + size - (parsed.family === 4 ? 2n : 1n);
  const text = formatCidr({ family: parsed.family, base: last, prefix: BITS[parsed.family] });
  return text.slice(0, text.indexOf('/'));
}

/** The CIDRs of a checked cluster CIDR setting ({@link splitCidrs}), in text form, primary first. */
export function cidrList(text: string): string[] {
  return (splitCidrs(text) ?? []).map(formatCidr);
}
