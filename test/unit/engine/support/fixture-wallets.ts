/**
 * Script derivers for the seven fixture wallets, from their receive and change descriptors in wallets.json
 * (core/descriptor). The tests check the addresses and paths they give against Bitcoin Core's own.
 */
import { NETWORKS } from '../../../../src/core/network.js';
import { DescriptorDeriver, parseDescriptor } from '../../../../src/core/descriptor/index.js';
import type { ScriptDeriver } from '../../../../src/engine/index.js';
import { loadFixture } from '../../../support/fixtures.js';

export const FIXTURE_WALLET_IDS = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3', 'w_shwsh2of3', 'w_wsh2of2'] as const;

/** Derived scripts by wallet and branch, shared by every deriver of the test process (derivation is slow). */
const cache = new Map<string, Uint8Array[]>();

/** A deriver for one fixture wallet: scripts of `branch/fromIndex .. branch/fromIndex+count-1`. */
export function fixtureDeriver(walletId: string): ScriptDeriver {
  const wallet = (loadFixture('wallets') as Record<string, { recv_descriptor: string; change_descriptor: string }>)[walletId];
  if (!wallet) throw new Error(`no fixture wallet ${walletId}`);
  const derivers = [wallet.recv_descriptor, wallet.change_descriptor].map(
    (text) => new DescriptorDeriver(parseDescriptor(text, NETWORKS.regtest)),
  );
  return (branch, fromIndex, count) => {
    const key = `${walletId}/${branch}`;
    let known = cache.get(key);
    if (!known) cache.set(key, (known = []));
    if (known.length < fromIndex + count) {
      known.push(...derivers[branch]!.deriveRange(known.length, fromIndex + count - known.length).map((o) => o.scriptPubKey));
    }
    return known.slice(fromIndex, fromIndex + count);
  };
}
