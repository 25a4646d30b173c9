// PSBT and signature work on the regtest fixtures: parse, decode, check partial signatures,
// finalize, verify a signed transaction; ours against @scure/btc-signer where both do the same job.
// Run: npm run build && node bench/psbt/psbt.bench.mjs
import { readFileSync } from 'node:fs';
import { Transaction as SignerTransaction } from '@scure/btc-signer';
import { base64 } from '@scure/base';
import { checkPartialSignatures, decodePsbt, finalizePsbt, parsePsbt, psbtToBase64, spentOutput } from '../../dist/core/psbt/index.js';
import { verifyTransaction } from '../../dist/core/signing/verify.js';
import { parseTransaction } from '../../dist/core/tx.js';
import { NETWORKS } from '../../dist/core/network.js';

const psbts = JSON.parse(readFileSync(new URL('../../test/fixtures/regtest/psbts.json', import.meta.url), 'utf8'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Median microseconds per call over `rounds` rounds of `batch` calls. */
function measure(fn, batch = 200, rounds = 15) {
  for (let i = 0; i < batch; i++) fn(); // warm up
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    times.push(Number(process.hrtime.bigint() - start) / 1000 / batch);
  }
  return median(times);
}

const rows = [];
for (const wallet of ['w_wpkh', 'w_tr', 'w_wsh2of3']) {
  const stages = psbts[wallet].stages;
  const signed = stages[stages.length - 1].psbt;
  const bytes = base64.decode(signed);
  const parsed = parsePsbt(signed);
  const final = parseTransaction(psbts[wallet].final.hex);
  const unsigned = parsePsbt(stages[0].psbt);
  const prevouts = unsigned.tx.inputs.map((_, i) => spentOutput(unsigned, i));

  const ourParse = measure(() => parsePsbt(bytes));
  const theirParse = measure(() => SignerTransaction.fromPSBT(bytes));
  rows.push([wallet, 'parse signed PSBT', ourParse, theirParse]);
  rows.push([wallet, 'parse + write PSBT', measure(() => psbtToBase64(parsePsbt(bytes))), measure(() => SignerTransaction.fromPSBT(bytes).toPSBT(0))]);
  rows.push([wallet, 'decode (Core decodepsbt shape)', measure(() => decodePsbt(parsed, NETWORKS.regtest)), undefined]);
  rows.push([wallet, 'check partial signatures', measure(() => checkPartialSignatures(parsed), 50), undefined]);
  rows.push([
    wallet,
    'finalize (verifies) + extract',
    measure(() => finalizePsbt(parsePsbt(bytes)), 50),
    measure(() => {
      const t = SignerTransaction.fromPSBT(bytes);
      t.finalize();
      t.extract();
    }, 50),
  ]);
  rows.push([wallet, 'verify signed transaction', measure(() => verifyTransaction(final, prevouts), 50), undefined]);
}

console.log('| wallet | operation | ours (µs, median) | @scure/btc-signer (µs, median) | ratio ours/theirs |');
console.log('|---|---|---:|---:|---:|');
for (const [wallet, op, ours, theirs] of rows) {
  console.log(`| ${wallet} | ${op} | ${ours.toFixed(1)} | ${theirs === undefined ? '-' : theirs.toFixed(1)} | ${theirs === undefined ? '-' : (ours / theirs).toFixed(2)} |`);
}
