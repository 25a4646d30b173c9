/**
 * `addWalletInParts` loads a wallet as `addWallet` does, in steps with a pause between two (a large wallet's load
 * otherwise held the process for half a second), and refuses bad rows as it does, keeping nothing of them.
 */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { serializeTransaction, txid as transactionId, type Transaction } from '../../../src/core/tx.js';
import { addWallet, addWalletInParts, createEngineState, getBalances, listTransactions, listUnspent, type StoredWalletRows } from '../../../src/engine/index.js';
import { fixtureDeriver } from './support/fixture-wallets.js';

const PAYMENTS = 25_000;
const derive = fixtureDeriver('w_wpkh');
const hashAt = (height: number) => height.toString(16).padStart(64, '0');

/** A wallet's stored rows: one confirmed payment a transaction to its first 20 receive scripts, ten a block. */
function storedRows(walletId: string): StoredWalletRows {
  const receive = derive(0, 0, 20).map(toHex);
  const addresses = [0, 1].flatMap((branch) => derive(branch as 0 | 1, 0, 40).map((script, index) => ({ walletId, branch: branch as 0 | 1, index, script: toHex(script) })));
  const transactions = Array.from({ length: PAYMENTS }, (_, k) => {
    const tx: Transaction = {
      version: 2,
      locktime: 0,
      inputs: [{ txid: (k + 1).toString(16).padStart(64, 'e'), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xfffffffd, witness: [new Uint8Array(71), new Uint8Array(33)] }],
      outputs: [{ value: 10_000n + BigInt(k), script: Buffer.from(receive[k % 20]!, 'hex') }],
    };
    const height = 1 + Math.floor(k / 10);
    return { walletId, txid: transactionId(tx), hex: toHex(serializeTransaction(tx)), status: 'confirmed' as const, blockHeight: height, blockHash: hashAt(height), blockTime: 1_700_000_000 + height * 600, firstSeen: 1_700_000_000, replaceable: false };
  });
  const tipHeight = 1 + Math.floor((PAYMENTS - 1) / 10);
  return { sync: { walletId, tip: { height: tipHeight, hash: hashAt(tipHeight) }, lastUsedReceive: 19, lastUsedChange: -1 }, addresses, transactions };
}

describe('addWalletInParts', () => {
  it('loads what addWallet loads, pausing between steps', async () => {
    const rows = storedRows('w');
    const whole = createEngineState();
    const wholeChanges = addWallet(whole, { walletId: 'w', derive }, rows);
    const parted = createEngineState();
    let pauses = 0;
    const partedChanges = await addWalletInParts(parted, { walletId: 'w', derive }, rows, async () => {
      pauses++;
      expect(parted.wallets.has('w')).toBe(true); // partly loaded meanwhile: for a state nothing else changes
    });
    expect(pauses).toBe(2); // 25,000 transactions, 10,000 a step
    expect(partedChanges).toEqual(wholeChanges);
    expect(getBalances(parted, 'w')).toEqual(getBalances(whole, 'w'));
    expect(getBalances(parted, 'w').confirmed).toBe(BigInt(PAYMENTS) * 10_000n + BigInt((PAYMENTS * (PAYMENTS - 1)) / 2));
    expect(listUnspent(parted, 'w')).toEqual(listUnspent(whole, 'w'));
    expect(listTransactions(parted, 'w')).toEqual(listTransactions(whole, 'w'));
  });

  it('refuses rows addWallet refuses and keeps nothing of them, nor of a load given up between two steps', async () => {
    const rows = storedRows('w');
    const late = rows.transactions[20_000]!;
    rows.transactions[20_000] = { ...late, hex: late.hex.slice(0, -2) + '01' }; // another transaction than its txid
    const state = createEngineState();
    let pauses = 0;
    await expect(addWalletInParts(state, { walletId: 'w', derive }, rows, async () => void pauses++)).rejects.toMatchObject({ code: 'invalid_stored_state' });
    expect(pauses).toBe(0); // refused while parsing, before any insert
    expect(state.wallets.size).toBe(0);
    expect(state.txOwners.size).toBe(0);


    // A load given up between two steps (its pause failing) leaves nothing either.
    const given = createEngineState();
    let calls = 0;
    const stop = new Error('stopped');
    await expect(addWalletInParts(given, { walletId: 'w', derive }, storedRows('w'), async () => {
      if (++calls === 2) throw stop;
    })).rejects.toBe(stop);
    expect(given.wallets.size).toBe(0);
    expect(given.txOwners.size).toBe(0);
    expect(given.scriptIndex.size).toBe(0);
  });
});
