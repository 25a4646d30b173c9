/** The PSBT repository on a real SQLite file and a real PostgreSQL schema: reservations are exclusive and atomic. */
import { afterEach, describe, expect, it } from 'vitest';
import { StoreConflictError, type StoredPsbt } from '../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const psbt = (txid: string, createdAt: number): Omit<StoredPsbt, 'version'> => ({
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

    expect(await store.psbts.countPending('w1')).toBe(3);
    expect(await store.psbts.delete('w1', A, 0)).toBe(true);
    expect(await store.psbts.delete('w1', A, 0)).toBe(false);
    expect(await store.psbts.setStatus('w1', B, 'invalid', 4000, 0)).toBe(true);
    expect((await store.psbts.reservations('w1')).map((r) => r.vout)).toEqual([2]);
    expect((await store.psbts.list('w1', 'pending')).map((p) => p.txid)).toEqual([C]);
    expect(await store.psbts.countPending('w1')).toBe(1);
    // Freed coins can be reserved again.
    await store.transaction((r) => r.psbts.insert(psbt(A, 5000), [coin(0), coin(1)]));
    expect(await store.psbts.updatePsbt('w1', A, 'cHNidP8B', 6000, 0)).toBe(1);
    expect(await store.psbts.find('w1', A)).toMatchObject({ psbt: 'cHNidP8B', version: 1 });
    await store.psbts.deleteWallet('w1');
    expect(await store.psbts.list('w1')).toEqual([]);
    expect(await store.psbts.reservations('w1')).toEqual([]);
  });

  it('changes a PSBT only at the version it was computed from', async () => {
    opened = await open();
    const { store } = opened;
    await store.transaction((r) => r.psbts.insert(psbt(A, 1000), [coin(0)]));
    // Two merges computed from version 0: the first applies, the second must be redone.
    expect(await store.psbts.updatePsbt('w1', A, 'first', 1001, 0)).toBe(1);
    expect(await store.psbts.updatePsbt('w1', A, 'second', 1002, 0)).toBeUndefined();
    expect(await store.psbts.setStatus('w1', A, 'broadcast', 1003, 0)).toBe(false);
    expect(await store.psbts.delete('w1', A, 0)).toBe(false);
    expect(await store.psbts.find('w1', A)).toMatchObject({ psbt: 'first', version: 1, status: 'pending' });
    // Settled: no merge, status change or delete applies to it any more, and its coin is free.
    expect(await store.psbts.setStatus('w1', A, 'broadcast', 1004, 1)).toBe(true);
    expect(await store.psbts.updatePsbt('w1', A, 'late', 1005, 2)).toBeUndefined();
    expect(await store.psbts.setStatus('w1', A, 'invalid', 1006, 2)).toBe(false);
    expect(await store.psbts.delete('w1', A, 2)).toBe(false);
    expect(await store.psbts.find('w1', A)).toMatchObject({ psbt: 'first', version: 2, status: 'broadcast' });
    expect(await store.psbts.reservations('w1')).toEqual([]);
    expect(await store.psbts.updatePsbt('w1', B, 'absent', 1007, 0)).toBeUndefined();
  });

  it('applies exactly one of many concurrent changes computed from one version', async () => {
    opened = await open();
    const { store } = opened;
    await store.transaction((r) => r.psbts.insert(psbt(A, 1000), [coin(0)]));
    const versions = await Promise.all(Array.from({ length: 12 }, (_, i) => store.psbts.updatePsbt('w1', A, `copy ${i}`, 2000 + i, 0)));
    expect(versions.filter((v) => v !== undefined)).toEqual([1]);
    const winner = versions.findIndex((v) => v === 1);
    expect((await store.psbts.find('w1', A))?.psbt).toBe(`copy ${winner}`);
  });
});
