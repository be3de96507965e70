import { isIP } from 'node:net';

/** IPv4 dotted quad (already validated by `isIP`) as an unsigned 32-bit integer. */
export function ipv4ToInt(ip: string): number {
  let n = 0;
  for (const part of ip.split('.')) n = n * 256 + Number(part);
  return n >>> 0;
}

/** Unsigned 32-bit integer as a dotted quad. */
export function intToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}

/** Strips an IPv6 zone id (`fe80::1%eth0`). */
export function stripZone(ip: string): string {
  const pct = ip.indexOf('%');
  return pct < 0 ? ip : ip.slice(0, pct);
}

/**
 * The eight 16-bit groups of an IPv6 address that `isIP` accepted (zone id already stripped), with an embedded
 * dotted quad (`::ffff:1.2.3.4`) folded into the last two groups.
 */
export function ipv6Groups(ip: string): number[] {
  let text = ip;
  let v4: number | undefined;
  if (text.includes('.')) {
    const last = text.lastIndexOf(':');
    v4 = ipv4ToInt(text.slice(last + 1));
    text = `${text.slice(0, last + 1)}0:0`;
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? new Array<string>(8 - head.length - tail.length).fill('0') : [];
  const groups = [...head, ...fill, ...tail].map((g) => parseInt(g, 16));
  if (v4 !== undefined) {
    groups[6] = v4 >>> 16;
    groups[7] = v4 & 0xffff;
  }
  return groups;
}

/**
 * The IPv4 address embedded in an IPv6 address by a translation or tunnelling scheme, else undefined:
 * IPv4-mapped `::ffff:0:0/96`, SIIT `::ffff:0:0:0/96`, IPv4-compatible `::/96` (except `::` and `::1`),
 * NAT64 `64:ff9b::/96` (RFC 6052) and 6to4 `2002::/16` (RFC 3056, bits 16–47).
 */
export function embeddedIpv4(g: readonly number[]): string | undefined {
  const z = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const low = () => intToIpv4((((g[6] ?? 0) << 16) | (g[7] ?? 0)) >>> 0);
  if (z(0, 5) && g[5] === 0xffff) return low();
  if (z(0, 4) && g[4] === 0xffff && g[5] === 0) return low();
  if (z(0, 6) && !(g[6] === 0 && (g[7] ?? 0) <= 1)) return low();
  if (g[0] === 0x64 && g[1] === 0xff9b && z(2, 6)) return low();
  if (g[0] === 0x2002) return intToIpv4((((g[1] ?? 0) << 16) | (g[2] ?? 0)) >>> 0);
  return undefined;
}

/** `isIP` without a zone id: 4, 6 or 0. */
export function ipFamily(ip: string): 0 | 4 | 6 {
  return isIP(stripZone(ip)) as 0 | 4 | 6;
}
