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
