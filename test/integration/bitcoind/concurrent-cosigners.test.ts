/**
 * Three cosigners of a 3-of-3 wallet send their signed copies at the same moment: no signature may be
 * lost, whatever the store (SQLite, PostgreSQL, two service instances sharing one PostgreSQL database
 * with the PUTs split across them). The race is run several times per store so a lost update cannot
 * hide, and each result is then broadcast to a real Bitcoin Core. A PUT to a PSBT deleted meanwhile
 * never answers 200.
 */
import { HDKey } from '@scure/bip32';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { loadFixture } from '../../support/fixtures.js';
import { createSharedStore, killStartedInstances, startInstance, stopInstance, type Instance, type SharedStore } from '../../support/instances.js';
import { TEST_ADMIN_PASSWORD, basicAuth, request, startTestServer, type TestServer } from '../../support/server.js';
import { Chain, Client, cosign, describeWithBitcoind, psbtInputs, serviceEnv } from './chain-world.js';

const TESTNET_VERSIONS = { private: 0x04358394, public: 0x043587cf };
const masterKeys = loadFixture('keys') as Record<'A' | 'B' | 'C', { fingerprint: string; tprv: string }>;

/** Keys A, B, C at m/48'/1'/<account>'/2' (BIP48 P2WSH): a wallet of its own for each account number. */
function accountKeys(account: number): Array<{ origin: string; tpub: string; tprv: string }> {
  return (['A', 'B', 'C'] as const).map((name) => {
    const master = HDKey.fromExtendedKey(masterKeys[name].tprv, TESTNET_VERSIONS);
    const derived = master.derive(`m/48'/1'/${account}'/2'`);
    return { origin: `[${masterKeys[name].fingerprint}/48h/1h/${account}h/2h]`, tpub: derived.publicExtendedKey, tprv: derived.privateExtendedKey };
  });
}

const ROUNDS = 5;
const COIN = 10_000_000;
const PAYMENT = 5_000_000;
const ALIAS = 'vault3of3';

/** Where the service runs: one or more instances on one store, each reached by its own client. */
interface Deployment {
  clients: Client[];
  close(): Promise<void>;
}

