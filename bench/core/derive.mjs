// Address derivation throughput, beside native libsecp256k1 public-key tweaks measured in the
// same run. Runs against the built dist/ (npm run build first): node bench/core/derive.mjs
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import secp256k1 from 'secp256k1';
import { NETWORKS } from '../../dist/core/network.js';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { branchNode, deriveChildPublicKeys, parseExtendedPublicKey } from '../../dist/core/keys/index.js';

const wallets = JSON.parse(readFileSync(new URL('../../test/fixtures/regtest/wallets.json', import.meta.url), 'utf8'));
const RUNS = Number(process.env.RUNS ?? 7);
const COUNT = Number(process.env.COUNT ?? 2000);
const BATCH = Number(process.env.BATCH ?? 500);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Benchmarks as { name: [ops, fn] }; runs them round-robin (so machine load hits all alike), medians of RUNS. */
function measureAll(cases) {
  const rates = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (const [, fn] of Object.values(cases)) fn(); // warm-up (also builds the lazy base-point table)
  for (let r = 0; r < RUNS; r++) {
    for (const [name, [ops, fn]] of Object.entries(cases)) {
      const start = process.hrtime.bigint();
      fn();
      rates[name].push(ops / (Number(process.hrtime.bigint() - start) / 1e9));
    }
  }
  return Object.fromEntries(Object.entries(rates).map(([name, xs]) => [name, Math.round(median(xs))]));
}

// Native: one publicKeyTweakAdd per derived key (the EC part of CKDpub), no HMAC, no hashing.
const pub = secp256k1.publicKeyCreate(randomBytes(32), true);
const tweaks = Array.from({ length: COUNT }, () => randomBytes(32));

// Ours: full CKDpub (HMAC-SHA512 + point addition + compression), and full addresses.
const node = branchNode(parseExtendedPublicKey(wallets.w_wpkh.keys[0].tpub, NETWORKS.regtest));
const deriver = (name) => new DescriptorDeriver(parseDescriptor(wallets[name].recv_descriptor, NETWORKS.regtest));
const ranges = (d) => () => {
  for (let from = 0; from < COUNT; from += BATCH) d.addresses(from, BATCH);
};
const wpkh = deriver('w_wpkh');
const wsh = deriver('w_wsh2of3');
const tr = deriver('w_tr');
const ONE = 256;

const rates = measureAll({
  native: [COUNT, () => { for (const t of tweaks) secp256k1.publicKeyTweakAdd(pub, t, true); }],
  childKeys: [COUNT, () => { for (let from = 0; from < COUNT; from += BATCH) deriveChildPublicKeys(node, from, BATCH); }],
  wpkh: [COUNT, ranges(wpkh)],
  wsh: [COUNT, ranges(wsh)],
  tr: [COUNT, ranges(tr)],
  // derive(i) one index at a time on a fresh deriver (what a caller without batching gets)
  oneAtATime: [ONE, () => { const d = deriver('w_wpkh'); for (let i = 0; i < ONE; i++) d.derive(i); }],
});
const nativeRate = rates.native;
const keyRate = rates.childKeys;
const wpkhRate = rates.wpkh;
const wshRate = rates.wsh;
const trRate = rates.tr;
const singleRate = rates.oneAtATime;

const ratio = (rate, perAddressKeys) => (nativeRate / (rate * perAddressKeys)).toFixed(2);
const result = {
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
  runs: RUNS,
  count: COUNT,
  batch: BATCH,
  native_tweaks_per_s: nativeRate,
  child_keys_per_s: keyRate,
  wpkh_addresses_per_s: wpkhRate,
  wsh_2of3_addresses_per_s: wshRate,
  tr_addresses_per_s: trRate,
  wpkh_addresses_per_s_one_at_a_time: singleRate,
  // native tweak time / our time per derived key (1 key per wpkh address, 3 per 2-of-3 address)
  native_over_ours: { child_key: ratio(keyRate, 1), wpkh: ratio(wpkhRate, 1), wsh_2of3_per_key: ratio(wshRate, 3) },
};
console.log(JSON.stringify(result, null, 2));
