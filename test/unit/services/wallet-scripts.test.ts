/** A wallet's scripts: kept as hex, its parsed descriptors dropped when idle and parsed again when needed. */
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import { emptyEngineState } from '../../../src/engine/state.js';
import { branchDeriver } from '../../../src/services/miniscript-wallet.js';
import { WalletScripts } from '../../../src/services/wallet-scripts.js';
import { loadWalletInto } from '../../../src/services/wallet-state.js';
import type { StoredWallet } from '../../../src/store/repositories.js';
import { storedFixtureWallet } from '../../support/fixtures.js';


function walletOf(name: 'w_wsh2of3' | 'w_wpkh'): StoredWallet {
  return storedFixtureWallet(name, { id: `w-${name}`, alias: name, name });
}

/** The branch's scripts 0 .. count-1 (hex) from descriptors parsed apart from the scripts under test. */
function expected(wallet: StoredWallet, branch: 0 | 1, count: number): string[] {
  const descriptor = branch === 0 ? wallet.receiveDescriptor : wallet.changeDescriptor;
  return branchDeriver(descriptor, NETWORKS.regtest).deriveRange(0, count).map((o) => toHex(o.scriptPubKey));
}

const parsed = (wallet: StoredWallet) =>
  [branchDeriver(wallet.receiveDescriptor, NETWORKS.regtest), branchDeriver(wallet.changeDescriptor, NETWORKS.regtest)] as const;

describe('wallet scripts', () => {
  it('hands a row of its wallet back with its descriptors and every other field as they were, and another row untouched', () => {
    const wallet = walletOf('w_wsh2of3');
    const scripts = new WalletScripts(wallet);
    const read = { ...wallet, receiveDescriptor: `${wallet.receiveDescriptor} `.trim(), keys: [...wallet.keys] };
    const kept = scripts.sharingDescriptors(read);
    expect(kept).toEqual(read);
    expect(kept).not.toBe(read);
    const other = walletOf('w_wpkh');
    expect(scripts.sharingDescriptors(other)).toBe(other);
  });

  for (const name of ['w_wsh2of3', 'w_wpkh'] as const) {
    it(`derives the same scripts after its derivers are dropped and parsed again (${name})`, async () => {
      const wallet = walletOf(name);
      const scripts = new WalletScripts(wallet, parsed(wallet));
      await scripts.deriveInParts(0, 20);
      await scripts.deriveInParts(1, 20);
      const before = [scripts.deriveHex(0, 0, 20), scripts.deriveHex(1, 0, 20)];

      scripts.releaseDerivers();
      expect(scripts.holdsDerivers).toBe(false);
      // What is known is read without parsing anything.
      expect(scripts.deriveHex(0, 0, 20)).toEqual(before[0]);
      expect(scripts.derive(1, 0, 20).map(toHex)).toEqual(before[1]);
      expect(toHex(scripts.scriptAt(0, 7))).toBe(before[0]![7]);
      expect(scripts.holdsDerivers).toBe(false);

      // The gap moves: parsed again, and the scripts follow on from those known.
      await scripts.deriveInParts(0, 45);
      expect(scripts.holdsDerivers).toBe(true);
      expect(scripts.deriveHex(0, 0, 45)).toEqual(expected(wallet, 0, 45));
      scripts.releaseDerivers();
      expect(scripts.deriveHex(1, 0, 50)).toEqual(expected(wallet, 1, 50));
      scripts.releaseDerivers();
      const known = scripts.knownCount(1); // derived ahead: 52
      expect(toHex(scripts.scriptAt(1, known))).toBe(expected(wallet, 1, known + 1)[known]);
      expect(scripts.knownCount(1)).toBe(known + 1);
    });
  }

  it('keeps its derivers while a derivation in parts is under way', async () => {
    const wallet = walletOf('w_wsh2of3');
    const scripts = new WalletScripts(wallet);
    let released = false;
    const deriving = scripts.deriveInParts(0, 400); // many parts: it gives way between them
    const release = (async () => {
      while (scripts.knownCount(0) < 400) {
        scripts.releaseDerivers();
        if (scripts.holdsDerivers) released = true; // refused while deriving
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all([deriving, release]);
    expect(released).toBe(true);
    expect(scripts.deriveHex(0, 0, 400)).toEqual(expected(wallet, 0, 400));
    scripts.releaseDerivers();
    expect(scripts.holdsDerivers).toBe(false);
  });

  it('gives the engine the scripts it keeps, and bytes equal to them', async () => {
    const wallet = walletOf('w_wsh2of3');
    const scripts = new WalletScripts(wallet, parsed(wallet));
    const state = emptyEngineState();
    const rows = { revision: 0, sync: { walletId: wallet.id, tip: null, lastUsedReceive: -1, lastUsedChange: -1 }, lastRevealedReceive: -1, addresses: [], transactions: [] };
    await loadWalletInto(state, wallet, rows, scripts);
    scripts.releaseDerivers();
    const held = state.wallets.get(wallet.id)!;
    expect([...held.scripts.keys()].sort()).toEqual([...expected(wallet, 0, 20), ...expected(wallet, 1, 20)].sort());
    expect(scripts.derive(0, 3, 5).map(toHex)).toEqual(expected(wallet, 0, 8).slice(3));
    expect(scripts.holdsDerivers).toBe(false);
  });
});
