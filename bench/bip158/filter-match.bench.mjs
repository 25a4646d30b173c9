// BIP158 matching: one sorted-merge query for a wallet's scripts vs one query per script.
// Run: npm run build && node bench/bip158/filter-match.bench.mjs
import { readFileSync } from 'node:fs';
import { basicFilterMatchesAny, buildBasicFilter } from '../../dist/core/bip158.js';

const blocks = JSON.parse(readFileSync(new URL('../../test/fixtures/regtest/blocks.json', import.meta.url), 'utf8'));
const fromHex = (h) => Uint8Array.from(Buffer.from(h, 'hex'));

/** Deterministic pseudo-random P2WPKH/P2TR scripts (xorshift32). */
function scripts(count, seed) {
  let x = seed >>> 0 || 1;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
  return Array.from({ length: count }, (_, i) => {
    const length = i % 2 ? 22 : 34;
    const s = new Uint8Array(length);
    s[0] = i % 2 ? 0x00 : 0x51;
    s[1] = length - 2;
    for (let j = 2; j < length; j++) s[j] = next() & 0xff;
    return s;
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const time = (fn, runs) => {
  fn();
  const t = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    fn();
    t.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(t);
};

// A mainnet-sized filter: 5,000 elements (a full block has a few thousand distinct scripts).
const bigHash = '00000000000000000002a7c4c1e48d76c5a37902165a270156b7a8d72728a054';
const bigFilter = buildBasicFilter(bigHash, scripts(5_000, 99));
const regtest = Object.entries(blocks).map(([hash, b]) => ({ hash, filter: fromHex(b.filter) }));

const rows = [];
for (const count of [100, 1_000, 10_000]) {
  const wallet = scripts(count, count);
  const runs = count >= 10_000 ? 9 : 31;
  const merged = time(() => basicFilterMatchesAny(bigFilter, bigHash, wallet), runs);
  const oneByOne = time(() => wallet.some((s) => basicFilterMatchesAny(bigFilter, bigHash, [s])), count >= 10_000 ? 3 : 9);
  const chain = time(() => regtest.forEach((b) => basicFilterMatchesAny(b.filter, b.hash, wallet)), runs);
  rows.push({
    scripts: count,
    'merge, 5k-element filter (ms)': merged.toFixed(3),
    'per script, 5k-element filter (ms)': oneByOne.toFixed(1),
    ratio: (oneByOne / merged).toFixed(0) + 'x',
    [`merge, all ${regtest.length} regtest filters (ms)`]: chain.toFixed(2),
  });
}
console.log(`node ${process.version}, ${(await import('node:os')).cpus().length} cores`);
console.table(rows);
