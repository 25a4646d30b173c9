/**
 * Round trip: for each fixture wallet, a PSBT built from its coins, signed by an independent signer
 * (@scure/btc-signer, as a hardware wallet would) with the fixture's private keys, one cosigner per
 * copy, then combined, finalized and extracted here, verifies against the coins it spends.
 */
import { describe, expect, it } from 'vitest';
import { HDKey } from '@scure/bip32';
import { Transaction as SignerTransaction } from '@scure/btc-signer';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex, toHex } from '../../../src/core/bytes.js';
import { decodeAddress } from '../../../src/core/address.js';
import { NETWORKS } from '../../../src/core/network.js';
import { hash160 } from '../../../src/core/script-type.js';
import { parseBlock, serializeTransaction, type TxOutput } from '../../../src/core/tx.js';
import { verifyTransaction } from '../../../src/core/signing/verify.js';
import {
  buildPsbt,
  checkPartialSignatures,
  combinePsbts,
  decodePsbt,
  extractTransaction,
  finalizePsbt,
  minimumSignatureCount,
  parsePsbt,
  serializePsbt,
  taprootOutputKey,
  PsbtError,
  type BuildInput,
  type BuildOutput,
  type KeyDerivation,
} from '../../../src/core/psbt/index.js';
import { psbtRecord } from '../../../src/services/psbts/record.js';
import { loadFixture } from '../../support/fixtures.js';
import { WALLETS } from './psbt-support.js';

const regtest = NETWORKS.regtest;
const versions = { private: regtest.bip32.private, public: regtest.bip32.public };
const HARDENED = 0x80000000;
const wallets = loadFixture('wallets');
const psbtsFixture = loadFixture('psbts');
const timeline = loadFixture('timeline');
const finalSnapshot = timeline.snapshots[timeline.snapshots.length - 1];

/** Every transaction the node had (blocks and the final mempool), by txid. */
const transactions = (() => {
  const map = new Map<string, Uint8Array>();
  for (const block of Object.values(loadFixture('blocks')) as { hex: string }[]) {
    for (const tx of parseBlock(block.hex).transactions) map.set(txidOf(tx), serializeTransaction(tx));
  }
  for (const entry of finalSnapshot.mempool) map.set(entry.txid, fromHex(entry.hex));
  return map;
})();
function txidOf(tx: Parameters<typeof serializeTransaction>[0]): string {
  return toHex(sha256(sha256(serializeTransaction(tx, { witness: false }))).reverse());
}

