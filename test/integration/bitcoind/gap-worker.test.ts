/**
 * The built service (`wcs serve`, whose new wallets' gaps are derived on a worker thread) on a real Bitcoin Core:
 * payments to receive and change addresses deep in a new wallet's first gap, never handed out by the service,
 * are found and confirmed. The addresses are derived here, apart from the service.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../../../src/core/network.js';
import { branchDeriver } from '../../../src/services/miniscript-wallet.js';
import { createSharedStore, startInstance, stopInstance, type Instance, type SharedStore } from '../../support/instances.js';
import { createToken, TEST_ADMIN_PASSWORD, type TestServer } from '../../support/server.js';
import { Chain, Client, describeWithBitcoind, fixtureWallets, serviceEnv } from './chain-world.js';

describeWithBitcoind('a new wallet\'s first gap, derived off the request thread by the built service', () => {
  let chain: Chain;
  let store: SharedStore;
  let instance: Instance | undefined;
  beforeAll(async () => {
    chain = await Chain.start();
    store = await createSharedStore('sqlite');
  });
  afterAll(async () => {
    if (instance) await stopInstance(instance);
    await store?.dispose();
    await chain?.stop();
  });

  it('finds payments to receive index 17 and change index 19 of wallets created over the API, at those indexes', async () => {
    instance = await startInstance(store, 'gap', serviceEnv(chain.node));
    const token = (await createToken({ api: instance.api } as TestServer, 'admin', TEST_ADMIN_PASSWORD, 'gap worker')).jwt_token as string;
    const client = new Client(instance.api, token);
    const payments: { alias: string; address: string; sat: number }[] = [];
    for (const [k, id] of (['w_wsh2of3', 'w_wpkh', 'w_shwsh2of3'] as const).entries()) {
      const wallet = fixtureWallets[id]!;
      await client.importWallet(id, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, gap_limit: 20 });
      const receive = branchDeriver(wallet.recv_descriptor, NETWORKS.regtest).deriveRange(17, 1)[0]!.address;
      const change = branchDeriver(wallet.change_descriptor, NETWORKS.regtest).deriveRange(19, 1)[0]!.address;
      payments.push({ alias: id, address: receive, sat: 100_000 + k }, { alias: id, address: change, sat: 200_000 + k });
    }
    await chain.pay(payments.map(({ address, sat }) => ({ address, sat })));
    await chain.mine(1);
    for (const alias of new Set(payments.map((p) => p.alias))) {
      const total = payments.filter((p) => p.alias === alias).reduce((sum, p) => sum + p.sat, 0);
      const balance = await client.waitForBalance(alias, { total, confirmed: total });
      expect(balance.confirmed_sat).toBe(total);
      // The next unused addresses follow the paid ones: each script was derived at its own index.
      const wallet = fixtureWallets[alias]!;
      const details = await client.details(alias);
      expect({ index: details.address_index, address: details.address }).toEqual({ index: 18, address: branchDeriver(wallet.recv_descriptor, NETWORKS.regtest).deriveRange(18, 1)[0]!.address });
      expect({ index: details.change_index, address: details.change_address }).toEqual({ index: 20, address: branchDeriver(wallet.change_descriptor, NETWORKS.regtest).deriveRange(20, 1)[0]!.address });
    }
  });
});
