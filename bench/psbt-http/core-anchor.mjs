// The anchor of the large-wallet benchmark: Bitcoin Core's `walletcreatefundedpsbt` on a watch-only
// descriptor wallet holding `count` UTXOs of the fixture wpkh wallet. The chain is built once with the real
// bitcoind (a few sends of 2,000 outputs each, mined every 10 sends) and the datadir kept in the cache folder
// (WCS_BENCH_CACHE, default ~/.cache/wcs-bench); later runs only load the wallet and time the calls.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';

const OUTPUTS_PER_SEND = 2_000;
const SENDS_PER_BLOCK = 10;
const WALLET = 'watch';
const log = (...parts) => console.error(new Date().toISOString().slice(11, 19), ...parts);
const btc = (sat) => (sat / 1e8).toFixed(8);

/** The cached datadir for `count` UTXOs, built if missing; resolves to { dir, meta }. */
async function chainFor(bitcoind, count, fixture) {
  const dir = join(process.env.WCS_BENCH_CACHE ?? join(homedir(), '.cache', 'wcs-bench'), `psbt-anchor-v1-${count}`);
  if (existsSync(join(dir, 'anchor.json'))) return { dir, meta: JSON.parse(readFileSync(join(dir, 'anchor.json'), 'utf8')) };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const node = await startBitcoind(bitcoind, dir);
  const { rpc } = node;
  try {
    await rpc.call('createwallet', ['miner']);
    const minerAddress = await rpc.call('getnewaddress', [], 'miner');
    await rpc.call('generatetoaddress', [110, minerAddress]);
    // Distinct addresses per send (Core refuses a duplicated address in one transaction).
    const range = Math.min(count, OUTPUTS_PER_SEND);
    const addresses = await rpc.call('deriveaddresses', [fixture.recv_descriptor, [0, range - 1]]);
    // The watch-only wallet exists before the coins, so it takes them in as they come (no rescan call,
    // which on this many outputs runs longer than an HTTP client waits for an answer).
    await rpc.call('createwallet', { wallet_name: WALLET, disable_private_keys: true, blank: true, load_on_startup: false });
    const imports = [
      { desc: fixture.recv_descriptor, timestamp: 'now', active: true, internal: false, range: [0, range - 1] },
      { desc: fixture.change_descriptor, timestamp: 'now', active: true, internal: true, range: [0, 99] },
    ];
    const imported = await rpc.call('importdescriptors', [imports], WALLET);
    if (!imported.every((r) => r.success)) throw new Error(`importdescriptors: ${JSON.stringify(imported)}`);
    for (let paid = 0, sends = 0; paid < count; sends++) {
      const n = Math.min(OUTPUTS_PER_SEND, count - paid);
      // Values as the service's synthetic coins: 50,000 to 69,999 sat.
      const outputs = Array.from({ length: n }, (_, i) => ({ [addresses[i]]: btc(50_000 + (((paid + i) * 37) % 20_000)) }));
      await rpc.call('send', [outputs, null, 'unset', 2], 'miner');
      paid += n;
      if ((sends + 1) % SENDS_PER_BLOCK === 0 || paid >= count) {
        await rpc.call('generatetoaddress', [1, minerAddress]);
        log(`anchor chain: ${paid} of ${count} coins mined`);
      }
    }
    const utxos = (await rpc.call('listunspent', [1, 9_999_999], WALLET)).length;
    if (utxos !== count) throw new Error(`anchor wallet holds ${utxos} UTXOs instead of ${count}`);
    await rpc.call('unloadwallet', [WALLET]);
    await rpc.call('unloadwallet', ['miner']);
    const meta = { count, utxos, builtSeconds: Math.round((performance.now() - started) / 1000) };
    writeFileSync(join(dir, 'anchor.json'), JSON.stringify(meta, null, 2));
    return { dir, meta };
  } finally {
    await node.stop();
  }
}

/**
 * Times Core's `walletcreatefundedpsbt` (two recipients at 5 sat/vB, as the service's requests) `runs`
 * times on the cached wallet of `count` UTXOs. Resolves to { ms: [...], loadSeconds, utxos }.
 */
export async function coreCreateFundedPsbt({ root, count, runs, fixture, recipients }) {
  const bitcoind = locateBitcoind(root);
  const { dir } = await chainFor(bitcoind, count, fixture);
  const node = await startBitcoind(bitcoind, dir);
  try {
    const { rpc } = node;
    const loadStarted = performance.now();
    await rpc.call('loadwallet', [WALLET]);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const utxos = (await rpc.call('getwalletinfo', [], WALLET)).txcount;
    const outputs = recipients.map(({ address, sat }) => ({ [address]: btc(sat) }));
    const ms = [];
    for (let i = 0; i < runs + 1; i++) {
      const started = performance.now();
      const answer = await rpc.call('walletcreatefundedpsbt', [[], outputs, 0, { fee_rate: 5, includeWatching: true }], WALLET);
      const elapsed = performance.now() - started;
      if (typeof answer.psbt !== 'string') throw new Error('walletcreatefundedpsbt gave no PSBT');
      if (i > 0) ms.push(elapsed); // the first call warms the wallet's caches
    }
    await rpc.call('unloadwallet', [WALLET]);
    return { ms, loadSeconds, walletTxs: utxos };
  } finally {
    await node.stop();
  }
}
