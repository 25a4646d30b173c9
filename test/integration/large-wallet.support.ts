/**
 * A large wallet written straight into the store, as a first sync writes it: one confirmed payment per
 * transaction to receive indexes 0..19, ten per block, with the addresses the sync would derive for them.
 */
import { toHex } from '../../src/core/bytes.js';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { serializeTransaction, txid as transactionId, type Transaction } from '../../src/core/tx.js';
import type { Store } from '../../src/store/repositories.js';
import { wallets } from './wallet-helpers.js';

const scriptsOf = (descriptor: string) => new DescriptorDeriver(parseDescriptor(descriptor, NETWORKS.regtest)).deriveRange(0, 40).map((d) => d.scriptPubKey);

/** Writes `payments` transactions paying the fixture wallet `fixture` stored under `alias`; their txids, in order. */
export async function writePayments(store: Store, alias: string, payments: number, fixture = 'w_wpkh'): Promise<string[]> {
  const receive = scriptsOf(wallets[fixture]!.recv_descriptor);
  const change = scriptsOf(wallets[fixture]!.change_descriptor);
  const wallet = (await store.wallets.findByAlias(alias))!;
  const revision = (await store.wallets.revision(wallet.id))!;
  const known = new Set((await store.wallets.chainRows(wallet.id))!.addresses.map((a) => `${a.branch}/${a.index}`));
  const addressesAdded = [receive, change].flatMap((scripts, branch) =>
    scripts.map((script, index) => ({ walletId: wallet.id, branch: branch as 0 | 1, index, script: toHex(script) })).filter((a) => !known.has(`${a.branch}/${a.index}`)),
  );
  const hashAt = (height: number) => height.toString(16).padStart(64, '0');
  const rows = Array.from({ length: payments }, (_, k) => {
    const tx: Transaction = {
      version: 2,
      locktime: 0,
      inputs: [{ txid: (k + 1).toString(16).padStart(64, 'e'), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xfffffffd, witness: [new Uint8Array(71), new Uint8Array(33)] }],
      outputs: [{ value: 10_000n + BigInt(k), script: receive[k % 20]! }],
    };
    const height = 1 + Math.floor(k / 10);
    return { walletId: wallet.id, txid: transactionId(tx), hex: toHex(serializeTransaction(tx)), status: 'confirmed' as const, blockHeight: height, blockHash: hashAt(height), blockTime: 1_700_000_000 + height * 600, firstSeen: 1_700_000_000, replaceable: false };
  });
  const tipHeight = 1 + Math.floor((payments - 1) / 10);
  const sync = { walletId: wallet.id, tip: { height: tipHeight, hash: hashAt(tipHeight) }, lastUsedReceive: 19, lastUsedChange: -1 };
  await store.transaction((repos) => repos.wallets.applyChange({ walletId: wallet.id, addressesAdded, transactionsAdded: rows, transactionsUpdated: [], transactionsRemoved: [], sync }, revision));
  return rows.map((r) => r.txid);
}
