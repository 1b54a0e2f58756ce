import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cidrList,
  formatCidr,
  lastUsableAddress,
  parseCidr,
  splitCidrs,
  subtractCidrs,
} from '../../../src/translator/cidr.js';

const normal = (text: string): string | undefined => {
  const cidr = parseCidr(text);
  return cidr === undefined ? undefined : formatCidr(cidr);
};

test('parses IPv4 and IPv6 prefixes and clears their host bits', () => {
  assert.equal(normal('10.1.2.3/16'), '10.1.0.0/16');
  assert.equal(normal('192.0.2.7'), '192.0.2.7/32');
  assert.equal(normal('FD00:0:0:0:1::/64'), 'fd00::/64');
  assert.equal(normal('2001:db8::1'), '2001:db8::1/128');
  assert.equal(normal('::/0'), '::/0');
  for (const bad of ['10.0.0.0/33', '10.0.0/8', '300.0.0.0/8', 'fd00::1::2/64', 'x', '10.0.0.0/8/1'])
    assert.equal(parseCidr(bad), undefined, bad);
});

test('an ipBlock except becomes the fewest prefixes covering what is left', () => {
  assert.deepEqual(subtractCidrs('172.17.0.0/16', ['172.17.1.0/24']), [
    '172.17.0.0/24',
    '172.17.2.0/23',
    '172.17.4.0/22',
    '172.17.8.0/21',
    '172.17.16.0/20',
    '172.17.32.0/19',
    '172.17.64.0/18',
    '172.17.128.0/17',
  ]);
  assert.deepEqual(subtractCidrs('10.0.0.0/24', []), ['10.0.0.0/24']);
  assert.deepEqual(subtractCidrs('10.0.0.0/24', ['10.0.0.0/23']), [], 'an except covering all of it');
  assert.deepEqual(subtractCidrs('10.0.0.0/24', ['192.168.0.0/16', 'fd00::/8']), ['10.0.0.0/24']);
  assert.deepEqual(subtractCidrs('10.0.0.0/30', ['10.0.0.1/32', '10.0.0.2/32']), [
    '10.0.0.0/32',
    '10.0.0.3/32',
  ]);
  assert.deepEqual(subtractCidrs('fd00::/126', ['fd00::/127']), ['fd00::2/127']);
});

test('a cluster CIDR setting: one CIDR, or one per family (dual stack), the primary first', () => {
  assert.deepEqual(cidrList('10.96.0.0/16'), ['10.96.0.0/16']);
  assert.deepEqual(cidrList('fd00:10:96::/112, 10.96.0.0/16'), ['fd00:10:96::/112', '10.96.0.0/16']);
  for (const bad of ['10.96.0.0/16,10.97.0.0/16', '10.96.0.0/16,fd00::/64,fd01::/64', '10.96.0.1', '', 'x/8'])
    assert.equal(splitCidrs(bad), undefined, bad);
});

test("a service subnet's gateway is its last usable address (IPv4 keeps the broadcast free)", () => {
  assert.equal(lastUsableAddress('10.96.0.0/16'), '10.96.255.254');
  assert.equal(lastUsableAddress('10.0.0.0/24'), '10.0.0.254');
  assert.equal(lastUsableAddress('fd00:10:96::/112'), 'fd00:10:96::ffff');
});
