import { BlockList } from 'node:net';
import { embeddedIpv4, ipFamily, ipv6Groups, stripZone } from './internal/ip.js';

/**
 * What an IP address is, for the address policy (SPEC.md §7). Only `public` is reachable by default;
 * `loopback`, `private` and `shared` become reachable for hosts opted in with `allowPrivateNetwork`;
 * every other kind stays denied whatever the options.
 */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'invalid';

/** The kinds an `allowPrivateNetwork` opt-in unlocks. Metadata, link-local and the rest stay denied. */
export const OPT_IN_ADDRESS_KINDS: ReadonlySet<AddressKind> = new Set(['loopback', 'private', 'shared']);

type Table = readonly (readonly [kind: AddressKind, cidrs: readonly string[]])[];

/** Checked in order: metadata first so it wins over the wider range it sits in. */
const V4: Table = [
  ['metadata', ['169.254.169.254/32', '169.254.170.2/32', '169.254.170.23/32', '100.100.100.200/32']],
  ['unspecified', ['0.0.0.0/8']],
  ['loopback', ['127.0.0.0/8']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['shared', ['100.64.0.0/10']],
  ['link-local', ['169.254.0.0/16']],
  ['multicast', ['224.0.0.0/4']],
  [
    'reserved',
    // IETF protocol assignments, documentation, 6to4 relay anycast, benchmarking, class E and broadcast.
    [
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '192.88.99.0/24',
      '198.18.0.0/15',
      '240.0.0.0/4',
    ],
  ],
];

const V6: Table = [
  ['metadata', ['fd00:ec2::254/128', 'fd00:ec2::23/128']],
  ['unspecified', ['::/128']],
  ['loopback', ['::1/128']],
  ['link-local', ['fe80::/10']],
  // Unique local, deprecated site-local, local-use NAT64 (RFC 8215).
  ['private', ['fc00::/7', 'fec0::/10', '64:ff9b:1::/48']],
  ['multicast', ['ff00::/8']],
  // Discard-only, IETF protocol assignments (Teredo 2001::/32 included: its embedded address is obfuscated
  // and the relay is a third party), documentation, SRv6 SIDs, the rest of ::/8.
  ['reserved', ['100::/64', '2001::/23', '2001:db8::/32', '3fff::/20', '5f00::/16', '::/8']],
];

interface CompiledTable {
  readonly kind: AddressKind;
  readonly list: BlockList;
}

function compileTable(table: Table, family: 'ipv4' | 'ipv6'): CompiledTable[] {
  return table.map(([kind, cidrs]) => {
    const list = new BlockList();
    for (const cidr of cidrs) {
      const [net = '', bits = ''] = cidr.split('/');
      list.addSubnet(net, Number(bits), family);
    }
    return { kind, list };
  });
}

const V4_TABLE = compileTable(V4, 'ipv4');
const V6_TABLE = compileTable(V6, 'ipv6');
/** Global unicast space; anything outside it that no row names is unassigned and treated as reserved. */
const V6_GLOBAL = compileTable([['public', ['2000::/3']]], 'ipv6')[0]!.list;

function classifyV4(ip: string): AddressKind {
  for (const row of V4_TABLE) if (row.list.check(ip, 'ipv4')) return row.kind;
  return 'public';
}

function classifyV6(ip: string): AddressKind {
  const v4 = embeddedIpv4(ipv6Groups(ip));
  if (v4 !== undefined) return classifyV4(v4);
  for (const row of V6_TABLE) if (row.list.check(ip, 'ipv6')) return row.kind;
  return V6_GLOBAL.check(ip, 'ipv6') ? 'public' : 'reserved';
}

/**
 * Classifies an IP address given as text (a DNS answer or the normalised host of a URL, with or without
 * IPv6 brackets or zone id). IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4) are classified
 * as the IPv4 address they carry. Anything that is not a valid address is `invalid` (and denied).
 *
 * @throws never
 */
export function classifyAddress(ip: string): AddressKind {
  const bare = stripZone(ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip);
  const family = ipFamily(bare);
  if (family === 4) return classifyV4(bare);
  if (family === 6) return classifyV6(bare);
  return 'invalid';
}

/**
 * True when `ip` is anything but a public address (see {@link classifyAddress}).
 *
 * @throws never
 */
export function isPrivateAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public';
}

/**
 * True when a host may connect to an address of this kind: public always; loopback, private and shared only
 * with `allowPrivateNetwork`; never metadata, link-local, unspecified, multicast, reserved or invalid.
 *
 * @throws never
 */
export function isAddressKindAllowed(kind: AddressKind, allowPrivateNetwork: boolean): boolean {
  return kind === 'public' || (allowPrivateNetwork && OPT_IN_ADDRESS_KINDS.has(kind));
}
