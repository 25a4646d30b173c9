/** The PSBT repository on a real SQLite file and a real PostgreSQL schema: reservations are exclusive and atomic. */
import { afterEach, describe, expect, it } from 'vitest';
import { StoreConflictError, type StoredPsbt } from '../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const psbt = (txid: string, createdAt: number): StoredPsbt => ({
  walletId: 'w1',
  txid,
  psbt: 'cHNidP8=',
  changeOutputs: [1],
  fullSize: 141,
  status: 'pending',
  createdAt,
  updatedAt: createdAt,
  createdBy: 'alice',
});
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);
const coin = (vout: number) => ({ txid: 'f'.repeat(64), vout });

describe.each(STORE_KINDS)('PSBT store conformance: $kind', ({ open }) => {
  let opened: OpenedStore | undefined;
  afterEach(async () => {
    await opened?.dispose();
    opened = undefined;
  });

  it('reserves coins exclusively, in the same transaction as the PSBT row', async () => {
    opened = await open();
    const { store } = opened;
    await store.transaction((r) => r.psbts.insert(psbt(A, 1000), [coin(0), coin(1)]));
    await expect(store.transaction((r) => r.psbts.insert(psbt(B, 2000), [coin(2), coin(1)]))).rejects.toBeInstanceOf(StoreConflictError);
    // The failed creation left nothing behind: no row, no reservation of coin 2.
    expect(await store.psbts.find('w1', B)).toBeUndefined();
    expect((await store.psbts.reservations('w1')).map((r) => `${r.vout}:${r.psbtTxid}`).sort()).toEqual([`0:${A}`, `1:${A}`]);
    // The same txid twice is a conflict too.
    await expect(store.transaction((r) => r.psbts.insert(psbt(A, 3000), [coin(5)]))).rejects.toBeInstanceOf(StoreConflictError);
    // Other wallets may hold the same outpoint text (another wallet's coin is another coin row).
    await store.transaction((r) => r.psbts.insert({ ...psbt(A, 1000), walletId: 'w2' }, [coin(0)]));
  });

  it('lists newest first, frees coins on delete and when a PSBT leaves the pending state', async () => {
    opened = await open();
    const { store } = opened;
    await store.transaction((r) => r.psbts.insert(psbt(A, 1000), [coin(0)]));
    await store.transaction((r) => r.psbts.insert(psbt(B, 2000), [coin(1)]));
    await store.transaction((r) => r.psbts.insert(psbt(C, 3000), [coin(2)]));
    expect((await store.psbts.list('w1', 'pending')).map((p) => p.txid)).toEqual([C, B, A]);
    expect((await store.psbts.reservations('w1', B)).map((r) => `${r.vout}:${r.psbtTxid}`)).toEqual([`1:${B}`]);
    expect(await store.psbts.reservations('w2', B)).toEqual([]);
    expect((await store.psbts.find('w1', A))?.changeOutputs).toEqual([1]);

    expect(await store.psbts.delete('w1', A)).toBe(true);
    expect(await store.psbts.delete('w1', A)).toBe(false);
    expect(await store.psbts.setStatus('w1', B, 'invalid', 4000)).toBe(true);
    expect((await store.psbts.reservations('w1')).map((r) => r.vout)).toEqual([2]);
    expect((await store.psbts.list('w1', 'pending')).map((p) => p.txid)).toEqual([C]);
    // Freed coins can be reserved again.
    await store.transaction((r) => r.psbts.insert(psbt(A, 5000), [coin(0), coin(1)]));
    expect(await store.psbts.updatePsbt('w1', A, 'cHNidP8B', 6000)).toBe(true);
    expect((await store.psbts.find('w1', A))?.psbt).toBe('cHNidP8B');
    await store.psbts.deleteWallet('w1');
    expect(await store.psbts.list('w1')).toEqual([]);
    expect(await store.psbts.reservations('w1')).toEqual([]);
  });
});
