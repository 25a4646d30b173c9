// Engine throughput: one block of 3,000 transactions against 10 wallets of 2 x 1,000 derived scripts
// (20,000 scripts), 200 of its transactions touching the wallets; and a 5,000-transaction mempool snapshot.
// Baseline: the same output matching done by scanning every wallet's script list (what a map avoids).
// Run: npm run build && node bench/engine/apply-block.bench.mjs
import { sha256 } from '@noble/hashes/sha2.js';
import { addWallet, applyUpdate, createEngineState, getBalances } from '../../dist/engine/index.js';
import { txid } from '../../dist/core/tx.js';
import { equalBytes } from '../../dist/core/bytes.js';

const WALLETS = 10;
const SCRIPTS_PER_BRANCH = 1000;
const BLOCK_TXS = 3000;
const TOUCHING = 200;
const USED_INDEXES = 50; // payments use receive indexes below this: little gap extension inside the timing

const enc = new TextEncoder();
const p2wpkh = (seed) => Uint8Array.from([0x00, 0x14, ...sha256(enc.encode(seed)).subarray(0, 20)]);
const deriverFor = (w) => (branch, from, count) => Array.from({ length: count }, (_, i) => p2wpkh(`w${w}/${branch}/${from + i}`));
const hash = (seed) => Array.from(sha256(enc.encode(seed)), (b) => b.toString(16).padStart(2, '0')).join('');

function freshState() {
  const state = createEngineState();
  // A gap limit as large as the derived range: every script is watched (like Core's keypool of 1000).
  for (let w = 0; w < WALLETS; w++) addWallet(state, { walletId: `w${w}`, gapLimit: SCRIPTS_PER_BRANCH, derive: deriverFor(w) });
  return state;
}

function makeTx(seed, outputs, inputs = [{ txid: hash(`prev${seed}`), vout: 0 }]) {
  return {
    version: 2,
    locktime: 0,
    inputs: inputs.map((i) => ({ ...i, scriptSig: new Uint8Array(), sequence: 0xfffffffd, witness: [new Uint8Array(72), new Uint8Array(33)] })),
    outputs,
  };
}

/** Block 1 funds the wallets; block 2 spends half of those coins and pays the wallets again. */
function makeBlocks() {
  const coinbase = makeTx('cb', [{ value: 5_000_000_000n, script: p2wpkh('miner') }], [{ txid: '0'.repeat(64), vout: 0xffffffff }]);
  const block = (n, prev, txs) => ({ type: 'block_connected', height: n, hash: hash(`block${n}`), prevHash: prev, time: 1_700_000_000 + n, transactions: [coinbase, ...txs] });
  const funding = [];
  const spending = [];
  for (let i = 0; i < BLOCK_TXS; i++) {
    const w = i % WALLETS;
    const touches = i < TOUCHING;
    const pay = touches ? p2wpkh(`w${w}/0/${(i * 7) % USED_INDEXES}`) : p2wpkh(`other${i}`);
    funding.push(makeTx(`f${i}`, [{ value: 100_000n, script: pay }, { value: 50_000n, script: p2wpkh(`change${i}`) }]));
  }
  for (let i = 0; i < BLOCK_TXS; i++) {
    const w = i % WALLETS;
    const spend = i < TOUCHING / 2 ? [{ txid: txid(funding[i]), vout: 0 }] : [{ txid: hash(`x${i}`), vout: 1 }];
    const pay = i < TOUCHING ? p2wpkh(`w${w}/1/${i % USED_INDEXES}`) : p2wpkh(`other2-${i}`);
    spending.push(makeTx(`s${i}`, [{ value: 90_000n, script: pay }, { value: 1_000n, script: p2wpkh(`ext${i}`) }], spend));
  }
  const b1 = block(1, '0'.repeat(64), funding);
  const untouched = block(1, '0'.repeat(64), funding.slice(TOUCHING));
  return [b1, block(2, b1.hash, spending), untouched];
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const [b1, b2, untouched] = makeBlocks();
const mempool = { type: 'mempool', transactions: b2.transactions.slice(1).concat(b1.transactions.slice(1, 2001)).map((tx, i) => ({ tx, time: 1_700_000_100 + i })) };
const mempoolWithIds = { type: 'mempool', transactions: mempool.transactions.map((e) => ({ ...e, txid: txid(e.tx) })) };

const RUNS = 15;
const times = { connect1: [], connect2: [], untouched: [], mempool: [], mempoolIds: [], linear: [] };
for (let r = 0; r < RUNS + 2; r++) {
  const state = freshState();
  let t = performance.now();
  applyUpdate(state, b1);
  const c1 = performance.now() - t;
  t = performance.now();
  applyUpdate(state, b2);
  const c2 = performance.now() - t;

  const quiet = freshState();
  t = performance.now();
  applyUpdate(quiet, untouched);
  const u = performance.now() - t;

  const pending = freshState();
  applyUpdate(pending, b1);
  t = performance.now();
  applyUpdate(pending, mempool);
  const m = performance.now() - t;
  const pending2 = freshState();
  applyUpdate(pending2, b1);
  t = performance.now();
  applyUpdate(pending2, mempoolWithIds);
  const mi = performance.now() - t;

  // Baseline: match block 1's outputs by scanning every wallet script (no map).
  const allScripts = [];
  for (let w = 0; w < WALLETS; w++) for (const b of [0, 1]) allScripts.push(...deriverFor(w)(b, 0, SCRIPTS_PER_BRANCH));
  t = performance.now();
  let hits = 0;
  for (const tx of b1.transactions) for (const o of tx.outputs) for (const s of allScripts) if (equalBytes(s, o.script)) hits++;
  const lin = performance.now() - t;
  if (hits !== TOUCHING) throw new Error(`baseline found ${hits}`);
  if (r >= 2) {
    times.connect1.push(c1);
    times.connect2.push(c2);
    times.untouched.push(u);
    times.mempool.push(m);
    times.mempoolIds.push(mi);
    times.linear.push(lin);
  }
  if (r === 0) console.log('w0 balances after both blocks', getBalances(state, 'w0'));
}
const f = (ms) => `${ms.toFixed(1)} ms`;
console.log(`block 1 (${BLOCK_TXS} txs, ${TOUCHING} paying wallets): median ${f(median(times.connect1))}`);
console.log(`block 2 (${BLOCK_TXS} txs, ${TOUCHING / 2} spending wallet coins, ${TOUCHING} paying change): median ${f(median(times.connect2))}`);
console.log(`block of ${BLOCK_TXS - TOUCHING} txs touching no wallet: median ${f(median(times.untouched))}`);
console.log(`mempool snapshot (5,000 txs, txids computed): median ${f(median(times.mempool))}`);
console.log(`mempool snapshot (5,000 txs, txids given): median ${f(median(times.mempoolIds))}`);
console.log(`baseline output matching by scanning 20,000 scripts (block 1): median ${f(median(times.linear))}`);
console.log(`ratio baseline / engine block 1: ${(median(times.linear) / median(times.connect1)).toFixed(0)}x`);
