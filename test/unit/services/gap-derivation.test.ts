/**
 * New wallets' gaps derived on a worker thread (the built worker: `npm run build` first, as for the CLI tests):
 * the same scripts as derived in process, nothing parsed on the request thread, and a failed worker leaves the
 * derivation to the process.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import { GapDerivation } from '../../../src/services/gap-derivation.js';
import { branchDeriver } from '../../../src/services/miniscript-wallet.js';
import { WalletScripts } from '../../../src/services/wallet-scripts.js';
import type { StoredWallet } from '../../../src/store/repositories.js';
import { storedFixtureWallet } from '../../support/fixtures.js';

const WORKER_ENTRY = new URL('../../../dist/services/gap-derivation-worker.js', import.meta.url);

function builtDerivation(): GapDerivation {
  if (!existsSync(fileURLToPath(WORKER_ENTRY))) throw new Error(`${fileURLToPath(WORKER_ENTRY)} is missing: run "npm run build" first (npm test does)`);
  const derivation = GapDerivation.start(WORKER_ENTRY)!;
  started.push(derivation);
  return derivation;
}
const started: GapDerivation[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((d) => d.stop()));
});

function walletOf(name: 'w_wsh2of3' | 'w_wpkh'): StoredWallet {
  return storedFixtureWallet(name, { id: `w-${name}`, alias: name, name });
}

/** The branch's scripts from..from+count-1 (hex), derived in this process. */
function expected(wallet: StoredWallet, branch: 0 | 1, from: number, count: number): string[] {
  const descriptor = branch === 0 ? wallet.receiveDescriptor : wallet.changeDescriptor;
  return branchDeriver(descriptor, NETWORKS.regtest).deriveRange(from, count).map((o) => toHex(o.scriptPubKey));
}

describe('gap derivation on a worker thread', () => {
  for (const name of ['w_wsh2of3', 'w_wpkh'] as const) {
    it(`derives a new wallet's gap as the process would, without parsing its descriptors here (${name})`, async () => {
      const wallet = walletOf(name);
      const scripts = new WalletScripts(wallet, undefined, undefined, builtDerivation());
      await scripts.deriveInParts(0, 20);
      await scripts.deriveInParts(1, 20);
      expect(scripts.holdsDerivers).toBe(false); // the worker derived them: nothing parsed in this process
      expect(scripts.deriveHex(0, 0, 20)).toEqual(expected(wallet, 0, 0, 20));
      expect(scripts.deriveHex(1, 0, 20)).toEqual(expected(wallet, 1, 0, 20));
      // The gap moving by a few scripts is derived here (a worker's answer comes later than they take).
      await scripts.deriveInParts(0, 23);
      expect(scripts.holdsDerivers).toBe(true);
      expect(scripts.deriveHex(0, 0, 23)).toEqual(expected(wallet, 0, 0, 23));
    });
  }

  it('derives any range of a branch, and answers requests in flight together', async () => {
    const wallet = walletOf('w_wsh2of3');
    const derivation = builtDerivation();
    const [first, far, change] = await Promise.all([
      derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 40),
      derivation.derive(wallet.receiveDescriptor, 'regtest', 1_000_000, 3),
      derivation.derive(wallet.changeDescriptor, 'regtest', 5, 10),
    ]);
    expect(first).toEqual(expected(wallet, 0, 0, 40));
    expect(far).toEqual(expected(wallet, 0, 1_000_000, 3));
    expect(change).toEqual(expected(wallet, 1, 5, 10));
  });

  it('keeps scripts derived here meanwhile, and takes only those past them', async () => {
    const wallet = walletOf('w_wsh2of3');
    const scripts = new WalletScripts(wallet, undefined, undefined, builtDerivation());
    const deriving = scripts.deriveInParts(0, 60);
    expect(scripts.deriveHex(0, 0, 5)).toEqual(expected(wallet, 0, 0, 5)); // derives ahead here: 32 scripts
    expect(scripts.knownCount(0)).toBe(32);
    await deriving;
    expect(scripts.knownCount(0)).toBe(60);
    expect(scripts.deriveHex(0, 0, 60)).toEqual(expected(wallet, 0, 0, 60));
  });

  it('refuses what cannot be derived with the reason, and the process derives once the worker is gone', async () => {
    const wallet = walletOf('w_wsh2of3');
    const derivation = builtDerivation();
    await expect(derivation.derive('wpkh(not-a-key/0/*)', 'regtest', 0, 20)).rejects.toThrow(/key/i);
    await expect(derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 0)).resolves.toEqual([]);

    await derivation.stop();
    await expect(derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 20)).rejects.toThrow('The derivation worker stopped');
    const scripts = new WalletScripts(wallet, undefined, undefined, derivation);
    await scripts.deriveInParts(0, 20);
    expect(scripts.holdsDerivers).toBe(true); // derived in process
    expect(scripts.deriveHex(0, 0, 20)).toEqual(expected(wallet, 0, 0, 20));
  });

  it('has no worker where no compiled entry is beside it (the sources, as tests run them)', () => {
    expect(GapDerivation.start()).toBeUndefined();
  });
});
