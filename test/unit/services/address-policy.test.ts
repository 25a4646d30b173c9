/** Where webhooks may deliver: never link-local, metadata, unspecified, multicast or reserved; private only when allowed. */
import { describe, expect, it } from 'vitest';
import { refusedAddress } from '../../../src/services/events/address-policy.js';

const NEVER = ['169.254.169.254', '169.254.0.1', '100.100.100.200', '192.0.0.192', '0.0.0.0', '224.0.0.251', '255.255.255.255', '240.0.0.1', '::', 'fe80::1', 'fd00:ec2::254', 'ff02::1', '::ffff:169.254.169.254'];
const PRIVATE = ['127.0.0.1', '127.8.9.10', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '::1', 'fd12:3456::1', '::ffff:127.0.0.1', '[::1]'];
const PUBLIC = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

describe('refusedAddress', () => {
  it('refuses link-local, metadata, unspecified, multicast and reserved addresses, even when private ones are allowed', () => {
    for (const address of NEVER) {
      expect(refusedAddress(address, true), address).toMatch(/link-local|metadata/);
      expect(refusedAddress(address, false), address).toBeDefined();
    }
  });

  it('refuses loopback and private addresses unless allowed', () => {
    for (const address of PRIVATE) {
      expect(refusedAddress(address, false), address).toMatch(/webhook_allow_private/);
      expect(refusedAddress(address, true), address).toBeUndefined();
    }
  });

  it('allows public addresses and refuses what is not an address', () => {
    for (const address of PUBLIC) expect(refusedAddress(address, false), address).toBeUndefined();
    expect(refusedAddress('example.org', true)).toBe('not an IP address');
  });
});

describe('refusedAddress on IPv6 addresses that carry an IPv4 address', () => {
  const judged: Array<[string, 'never' | 'private' | 'public']> = [
    ['::ffff:7f00:1', 'private'], // mapped, hex form
    ['::ffff:0:7f00:1', 'private'], // IPv4-translated (SIIT)
    ['::ffff:0:808:808', 'public'],
    ['64:ff9b::7f00:1', 'private'], // NAT64, well-known prefix
    ['64:ff9b::127.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'never'], // NAT64 to 169.254.169.254
    ['64:ff9b::808:808', 'public'],
    ['2002:7f00:1::', 'private'], // 6to4
    ['2002:a9fe:a9fe::1', 'never'],
    ['2002:0a00:0001:1::5', 'private'],
    ['2002:808:808::1', 'public'],
    ['2001:0:808:808::80ff:fefe', 'private'], // Teredo whose client is 127.0.1.1 (inverted bits)
    ['2001:0:7f00:1::f7f7:f7f7', 'private'], // Teredo whose server is loopback
    ['2001:0:808:808::f7f7:f7f7', 'public'],
  ];

  it('judges them by the IPv4 address they carry, in any spelling', () => {
    for (const [address, verdict] of judged) {
      for (const spelled of [address, `[${address}]`, address.toUpperCase()]) {
        const strict = refusedAddress(spelled, false);
        const lenient = refusedAddress(spelled, true);
        if (verdict === 'never') expect([strict, lenient], spelled).toEqual([expect.stringMatching(/link-local|metadata/), expect.stringMatching(/link-local|metadata/)]);
        if (verdict === 'private') expect([strict, lenient], spelled).toEqual([expect.stringMatching(/webhook_allow_private/), undefined]);
        if (verdict === 'public') expect([strict, lenient], spelled).toEqual([undefined, undefined]);
      }
    }
  });

  it('refuses the deprecated IPv4-compatible form whatever it carries', () => {
    for (const address of ['::7f00:1', '::127.0.0.1', '::808:808', '::8.8.8.8', '0:0:0:0:0:0:a00:1']) {
      expect(refusedAddress(address, false), address).toMatch(/IPv4-compatible/);
      expect(refusedAddress(address, true), address).toMatch(/IPv4-compatible/);
    }
  });

  it('treats site-local and local-use NAT64 as private, documentation and discard ranges as never', () => {
    for (const address of ['fec0::1', 'feff::1', '64:ff9b:1::808:808']) {
      expect(refusedAddress(address, false), address).toMatch(/webhook_allow_private/);
      expect(refusedAddress(address, true), address).toBeUndefined();
    }
    for (const address of ['2001:db8::1', '3fff::1', '100::1', '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.88.99.1']) expect(refusedAddress(address, true), address).toMatch(/documentation or reserved/);
    expect(refusedAddress('fe80::1%eth0', true)).toMatch(/link-local/);
  });
});
