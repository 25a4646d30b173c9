/**
 * Where webhooks may deliver (docs/webhooks.md): never to unspecified, link-local (cloud metadata lives
 * there), multicast, broadcast or reserved addresses; to loopback and private ones only when the operator
 * allows it (`webhook_allow_private`). Applied to every address a host name resolves to, at delivery time.
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
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
  ['::', 128, 'ipv6'], // unspecified
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
]);

/** Why an address is refused, or undefined when a webhook may deliver to it. */
export function refusedAddress(address: string, allowPrivate: boolean): string | undefined {
  let ip = address.replace(/^\[|\]$/g, '');
  // An IPv4 address written as IPv6 (::ffff:a.b.c.d) is that IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (type === 'ipv6' && /^::ffff:/i.test(ip)) return 'an IPv4-mapped address in an unexpected form';
  if (NEVER.check(ip, type)) return 'a link-local, metadata, unspecified, multicast or reserved address';
  if (!allowPrivate && PRIVATE.check(ip, type)) return 'a loopback or private address (allowed only with webhook_allow_private)';
  return undefined;
}
