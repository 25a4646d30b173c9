// Coin selection time for wallets of 1,000 / 10,000 / 100,000 UTXOs.
// Run: npm run build && node bench/core/coinselect.bench.mjs
import { selectCoins, seededRandom } from '../../dist/core/coinselect/index.js';

const p2wpkh = (byte) => Uint8Array.from([0x00, 0x14, ...new Array(20).fill(byte)]);
const p2tr = (byte) => Uint8Array.from([0x51, 0x20, ...new Array(32).fill(byte)]);
const TYPES = [{ kind: 'wpkh' }, { kind: 'wpkh' }, { kind: 'tr' }, { kind: 'sh-wpkh' }, { kind: 'wsh-multi', m: 2, n: 3 }];

/** Realistic values: log-uniform between 1,000 sat and 1 BTC; 90% confirmed, some own change. */
function makeWallet(size, seed) {
  const rng = seededRandom(seed);
  const coins = [];
  for (let i = 0; i < size; i++) {
    const exponent = 3 + (5 * rng.nextInt(1_000_000)) / 1_000_000;
    coins.push({
      id: `${i.toString(16).padStart(64, '0')}:${rng.nextInt(4)}`,
      value: BigInt(Math.round(10 ** exponent)),
      inputType: TYPES[rng.nextInt(TYPES.length)],
      confirmations: rng.nextInt(10) === 0 ? 0 : 1 + rng.nextInt(500),
      isOwnChange: rng.nextInt(3) === 0,
    });
  }
  return coins;
}

function scenario(coins, seed, feeRate) {
  const rng = seededRandom(seed);
  // Payments from 0.001 to 0.5 BTC, to two recipients.
  const amount = () => BigInt(100_000 + rng.nextInt(50_000_000));
  return {
    coins,
    recipients: [{ script: p2tr(1), value: amount() }, { script: p2wpkh(2), value: amount() }],
    changeScript: p2wpkh(3),
    changeInputType: { kind: 'wpkh' },
    feeRate,
    options: { random: seededRandom(seed) },
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = [];
for (const [size, runs] of [[1_000, 31], [10_000, 21], [100_000, 9]]) {
  for (const feeRate of [5_000n, 50_000n]) {
    const coins = makeWallet(size, size);
    for (let w = 0; w < 3; w++) selectCoins(scenario(coins, 1000 + w, feeRate)); // warm up
    const times = [];
    const cpuTimes = [];
    const algorithms = {};
    let inputs = 0;
    for (let r = 0; r < runs; r++) {
      const request = scenario(coins, r, feeRate);
      const cpuStart = process.cpuUsage();
      const start = process.hrtime.bigint();
      const result = selectCoins(request);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      const cpu = process.cpuUsage(cpuStart);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
      algorithms[result.algorithm] = (algorithms[result.algorithm] ?? 0) + 1;
      inputs += result.inputs.length;
    }
    rows.push({
      utxos: size,
      'sat/vB': Number(feeRate) / 1000,
      runs,
      'median ms': median(times).toFixed(2),
      'min ms': Math.min(...times).toFixed(2),
      'median CPU ms': median(cpuTimes).toFixed(2),
      'max ms': Math.max(...times).toFixed(2),
      'avg inputs': (inputs / runs).toFixed(1),
      algorithms: Object.entries(algorithms).map(([k, v]) => `${k} ${v}`).join(', '),
    });
  }
}
// Wall time suffers when other processes share the cores; process CPU time much less so.
console.log(`node ${process.version}, ${process.platform} ${process.arch}`);
console.table(rows);
