/**
 * The wallet list shows balances the sync counted as it wrote each wallet (kept per stored revision), not from
 * each wallet's state loaded: the numbers must be those the wallet's details give. Payments (in the mempool,
 * confirmed, an immature coinbase) are made and mined while the list and the details are read again and again;
 * whenever a wallet's details read before and after a list agree, the list shows exactly them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithBitcoind, fixtureWallets, startChainWorld, waitFor, type ChainWorld } from './chain-world.js';

const IDS = ['w_wpkh', 'w_tr', 'w_wsh2of3', 'w_shwpkh'] as const;
const ROUNDS = 12;

describeWithBitcoind('wallet list balances during the sync', () => {
  for (const database of ['sqlite', 'postgres'] as const) {
    describe(database, () => {
      let world: ChainWorld;
      beforeAll(async () => {
        world = await startChainWorld({ database });
        const birthday = await world.chain.height();
        for (const id of IDS) {
          const { recv_descriptor, change_descriptor } = fixtureWallets[id]!;
          await world.client.importWallet(id, { recv_descriptor, change_descriptor, birthday });
        }
        for (const id of IDS) await waitFor(async () => (await world.client.details(id)).scan === null, `${id} to reach the tip`);
      }, 120_000);
      afterAll(async () => {
        await world?.close();
      });

      const listed = async (): Promise<Map<string, unknown>> => {
        const page = await world.client.ok('GET', '/wallets?limit=50');
        return new Map(page.wallets.map((w: any) => [w.alias, w.balance]));
      };
      const detailed = async (): Promise<Map<string, unknown>> => new Map(await Promise.all(IDS.map(async (id) => [id, (await world.client.details(id)).balance] as const)));

      it('shows the balances of the details while payments and blocks come in, and once they stop', async () => {
        const { chain, client } = world;
        let paying = true;
        const payer = (async () => {
          for (let round = 0; round < ROUNDS; round++) {
            const id = IDS[round % IDS.length]!;
            const address = await client.nextAddress(id);
            if (round % 4 === 3) await chain.mine(1, address); // a coinbase: immature for 100 blocks
            else await chain.pay([{ address, sat: 10_000 + round }]);
            if (round % 2 === 1) await chain.mine(1);
          }
          paying = false;
        })();
        let compared = 0;
        try {
          while (paying) {
            const before = await detailed();
            const list = await listed();
            const after = await detailed();
            for (const id of IDS) {
              if (JSON.stringify(before.get(id)) !== JSON.stringify(after.get(id))) continue; // written between the reads
              expect(list.get(id), `${id} in the list`).toEqual(after.get(id));
              compared++;
            }
          }
        } finally {
          await payer;
        }
        expect(compared).toBeGreaterThan(0);
        await chain.mine(1);
        // Once the sync took the last block: every balance of the list is its details' (immature ones included).
        const settled = await waitFor(async () => {
          const before = await detailed();
          const list = await listed();
          const after = await detailed();
          return JSON.stringify([...before]) === JSON.stringify([...after]) && (after.get(IDS[0]) as any).confirmed_sat > 0 && { list, after };
        }, 'the balances to settle');
        for (const id of IDS) expect(settled.list.get(id), id).toEqual(settled.after.get(id));
        expect([...settled.after.values()].some((b: any) => b.immature_sat > 0)).toBe(true);
      }, 180_000);
    });
  }
});
