import { describe, expect, it } from 'vitest';
import type { AddressKind } from '../src/index.js';
import { classifyAddress, isAddressKindAllowed, isPrivateAddress } from '../src/index.js';

const table: [string, AddressKind][] = [
  // S39 list
  ['127.0.0.1', 'loopback'],
  ['169.254.169.254', 'metadata'],
  ['10.0.0.5', 'private'],
  ['100.64.0.1', 'shared'],
  ['::1', 'loopback'],
  ['fd00::1', 'private'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['2002:a9fe:a9fe::', 'metadata'],
  ['::ffff:127.0.0.1', 'loopback'],
  // IPv4 ranges
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['127.255.255.254', 'loopback'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.1', 'public'],
  ['192.168.1.1', 'private'],
  ['100.127.255.255', 'shared'],
  ['100.128.0.1', 'public'],
  ['169.254.0.1', 'link-local'],
  ['169.254.170.2', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['192.0.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.51.100.1', 'reserved'],
  ['203.0.113.1', 'reserved'],
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  // IPv6 ranges
  ['::', 'unspecified'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fc00::1', 'private'],
  ['fec0::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['ff02::1', 'multicast'],
  ['100::1', 'reserved'],
  ['2001::1', 'reserved'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['::2:3:4:5', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:82b::200e', 'public'],
  // embedded IPv4: mapped, SIIT, compatible, NAT64, 6to4
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:0:7f00:1', 'loopback'],
  ['::127.0.0.1', 'loopback'],
  ['::7f00:1', 'loopback'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['64:ff9b:1::a9fe:a9fe', 'private'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:0a00:0001::1', 'private'],
  ['2002:0808:0808::1', 'public'],
  ['[::1]', 'loopback'],
  ['[::ffff:7f00:1]', 'loopback'],
  // not addresses
  ['0177.0.0.1', 'invalid'],
  ['127.1', 'invalid'],
  ['2130706433', 'invalid'],
  ['localhost', 'invalid'],
  ['', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
];

describe('classifyAddress', () => {
  it.each(table)('S39: classifies %s as %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
    expect(isPrivateAddress(ip)).toBe(kind !== 'public');
  });
});

describe('isAddressKindAllowed', () => {
  it('S39: without the opt-in only public addresses are allowed', () => {
    for (const [, kind] of table) expect(isAddressKindAllowed(kind, false)).toBe(kind === 'public');
  });

  it('S39: the opt-in unlocks loopback, private and shared; metadata and the rest stay denied', () => {
    const unlocked = new Set<AddressKind>(['public', 'loopback', 'private', 'shared']);
    for (const [, kind] of table) expect(isAddressKindAllowed(kind, true)).toBe(unlocked.has(kind));
    expect(isAddressKindAllowed('metadata', true)).toBe(false);
    expect(isAddressKindAllowed('link-local', true)).toBe(false);
    expect(isAddressKindAllowed('unspecified', true)).toBe(false);
  });
});
