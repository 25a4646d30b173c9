/**
 * The service stops and starts again between two cosigners' signatures, on a real Bitcoin Core: the
 * first signature, the pending PSBT and its reserved coin are all still there after the restart (same
 * data folder, or same PostgreSQL schema), and the second cosigner's copy completes and broadcasts it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../support/server.js';
import { Chain, Client, cosign, describeWithBitcoind, fixtureWallets, psbtInputs, sats, serviceEnv } from './chain-world.js';

const FUNDED = 40_000_000;
const PAYMENT = 15_000_000;

describeWithBitcoind('a restart between two cosigners', () => {
  let chain: Chain;
  beforeAll(async () => {
    chain = await Chain.start();
  });
  afterAll(async () => {
    await chain?.stop();
  });

  const cases = [
    { database: 'sqlite', id: 'w_shwsh2of3' },
    { database: 'postgres', id: 'w_wsh2of3' },
  ] as const;

  for (const { database, id } of cases) {
    describe(database, () => {
      const servers: TestServer[] = [];
      afterAll(async () => {
        // The later servers reuse the first one's data folder and schema; the first removes them.
        for (const server of servers.slice(1)) await server.stop();
        await servers[0]?.dispose();
      });

      it(`${id}: the first signature survives the restart, the second completes the PSBT, which is broadcast and mined`, async () => {
        const env = { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn' };
        const first = await startTestServer({ database, env });
        servers.push(first);
        let client = await Client.forAdmin(first);
        const wallet = fixtureWallets[id]!;
        await client.importWallet(id, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
        const watcher = await chain.watcher(id, wallet);
        const [signerA, signerC] = await Promise.all([wallet.keys[0]!, wallet.keys[2]!].map((key) => chain.signer(`${id}-${key.key}`, wallet, key)));
        await chain.pay([{ address: await client.nextAddress(id), sat: FUNDED }]);
        await chain.mine(1);
        await client.waitForBalance(id, { total: FUNDED, confirmed: FUNDED });

        const recipient = await chain.minerAddressOf('bech32');
        const created = await client.createPsbt(id, { recipients: [{ address: recipient, amount: PAYMENT, unit: 'sat' }], fee_rate: '4' });
        const txid: string = created.tx.txid;
        const unsigned = await client.psbtBase64(id, txid);
        const copyA = await cosign(signerA!, unsigned);
        const copyC = await cosign(signerC!, unsigned);
        const put = await client.putPsbt(id, txid, copyA);
        expect(put.status, put.text).toBe(200);
        expect(put.body.result.sigs_count).toBe(1);

        await first.stop();
        const second = await startTestServer({ database, env, dataFolder: first.dataFolder, ...(first.postgresSchema ? { postgresSchema: first.postgresSchema } : {}) });
        servers.push(second);
        // The same token: the signing key is kept in the data folder.
        client = client.on(second.api);

        const after = await client.psbtRecord(id, txid);
        expect(after.sigs_count, 'the first signature after the restart').toBe(1);
        expect(after.base64).toBe(await client.psbtBase64(id, txid));
        expect(Object.keys(await client.psbts(id))).toEqual([txid]);
        const details = await client.details(id);
        expect(details.utxo.filter((u: any) => u.reserved_by === txid).map((u: any) => `${u.txid}:${u.vout}`)).toEqual(psbtInputs(created));

        const putC = await client.putPsbt(id, txid, copyC);
        expect(putC.status, putC.text).toBe(200);
        expect(putC.body.result.sigs_count).toBe(2);
        const sent = await client.broadcast(id, txid);
        expect(sent.status, sent.text).toBe(200);
        expect(await chain.inMempool(sent.body.txid), 'the transaction in Core\'s mempool').toBe(true);
        const fee = sats((await chain.rpc.call('getmempoolentry', [sent.body.txid])).fees.base);

        await chain.mine(1);
        const expected = FUNDED - PAYMENT - fee;
        expect(await chain.coreBalance(watcher)).toEqual({ confirmed: expected, unconfirmed: 0, immature: 0, total: expected });
        await client.waitForBalance(id, { total: expected, confirmed: expected });
        expect(await client.psbts(id)).toEqual({});
      });
    });
  }
});
