/**
 * A block that pays some followed wallets and only moves the others' tips, on SQLite and PostgreSQL: the sync
 * writes the paid wallets' changes first and the others' sync rows apart, a few hundred a statement. Every wallet
 * must stand at the block with a new revision, the paid ones show their payment confirmed, and the events are
 * those of one write: confirmed at depth 1 for the paid wallets, then at the configured depth from a block that
 * moves every wallet's tip alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Chain, Client, describeWithBitcoind, fixtureWallets, serviceEnv, waitFor } from './chain-world.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import type { Store } from '../../../src/store/repositories.js';

const PAID = ['w_wpkh', 'w_tr'] as const;
const UNPAID = ['w_wsh2of3', 'w_shwsh2of3', 'w_pkh'] as const;
const DEPTH = 2;
const AMOUNT = 30_000_000;

describeWithBitcoind('a block paying a few of the followed wallets', () => {
  describe.each(['sqlite', 'postgres'] as const)('on %s', (database) => {
    let chain: Chain;
    let server: TestServer;
    let client: Client;
    let store: Store;
    const ids = new Map<string, string>();

    beforeAll(async () => {
      chain = await Chain.start();
      server = await startTestServer({ database, env: { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn', SERVICE_CONFIRMATIONS_NOTIFY: String(DEPTH) } });
      client = await Client.forAdmin(server);
      store = server.running.runtime.store;
    }, 120_000);
    afterAll(async () => {
      await server?.dispose();
      await chain?.stop();
    });

    const stored = async (alias: string) => (await store.wallets.findById(ids.get(alias)!))!;
    const eventsOf = async (alias: string, after: number) => (await store.events.listAfter(after, [ids.get(alias)!], 100)).map((e) => ({ type: e.type, ...e.data }));

    it('every wallet at the block with a new revision, the paid ones confirmed, each event once', async () => {
      const birthday = await chain.height();
      for (const alias of [...PAID, ...UNPAID]) {
        const wallet = fixtureWallets[alias]!;
        await client.importWallet(alias, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday });
        ids.set(alias, (await store.wallets.findByAlias(alias))!.id);
      }
      for (const alias of ids.keys()) await waitFor(async () => (await client.details(alias)).scan === null, `${alias} at the tip`);
      const txid = await chain.pay(await Promise.all(PAID.map(async (alias) => ({ address: await client.nextAddress(alias), sat: AMOUNT }))));
      for (const alias of PAID) await client.waitForTransaction(alias, txid, (n) => n === 0, 'the payment in the mempool');
      const before = new Map(await Promise.all([...ids.keys()].map(async (alias) => [alias, (await stored(alias)).revision] as const)));
      const seq = await store.events.lastSeq();

      const [block] = await chain.mine(1);
      for (const alias of ids.keys()) await waitFor(async () => (await stored(alias)).tip?.hash === block, `${alias}'s stored tip at the block`);
      for (const alias of ids.keys()) {
        const wallet = await stored(alias);
        expect(wallet.tip, alias).toEqual({ height: birthday + 1, hash: block });
        expect(wallet.revision, alias).toBeGreaterThan(before.get(alias)!);
      }
      for (const alias of PAID) {
        const shown = (await client.details(alias)).txlist.find((t: any) => t.txid === txid);
        expect(shown, alias).toMatchObject({ confirmations: 1, blockhash: block, blockheight: birthday + 1 });
        expect((await client.details(alias)).balance).toMatchObject({ confirmed_sat: AMOUNT, unconfirmed_sat: 0 });
        const confirmed = (await eventsOf(alias, seq)).filter((e) => e.type === 'transaction.confirmed');
        expect(confirmed, alias).toEqual([expect.objectContaining({ txid, confirmations: 1, block_hash: block })]);
      }
      for (const alias of UNPAID) {
        expect((await client.details(alias)).txlist, alias).toEqual([]);
        expect(await eventsOf(alias, seq), alias).toEqual([]);
      }

      // The next block pays nobody: every wallet's change is its sync row alone, and the payment reaches the depth.
      const afterFirst = new Map(await Promise.all([...ids.keys()].map(async (alias) => [alias, (await stored(alias)).revision] as const)));
      const seqAfterFirst = await store.events.lastSeq();
      const next = await chain.mineEmpty();
      for (const alias of ids.keys()) await waitFor(async () => (await stored(alias)).tip?.hash === next, `${alias}'s stored tip at the next block`);
      for (const alias of ids.keys()) expect((await stored(alias)).revision, alias).toBeGreaterThan(afterFirst.get(alias)!);
      for (const alias of PAID) {
        await client.waitForTransaction(alias, txid, (n) => n === DEPTH, `the payment at ${DEPTH} confirmations`);
        const confirmed = (await eventsOf(alias, seqAfterFirst)).filter((e) => e.type === 'transaction.confirmed');
        expect(confirmed, alias).toEqual([expect.objectContaining({ txid, confirmations: DEPTH, block_hash: block })]);
      }
      for (const alias of UNPAID) expect(await eventsOf(alias, seqAfterFirst), alias).toEqual([]);
    }, 180_000);
  });
});
