/**
 * Where webhooks may deliver (docs/webhooks.md): never to unspecified, link-local (cloud metadata lives
 * there), multicast, broadcast, documentation or reserved addresses; to loopback and private ones only when
 * the operator allows it (`webhook_allow_private`). An IPv6 address that carries an IPv4 address (mapped,
 * NAT64, 6to4, Teredo) reaches that IPv4 address, so it is judged by it; the deprecated IPv4-compatible form
 * is refused. Applied at registration to an address written in the URL, and at every delivery to every
 * address the host name resolves to.
 */
import { BlockList, isIP } from 'node:net';

function list(entries: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']>): BlockList {
  const blocks = new BlockList();
  for (const [address, prefix, family] of entries) blocks.addSubnet(address, prefix, family);
  return blocks;
}

const NEVER = list([
  ['0.0.0.0', 8, 'ipv4'], // "this network", unspecified
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata (169.254.169.254)
  ['100.100.100.200', 32, 'ipv4'], // Alibaba Cloud metadata
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments (Oracle Cloud metadata 192.0.0.192)
  ['192.0.2.0', 24, 'ipv4'], // documentation (TEST-NET-1)
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast (deprecated)
  ['198.51.100.0', 24, 'ipv4'], // documentation (TEST-NET-2)
  ['203.0.113.0', 24, 'ipv4'], // documentation (TEST-NET-3)
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
  ['::', 128, 'ipv6'], // unspecified
  ['100::', 64, 'ipv6'], // discard-only
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['3fff::', 20, 'ipv6'], // documentation
  ['fe80::', 10, 'ipv6'], // link-local
  ['fd00:ec2::', 32, 'ipv6'], // AWS metadata (fd00:ec2::254)
  ['ff00::', 8, 'ipv6'], // multicast
]);

const PRIVATE = list([
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'], // unique local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated, private by design)
  ['64:ff9b:1::', 48, 'ipv6'], // NAT64 for local use: translates to the operator's own networks
]);

const NEVER_TEXT = 'a link-local, metadata, unspecified, multicast, documentation or reserved address';
const PRIVATE_TEXT = 'a loopback or private address (allowed only with webhook_allow_private)';

/** Why an address is refused, or undefined when a webhook may deliver to it. */
export function refusedAddress(address: string, allowPrivate: boolean): string | undefined {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 4) return refusedIpv4(ip, allowPrivate);
  const bytes = ipv6Bytes(ip);
  if (!bytes) return 'not an IP address';
  const carried = carriedIpv4(bytes);
  if (carried === 'deprecated') return 'an IPv4-compatible IPv6 address (deprecated)';
  if (carried) {
    for (const v4 of carried.addresses) {
      const refused = refusedIpv4(v4, allowPrivate);
      if (refused) return `${refused}, carried by ${carried.kind} address`;
    }
    return undefined;
  }
  const canonical = ipv6Text(bytes);
  if (NEVER.check(canonical, 'ipv6')) return NEVER_TEXT;
  if (!allowPrivate && PRIVATE.check(canonical, 'ipv6')) return PRIVATE_TEXT;
  return undefined;
}

function refusedIpv4(ip: string, allowPrivate: boolean): string | undefined {
  if (NEVER.check(ip, 'ipv4')) return NEVER_TEXT;
  if (!allowPrivate && PRIVATE.check(ip, 'ipv4')) return PRIVATE_TEXT;
  return undefined;
}

const startsWith = (bytes: Uint8Array, prefix: readonly number[]) => prefix.every((b, i) => bytes[i] === b);
const ipv4At = (bytes: Uint8Array, at: number, mask = 0) => Array.from(bytes.subarray(at, at + 4), (b) => b ^ mask).join('.');
const ZEROS_10 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/** The IPv4 address(es) an IPv6 address sends to, by the standard embeddings; 'deprecated' for ::a.b.c.d. */
function carriedIpv4(bytes: Uint8Array): { kind: string; addresses: string[] } | 'deprecated' | undefined {
  if (startsWith(bytes, [...ZEROS_10, 0xff, 0xff])) return { kind: 'an IPv4-mapped', addresses: [ipv4At(bytes, 12)] }; // ::ffff:0:0/96
  if (startsWith(bytes, [...ZEROS_10, 0, 0])) {
    // ::/96 other than :: and ::1 (judged as themselves)
    return bytes.subarray(12, 15).every((b) => b === 0) && bytes[15]! <= 1 ? undefined : 'deprecated';
  }
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0])) return { kind: 'an IPv4-translated', addresses: [ipv4At(bytes, 12)] }; // ::ffff:0:0:0/96
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return { kind: 'a NAT64', addresses: [ipv4At(bytes, 12)] }; // 64:ff9b::/96
  if (startsWith(bytes, [0x20, 0x02])) return { kind: 'a 6to4', addresses: [ipv4At(bytes, 2)] }; // 2002::/16
  // Teredo (2001::/32): the server, and the client with its bits inverted.
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return { kind: 'a Teredo', addresses: [ipv4At(bytes, 4), ipv4At(bytes, 12, 0xff)] };
  return undefined;
}

/** The 16 bytes of an IPv6 address in any textual form (zone index dropped); undefined when malformed. */
function ipv6Bytes(text: string): Uint8Array | undefined {
  let ip = text.replace(/%.*$/, '');
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (dotted) {
    if (isIP(dotted[2]!) !== 4) return undefined;
    const [a, b, c, d] = dotted[2]!.split('.').map(Number) as [number, number, number, number];
    ip = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = ip.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes = new Uint8Array(16);
  for (const [i, group] of all.entries()) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined;
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  }
  return bytes;
}

const ipv6Text = (bytes: Uint8Array) => Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16)).join(':');
