/**
 * Wallet setup files against a real Bitcoin Core: a 2-of-3 imported from a Coldcard setup file (built from the
 * fixture keys, as the firmware writes it), funded by the node's miner; its exported multipath descriptor
 * gives, through Core's own `deriveaddresses`, exactly the service's receive and change addresses; every
 * other export imported back is a wallet that sees the same coins; the BSMS record's first address is Core's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBitcoind, fixtureWallets, startChainWorld, stripChecksum, type ChainWorld } from './chain-world.js';

const FUNDING = [40_000_000, 25_000_000];
const FUNDED = FUNDING.reduce((a, b) => a + b, 0);
const COUNT = 12;

/** A Coldcard multisig setup file (firmware's render_export layout) for the fixture's 2-of-3. */
function coldcardFile(): string {
  const wallet = fixtureWallets.w_wsh2of3!;
  const lines = ['# Coldcard Multisig setup file (created on 654CF308)', '#', 'Name: Family 2-of-3', `Policy: ${wallet.sigs_required} of ${wallet.keys.length}`, 'Format: P2WSH', ''];
  for (const key of wallet.keys) lines.push(`Derivation: ${key.derivation.replaceAll('h', "'")}`, `${key.fingerprint.toUpperCase()}: ${key.tpub}`, '');
  return lines.join('\n');
}

describeWithBitcoind('wallet setup files against a real Bitcoin Core', () => {
  let world: ChainWorld;
  let alias: string;
  const serviceAddresses = async (name: string, branch: 'receive' | 'change') =>
    ((await world.client.ok('GET', `/wallets/${name}/addresses?branch=${branch}&from=0&count=${COUNT}`)).addresses as Array<{ address: string }>).map((a) => a.address);

  beforeAll(async () => {
    world = await startChainWorld();
    const { chain, client } = world;
    const birthday = await chain.height();
    const created = await client.ok('POST', '/wallets', { import: coldcardFile(), birthday }, 201);
    alias = created.alias;
    expect(created).toMatchObject({ alias: 'family-2-of-3', name: 'Family 2-of-3', address_type: 'bech32', sigs_required: 2, sigs_total: 3 });
    const payments = [];
    for (const sat of FUNDING) payments.push({ address: await client.nextAddress(alias), sat });
    await chain.pay(payments);
    await chain.mine(1);
    await client.waitForBalance(alias, { total: FUNDED, confirmed: FUNDED });
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  it("the exported descriptor derives, in Bitcoin Core, the service's receive and change addresses", async () => {
    const response = await world.client.send('GET', `/wallets/${alias}/export?format=descriptor`);
    expect(response.status).toBe(200);
    const descriptor = response.text.trim();
    expect(descriptor).toContain('/<0;1>/*');
    // Core checks the checksum we wrote, then derives both branches of the multipath descriptor.
    const info = await world.chain.rpc.call<{ checksum: string; isrange: boolean }>('getdescriptorinfo', [stripChecksum(descriptor)]);
    expect(`${stripChecksum(descriptor)}#${info.checksum}`).toBe(descriptor);
    const derived = await world.chain.rpc.call<string[][]>('deriveaddresses', [descriptor, [0, COUNT - 1]]);
    expect(derived).toEqual([await serviceAddresses(alias, 'receive'), await serviceAddresses(alias, 'change')]);
    // The funded addresses are among them: Core sees the payments at the addresses the service handed out.
    const details = await world.client.details(alias);
    for (const coin of details.utxo) expect(derived[0]).toContain(coin.address);
  });

  it('every export imports back as a wallet that sees the same coins; the BSMS first address is Core’s', async () => {
    const exported = (await world.client.send('GET', `/wallets/${alias}/export?format=descriptor`)).text.trim();
    const derivedFirst = (await world.chain.rpc.call<string[][]>('deriveaddresses', [exported, [0, 0]]))[0]![0];
    for (const format of ['descriptor', 'bsms', 'coldcard', 'specter', 'caravan']) {
      const file = (await world.client.send('GET', `/wallets/${alias}/export?format=${format}`)).text;
      if (format === 'bsms') expect(file.trim().split('\n')[3]).toBe(derivedFirst);
      const copy = `copy-${format}`;
      await world.client.ok('POST', '/wallets', { import: file, alias: copy, name: `Copy ${format}`, birthday: (await world.chain.height()) - 1 }, 201);
      await world.client.waitForBalance(copy, { total: FUNDED, confirmed: FUNDED });
      expect(await serviceAddresses(copy, 'receive')).toEqual(await serviceAddresses(alias, 'receive'));
    }
  }, 120_000);
});