async function singleServer(chain: Chain, database: 'sqlite' | 'postgres'): Promise<Deployment> {
  const server: TestServer = await startTestServer({ database, env: { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn' } });
  return { clients: [await Client.forAdmin(server)], close: () => server.dispose() };
}

async function twoInstances(chain: Chain): Promise<Deployment> {
  const store: SharedStore = await createSharedStore('postgres');
  const instances: Instance[] = [];
  try {
    instances.push(...(await Promise.all(['a', 'b'].map((name) => startInstance(store, name, serviceEnv(chain.node))))));
    const token = await request(`${instances[0]!.api}/token`, {
      method: 'POST',
      headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) },
      json: { jwt_token_description: 'cosigner race', jwt_token_life: '1 hours' },
    });
    expect(token.status, token.text).toBe(201);
    return {
      clients: instances.map((i) => new Client(i.api, token.body.jwt_token)),
      async close() {
        await Promise.all(instances.map((i) => stopInstance(i)));
        await store.dispose();
      },
    };
  } catch (error) {
    await Promise.all(instances.map((i) => stopInstance(i)));
    await store.dispose();
    throw error;
  }
}

describeWithBitcoind('three cosigners sign a 3-of-3 PSBT at the same moment', () => {
  let chain: Chain;

  beforeAll(async () => {
    chain = await Chain.start();
  });
  afterAll(async () => {
    await chain?.stop();
  });
  // A case that timed out may have left its instances running: none outlives the file.
  afterAll(() => killStartedInstances());

  const cases: Array<{ name: string; account: number; deploy: () => Promise<Deployment> }> = [
    { name: 'SQLite', account: 10, deploy: () => singleServer(chain, 'sqlite') },
    { name: 'PostgreSQL', account: 11, deploy: () => singleServer(chain, 'postgres') },
    { name: 'two instances on one PostgreSQL database', account: 12, deploy: () => twoInstances(chain) },
  ];

  for (const { name, account, deploy } of cases) {
    describe(name, () => {
      let deployment: Deployment;
      let signers: WalletRpc[];
      /** The client that does everything but the racing PUTs. */
      let client: Client;

      beforeAll(async () => {
        deployment = await deploy();
        client = deployment.clients[0]!;
        const keys = accountKeys(account);
        const details = await client.importWallet(ALIAS, {
          policy: { type: 'wsh-sortedmulti', threshold: 3, keys: keys.map((k, i) => ({ key: `${k.origin}${k.tpub}`, label: `cosigner ${i + 1}` })) },
          birthday: await chain.height(),
        });
        expect(details.sigs_required).toBe(3);
        signers = await Promise.all(keys.map((k, i) => chain.signer(`${account}-${i}`, details, k)));
        // One coin per PSBT: the races and the deletions below.
        const addresses: string[] = [];
        for (let i = 0; i < ROUNDS + 2; i++) addresses.push(await client.nextAddress(ALIAS));
        await chain.pay(addresses.map((address) => ({ address, sat: COIN })));
        await chain.mine(1);
        await client.waitForBalance(ALIAS, { total: COIN * (ROUNDS + 2), confirmed: COIN * (ROUNDS + 2) });
      }, 60_000);

      afterAll(async () => {
        await deployment?.close();
      });

      /** A new pending PSBT paying the miner, and the three cosigners' copies of it (each signed alone). */
      async function newSignedCopies(): Promise<{ txid: string; copies: string[] }> {
        const created = await client.createPsbt(ALIAS, {
          recipients: [{ address: await chain.minerAddressOf('bech32'), amount: PAYMENT, unit: 'sat' }],
          fee_rate: '2',
        });
        const unsigned = await client.psbtBase64(ALIAS, created.tx.txid);
        return { txid: created.tx.txid, copies: await Promise.all(signers.map((s) => cosign(s, unsigned))) };
      }

      it(`${ROUNDS} PSBTs: the three PUTs sent at once all answer 200, and every signature is kept and broadcast`, async () => {
        const rounds = [];
        for (let round = 1; round <= ROUNDS; round++) {
          const { txid, copies } = await newSignedCopies();
          // Cosigner k talks to instance k mod n: with two instances the PUTs are split across them.
          const puts = await Promise.all(copies.map((copy, k) => deployment.clients[k % deployment.clients.length]!.putPsbt(ALIAS, txid, copy)));
          const stored = await client.psbtRecord(ALIAS, txid);
          const sent = await deployment.clients[deployment.clients.length - 1]!.broadcast(ALIAS, txid);
          const inMempool = sent.status === 200 && (await chain.inMempool(sent.body.txid));
          rounds.push({
            round,
            puts: puts.map((p) => (p.status === 200 ? 200 : `${p.status} ${p.body?.code}`)),
            sigs_count: stored.sigs_count,
            broadcast: sent.status === 200 ? 200 : `${sent.status} ${sent.body?.code}`,
            inMempool,
          });
        }
        expect(rounds, 'per round: the PUT answers, the stored sigs_count, the broadcast answer, Core\'s mempool').toEqual(
          Array.from({ length: ROUNDS }, (_, i) => ({ round: i + 1, puts: [200, 200, 200], sigs_count: 3, broadcast: 200, inMempool: true })),
        );
      });

      it('a PUT to a PSBT deleted before it answers 404, and one racing the deletion never brings it back', async () => {
        const last = deployment.clients[deployment.clients.length - 1]!;

        const first = await newSignedCopies();
        const deleted = await client.send('DELETE', `/wallets/${ALIAS}/psbt/${first.txid}`);
        expect(deleted.status, deleted.text).toBe(200);
        const late = await last.putPsbt(ALIAS, first.txid, first.copies[0]!);
        expect([404, 409], `PUT after the deletion answered ${late.status} ${late.text}`).toContain(late.status);

        const second = await newSignedCopies();
        const record = await client.psbtRecord(ALIAS, second.txid);
        const [raceDelete, racePut] = await Promise.all([
          client.send('DELETE', `/wallets/${ALIAS}/psbt/${second.txid}`),
          last.putPsbt(ALIAS, second.txid, second.copies[1]!),
        ]);
        expect(raceDelete.status, raceDelete.text).toBe(200);
        expect([200, 404, 409], `PUT racing the deletion answered ${racePut.status} ${racePut.text}`).toContain(racePut.status);
        for (const c of deployment.clients) {
          const gone = await c.send('GET', `/wallets/${ALIAS}/psbt/${second.txid}`);
          expect(gone.status, `the deleted PSBT read on ${c.api}: ${gone.text}`).toBe(404);
        }
        expect(Object.keys(await client.psbts(ALIAS))).not.toContain(second.txid);
        const details = await client.details(ALIAS);
        const freed = details.utxo.filter((u: any) => psbtInputs(record).includes(`${u.txid}:${u.vout}`));
        expect(freed.length, 'the deleted PSBT\'s coin is still a UTXO').toBe(1);
        expect(freed.map((u: any) => u.reserved_by)).toEqual([null]);
      });
    });
  }
});
