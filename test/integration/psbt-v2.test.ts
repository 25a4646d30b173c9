/**
 * PSBT version 2 (BIP370) over HTTP: a pending PSBT downloaded as version 0 or 2 (JSON, base64, binary) is one
 * transaction; cosigners' copies of either version, signed by @scure/btc-signer, sent at the same moment, are
 * all merged (SQLite and PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parsePsbt, psbtTxid } from '../../src/core/psbt/index.js';
import { signAsCosigner } from '../unit/services/psbt-fixture-wallets.js';
import { request } from '../support/server.js';
import { startWalletWorld, timeline, wallets, type WalletWorld } from './wallet-helpers.js';

const LAST = timeline.snapshots.length - 1;
const ALIAS = 'w_wsh2of3';
const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(78).address;

describe.each(['sqlite', 'postgres'] as const)('PSBT version 2 on %s', (database) => {
  let world: WalletWorld;
  const url = (rest = '') => `${world.server.api}/wallets/${ALIAS}/psbt${rest}`;

  beforeAll(async () => {
    world = await startWalletWorld({ snapshot: LAST }, { database });
    const w = wallets[ALIAS]!;
    const imported = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: 'Vault', alias: ALIAS, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 },
    });
    expect(imported.status, imported.text).toBe(201);
    expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
  }, 120_000);
  afterAll(() => world?.close());

  const create = async () => {
    const created = await request(url(), { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.001' }], fee_rate: 2 } });
    expect(created.status, created.text).toBe(201);
    return created.body.result as { tx: { txid: string }; base64: string };
  };

  it('downloads version 0 (default) and version 2 of one PSBT: same unsigned txid in every form', async () => {
    const record = await create();
    const txid = record.tx.txid;
    const v0 = await request(url(`/${txid}?format=base64`), { headers: world.auth });
    const v2 = await request(url(`/${txid}?format=base64&version=2`), { headers: world.auth });
    expect(parsePsbt(v0.text).version).toBe(0);
    const parsedV2 = parsePsbt(v2.text);
    expect(parsedV2.version).toBe(2);
    expect(psbtTxid(parsedV2)).toBe(txid);
    const json = await request(url(`/${txid}?version=2`), { headers: world.auth });
    expect(json.body.result.base64).toBe(v2.text);
    expect(json.body.result.tx.txid).toBe(txid);
    const binary = await fetch(url(`/${txid}?format=binary&version=2`), { headers: world.auth });
    expect(binary.headers.get('content-type')).toBe('application/octet-stream');
    const bytes = new Uint8Array(await binary.arrayBuffer());
    expect(Buffer.from(bytes).toString('base64')).toBe(v2.text);
    const bad = await request(url(`/${txid}?version=1`), { headers: world.auth });
    expect(bad.status).toBe(400);
    await request(url(`/${txid}`), { method: 'DELETE', headers: world.auth });
  });

  it('copies of both versions sent at the same moment: every signature kept, the PSBT broadcastable', async () => {
    for (let round = 0; round < 3; round++) {
      const record = await create();
      const txid = record.tx.txid;
      const v2 = (await request(url(`/${txid}?format=base64&version=2`), { headers: world.auth })).text;
      // Cosigner 0 works on version 2 and answers in version 2; 1 answers a version 0 copy of the version 2 download; 2 stays on version 0.
      const copies = [signAsCosigner(v2, ALIAS, 0, 2), signAsCosigner(v2, ALIAS, 1, 0), signAsCosigner(record.base64, ALIAS, 2, 0)];
      expect(parsePsbt(copies[0]!).version).toBe(2);
      const answers = await Promise.all(copies.map((psbt) => request(url(`/${txid}`), { method: 'PUT', headers: world.auth, json: { psbt } })));
      for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      const stored = await request(url(`/${txid}`), { headers: world.auth });
      expect(stored.body.result.sigs_count).toBe(3);
      const storedV2 = parsePsbt((await request(url(`/${txid}?format=base64&version=2`), { headers: world.auth })).text);
      for (const input of storedV2.inputs) expect(input.partialSigs).toHaveLength(3);
      expect(psbtTxid(storedV2)).toBe(txid);
      await request(url(`/${txid}`), { method: 'DELETE', headers: world.auth });
    }
  }, 120_000);

  it('refuses a version 2 copy of another transaction', async () => {
    const first = await create();
    const second = await create();
    const otherV2 = (await request(url(`/${second.tx.txid}?format=base64&version=2`), { headers: world.auth })).text;
    const answer = await request(url(`/${first.tx.txid}`), { method: 'PUT', headers: world.auth, json: { psbt: signAsCosigner(otherV2, ALIAS, 0, 2) } });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('different_transaction');
  });
});