const parsePath = (text: string): number[] =>
  text
    .replace(/^m\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((p) => (/['h]$/.test(p) ? parseInt(p, 10) + HARDENED : parseInt(p, 10)));

const multisigScript = (m: number, keys: Uint8Array[]) =>
  concatBytes(Uint8Array.of(0x50 + m), ...keys.map((k) => concatBytes(Uint8Array.of(k.length), k)), Uint8Array.of(0x50 + keys.length, 0xae));

/** Key origins of a listunspent `desc`: `[fingerprint/path]key` in the order the script uses them. */
function descKeys(desc: string): KeyDerivation[] {
  return [...desc.matchAll(/\[([0-9a-f]{8})((?:\/\d+h?)+)\]([0-9a-f]{64,66})/g)].map((m) => ({
    fingerprint: fromHex(m[1]!),
    path: parsePath(m[2]!),
    pubkey: fromHex(m[3]!),
  }));
}

/** Scripts and key information of a coin of a wallet type, from its keys. */
interface SpendInfo {
  derivations?: KeyDerivation[];
  redeemScript?: Uint8Array;
  witnessScript?: Uint8Array;
  taproot?: { internalKey: Uint8Array; derivations: KeyDerivation[] };
}

function spendInfo(type: string, threshold: number, keys: KeyDerivation[]): SpendInfo {
  const first = keys[0]!;
  switch (type) {
    case 'wpkh':
    case 'pkh':
      return { derivations: keys };
    case 'sh-wpkh':
      return { derivations: keys, redeemScript: concatBytes(Uint8Array.of(0, 20), hash160(first.pubkey)) };
    case 'tr':
      return { taproot: { internalKey: first.pubkey, derivations: [first] } };
    default: {
      const witnessScript = multisigScript(threshold, keys.map((k) => k.pubkey));
      const nested = type.startsWith('sh-wsh');
      return {
        derivations: keys,
        witnessScript,
        ...(nested ? { redeemScript: concatBytes(Uint8Array.of(0, 32), sha256(witnessScript)) } : {}),
      };
    }
  }
}

const scriptOf = (type: string, info: SpendInfo, pubkey: Uint8Array): Uint8Array => {
  if (type === 'pkh') return concatBytes(Uint8Array.of(0x76, 0xa9, 20), hash160(pubkey), Uint8Array.of(0x88, 0xac));
  if (type === 'wpkh') return concatBytes(Uint8Array.of(0, 20), hash160(pubkey));
  if (info.redeemScript) return concatBytes(Uint8Array.of(0xa9, 20), hash160(info.redeemScript), Uint8Array.of(0x87));
  if (info.witnessScript) return concatBytes(Uint8Array.of(0, 32), sha256(info.witnessScript));
  throw new Error(`no script for ${type}`);
};

/** A change output to the wallet's change branch (index 50), with its derivations. */
function changeOutput(wallet: any, value: bigint): BuildOutput {
  const keys: KeyDerivation[] = wallet.keys.map((k: any) => {
    const child = HDKey.fromExtendedKey(k.tpub, versions).deriveChild(1).deriveChild(50);
    const pubkey = wallet.type === 'tr' ? child.publicKey!.subarray(1) : child.publicKey!;
    return { pubkey, fingerprint: fromHex(k.fingerprint), path: [...parsePath(k.derivation), 1, 50] };
  });
  if (wallet.type.includes('sortedmulti')) keys.sort((a, b) => Buffer.compare(a.pubkey, b.pubkey));
  const info = spendInfo(wallet.type, wallet.sigs_required, keys);
  if (wallet.type === 'tr') return { script: concatBytes(Uint8Array.of(0x51, 32), taprootOutputKey(keys[0]!.pubkey)), value, change: info };
  return { script: scriptOf(wallet.type, info, keys[0]!.pubkey), value, change: info };
}


function buildInputs(walletName: string): { inputs: BuildInput[]; total: bigint } {
  const wallet = wallets[walletName];
  const inputs: BuildInput[] = finalSnapshot.expected[walletName].unspent.map((u: any) => {
    const keys = descKeys(u.desc);
    return {
      txid: u.txid,
      vout: u.vout,
      value: BigInt(Math.round(u.amount * 1e8)),
      scriptPubKey: decodeAddress(u.address, regtest),
      ...(wallet.type === 'tr' ? {} : { prevTx: transactions.get(u.txid)! }),
      ...spendInfo(wallet.type, wallet.sigs_required, keys),
    };
  });
  return { inputs, total: inputs.reduce((n, i) => n + i.value, 0n) };
}

/** The private key of a cosigner for a derivation of its key, from the account tprv. */
function signerKey(account: any, path: number[]): Uint8Array {
  const depth = parsePath(account.derivation).length;
  let node = HDKey.fromExtendedKey(account.tprv, versions);
  for (const index of path.slice(depth)) node = node.deriveChild(index);
  return node.privateKey!;
}

describe('building, signing, combining and finalizing a PSBT for every fixture wallet', () => {
  for (const name of WALLETS) {
    it(`round trip for ${name}`, () => {
      const wallet = wallets[name];
      const { inputs, total } = buildInputs(name);
      const [recipientEntry] = Object.entries(psbtsFixture[name].request.outputs[0]) as [string, number][];
      const recipient = { script: decodeAddress(recipientEntry![0], regtest), value: 10_000_000n };
      const fee = 5_000n;
      const isMultisig = wallet.keys.length > 1;
      const psbt = buildPsbt({
        inputs,
        outputs: [recipient, changeOutput(wallet, total - recipient.value - fee)],
        locktime: 200,
        globalXpubs: isMultisig
          ? wallet.keys.map((k: any) => ({ xpub: k.tpub, fingerprint: fromHex(k.fingerprint), path: parsePath(k.derivation) }))
          : [],
      });
      const unsigned = serializePsbt(psbt);

      // Fields hardware wallets need: the same members Core's own unsigned PSBT carries.
      const ours = decodePsbt(parsePsbt(unsigned), regtest);
      const core = psbtsFixture[name].stages[0].decoded;
      for (const input of ours.inputs) expect(Object.keys(input).sort()).toEqual(Object.keys(core.inputs[0]).sort());
      expect(Object.keys(ours.outputs[1]!).sort()).toEqual(Object.keys(core.outputs[psbtsFixture[name].change_position]).sort());
      expect(Object.keys(ours.outputs[0]!)).toEqual([]);
      expect(ours.global_xpubs.length).toBe(isMultisig ? wallet.keys.length : 0);
      expect(ours.fee).toBe(Number(fee) / 1e8);

      // One copy per cosigner, each signed by that cosigner alone.
      const cosigners = wallet.keys.slice(0, wallet.sigs_required);
      const copies = cosigners.map((account: any) => {
        const signer = SignerTransaction.fromPSBT(unsigned);
        inputs.forEach((input, i) => {
          const origin = wallet.type === 'tr' ? input.taproot!.derivations[0]! : input.derivations!.find((d) => toHex(d.fingerprint) === account.fingerprint)!;
          expect(signer.signIdx(signerKey(account, origin.path), i)).toBe(true);
        });
        return parsePsbt(signer.toPSBT(0));
      });
      for (const copy of copies) {
        expect(checkPartialSignatures(copy).every((c) => c.valid)).toBe(true);
        expect(minimumSignatureCount(copy, wallet.sigs_required)).toBe(1);
      }
      const combined = combinePsbts(parsePsbt(unsigned), ...copies);
      expect(minimumSignatureCount(combined, wallet.sigs_required)).toBe(wallet.sigs_required);
      const { psbt: finalized, complete } = finalizePsbt(combined);
      expect(complete).toBe(true);
      const tx = extractTransaction(finalized);
      const prevouts: TxOutput[] = inputs.map((i) => ({ value: i.value, script: i.scriptPubKey }));
      const verification = verifyTransaction(tx, prevouts);
      expect(verification).toMatchObject({ valid: true });

      const record = psbtRecord(finalized, { network: regtest, changeOutputs: [1], fullSizeVbytes: 500, threshold: wallet.sigs_required, time: 1700000000.5 });
      expect(record.sigs_count).toBe(wallet.sigs_required);
      expect(record.address).toEqual([recipientEntry![0]]);
      expect(record.amount).toEqual([0.1]);
      expect(record.fee_rate).toBe('10.00');
    });
  }

  it('refuses coins whose previous transaction, scripts or keys do not match', () => {
    const { inputs } = buildInputs('w_wsh2of3');
    const output = { script: inputs[0]!.scriptPubKey, value: 1000n };
    const first = inputs[0]!;
    expect(() => buildPsbt({ inputs: [{ ...first, value: first.value + 1n }], outputs: [output] })).toThrow(expect.objectContaining({ code: 'utxo_mismatch' }));
    expect(() => buildPsbt({ inputs: [{ ...first, prevTx: undefined }], outputs: [output] })).toThrow(
      expect.objectContaining({ code: 'missing_previous_transaction' }),
    );
    const otherScript = buildInputs('w_wsh2of2').inputs[0]!.witnessScript;
    expect(() => buildPsbt({ inputs: [{ ...first, witnessScript: otherScript }], outputs: [output] })).toThrow(PsbtError);
    expect(() => buildPsbt({ inputs: [first, first], outputs: [output] })).toThrow(/twice/);
    expect(() => buildPsbt({ inputs: [first], outputs: [{ ...output, value: first.value + 1n }] })).toThrow(
      expect.objectContaining({ code: 'insufficient_funds' }),
    );
    const tr = buildInputs('w_tr').inputs[0]!;
    const wrongKey = { ...tr, taproot: { ...tr.taproot!, internalKey: buildInputs('w_tr').inputs[1]!.taproot!.internalKey } };
    expect(() => buildPsbt({ inputs: [wrongKey], outputs: [output] })).toThrow(/internal key does not match/);
  });
});
