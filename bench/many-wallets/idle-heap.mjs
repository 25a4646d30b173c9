/**
 * The JS heap an idle created wallet holds in-process, without the store or HTTP: N 2-of-3 wallets made as
 * `POST /wallets` makes them (both descriptors parsed, the two shown addresses derived, the derivers handed to
 * the wallet's scripts), then loaded as the sync loads a new wallet (its 20 + 20 scripts derived in parts, the
 * engine state), and the sync's watched list of their scripts. `node --expose-gc bench/many-wallets/idle-heap.mjs
 * [--wallets 2000]` after `npm run build`; prints the heap per wallet after a garbage collection, array buffers'
 * bytes included (typed arrays' contents, such as the packed watched lists and the key counts, live outside V8's heap).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { descriptorsOf } from './wallets.mjs';
import { NETWORKS } from '../../dist/core/network.js';
import { emptyEngineState } from '../../dist/engine/state.js';
import { branchDeriver } from '../../dist/services/miniscript-wallet.js';
import { WalletScriptsCache } from '../../dist/services/wallet-scripts.js';
import { loadWalletInto } from '../../dist/services/wallet-state.js';
import { WatchedScriptLists } from '../../dist/services/sync/watched-scripts.js';

const { values } = parseArgs({ options: { wallets: { type: 'string', default: '2000' } } });
const count = Number(values.wallets);
if (!globalThis.gc) throw new Error('run with node --expose-gc');

const heap = () => {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const cache = new WalletScriptsCache();
const state = emptyEngineState();
const watched = new WatchedScriptLists();
const made = [];
for (let i = 0; i < count; i++) made.push(descriptorsOf(i));
const before = heap();
const ids = [];
for (let i = 0; i < count; i++) {
  const [receiveDescriptor, changeDescriptor] = made[i];
  const wallet = { id: randomUUID(), receiveDescriptor, changeDescriptor, network: 'regtest', gapLimit: 20 };
  const derivers = [branchDeriver(receiveDescriptor, NETWORKS.regtest), branchDeriver(changeDescriptor, NETWORKS.regtest)];
  cache.adopt(wallet, derivers);
  const scripts = cache.get(wallet);
  scripts.scriptAt(0, 0); // the addresses creation shows
  scripts.scriptAt(1, 0);
  const rows = { revision: 0, sync: { walletId: wallet.id, tip: null, lastUsedReceive: -1, lastUsedChange: -1 }, lastRevealedReceive: -1, addresses: [], transactions: [] };
  await loadWalletInto(state, wallet, rows, scripts);
  ids.push(wallet.id);
}
const loaded = heap();
const list = watched.scriptsOf(ids, (id) => state.wallets.get(id));
const scriptsWatched = list.derive().length;
const withList = heap();
// What the idle timer does 30 s after a wallet's last derivation.
for (const id of ids) cache.get({ id }).releaseDerivers?.();
const idle = heap();
const kb = (bytes) => (bytes / count / 1024).toFixed(1);
console.log(`${count} wallets, ${scriptsWatched} scripts watched: engine + scripts ${kb(loaded - before)} KB a wallet; with the watched list ${kb(withList - before)} KB; their derivers dropped ${kb(idle - before)} KB`);
