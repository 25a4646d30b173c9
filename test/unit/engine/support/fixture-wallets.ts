/**
 * Script derivation for the seven fixture wallets, straight from their account tpubs with @scure/bip32 and
 * the standard script templates (wpkh, sh-wpkh, pkh, BIP86 tr, wsh/sh-wsh sortedmulti, wsh multi).
 * Tests use it as the engine's deriver; the addresses it yields are checked against Bitcoin Core's own.
 */
import { HDKey } from '@scure/bip32';
import * as btc from '@scure/btc-signer';
import { loadFixture } from '../../../support/fixtures.js';
import type { Branch, ScriptDeriver } from '../../../../src/engine/index.js';

const TPUB_VERSIONS = { private: 0x04358394, public: 0x043587cf };

interface FixtureWallet {
  type: string;
  sigs_required: number;
  keys: { tpub: string }[];
}

export const FIXTURE_WALLET_IDS = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3', 'w_shwsh2of3', 'w_wsh2of2'] as const;

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function scriptFor(wallet: FixtureWallet, pubkeys: Uint8Array[]): Uint8Array {
  const [first] = pubkeys;
  if (!first) throw new Error('wallet without keys');
  switch (wallet.type) {
    case 'wpkh':
      return btc.p2wpkh(first).script;
    case 'sh-wpkh':
      return btc.p2sh(btc.p2wpkh(first)).script;
    case 'pkh':
      return btc.p2pkh(first).script;
    case 'tr':
      return btc.p2tr(first.subarray(1)).script;
    case 'wsh-sortedmulti':
      return btc.p2wsh(btc.p2ms(wallet.sigs_required, [...pubkeys].sort(compareBytes))).script;
    case 'sh-wsh-sortedmulti':
      return btc.p2sh(btc.p2wsh(btc.p2ms(wallet.sigs_required, [...pubkeys].sort(compareBytes)))).script;
    case 'wsh-multi':
      return btc.p2wsh(btc.p2ms(wallet.sigs_required, pubkeys)).script;
    default:
      throw new Error(`unknown fixture wallet type ${wallet.type}`);
  }
}

/** Derived scripts by wallet and branch, shared by every deriver of the test process (derivation is slow). */
const cache = new Map<string, Uint8Array[]>();

/** A deriver for one fixture wallet: scripts of `branch/fromIndex .. branch/fromIndex+count-1`. */
export function fixtureDeriver(walletId: string): ScriptDeriver {
  const wallets = loadFixture('wallets') as Record<string, FixtureWallet>;
  const wallet = wallets[walletId];
  if (!wallet) throw new Error(`no fixture wallet ${walletId}`);
  let accounts: HDKey[] | undefined;
  const branches = new Map<Branch, HDKey[]>();
  const branchKeys = (branch: Branch) => {
    accounts ??= wallet.keys.map((k) => HDKey.fromExtendedKey(k.tpub, TPUB_VERSIONS));
    let keys = branches.get(branch);
    if (!keys) branches.set(branch, (keys = accounts.map((a) => a.deriveChild(branch))));
    return keys;
  };
  return (branch, fromIndex, count) => {
    const key = `${walletId}/${branch}`;
    let known = cache.get(key);
    if (!known) cache.set(key, (known = []));
    for (let index = known.length; index < fromIndex + count; index++) {
      known.push(scriptFor(wallet, branchKeys(branch).map((k) => k.deriveChild(index).publicKey!)));
    }
    return known.slice(fromIndex, fromIndex + count);
  };
}
