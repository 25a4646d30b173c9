// PSBT creation and listing latency through HTTP on the real server (in-process `startService`, SQLite
// file, request logging off): a wpkh wallet imported over the API whose store holds 1,000 or 10,000
// confirmed UTXOs (synthetic funding transactions written as the sync would write them), then
// POST /psbt (two recipients) + DELETE in a loop, and GET /psbt with 100 pending PSBTs.
// The chain backend only answers relay fees here (in process), so node round trips are not included.
// Usage: npm run build && node bench/psbt-http/run.mjs [--runs 60]
//        node bench/psbt-http/run.mjs --large [...]: the 100,000-UTXO wallet against Bitcoin Core (large.mjs)
import { cpus } from 'node:os';
import { external, fillFixtureWallet, fixtures, numberArg, startBenchService, stats } from '../wallet-bench-support.mjs';

const RUNS = Math.min(numberArg('runs', 60), 500);

async function main() {
  const { running, api, bearer, close } = await startBenchService('wcs-bench-psbt-');
  try {
    const auth = { ...bearer, 'content-type': 'application/json' };
    const results = {};
    for (const [alias, count, seed] of [['bench1k', 1_000, 1_000_000], ['bench10k', 10_000, 2_000_000]]) {
      const made = await fetch(`${api}/wallets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: alias, alias, recv_descriptor: fixtures.w_wpkh.recv_descriptor, change_descriptor: fixtures.w_wpkh.change_descriptor, birthday: 0 }) });
      if (made.status !== 201) throw new Error(`wallet import: ${made.status} ${await made.text()}`);
      const store = running.runtime.store;
      const wallet = await fillFixtureWallet(store, alias, count, seed);
      const details = await (await fetch(`${api}/wallets/${alias}?limit=0`, { headers: bearer })).json();
      if (details.utxo.length !== count) throw new Error(`${alias}: ${details.utxo.length} UTXOs instead of ${count}`);

      const body = JSON.stringify({ recipients: [{ address: external[0], amount: '0.004' }, { address: external[1], amount: 150_000, unit: 'sat' }], fee_rate: '5' });
      const create = [];
      for (let i = 0; i < RUNS + 5; i++) {
        const started = performance.now();
        const answer = await fetch(`${api}/wallets/${alias}/psbt`, { method: 'POST', headers: auth, body });
        const record = await answer.json();
        const elapsed = performance.now() - started;
        if (answer.status !== 201) throw new Error(`create: ${answer.status} ${JSON.stringify(record)}`);
        if (i >= 5) create.push(elapsed); // the first requests warm caches and the JIT
        const deleted = await fetch(`${api}/wallets/${alias}/psbt/${record.result.tx.txid}`, { method: 'DELETE', headers: bearer });
        if (deleted.status !== 200) throw new Error(`delete: ${deleted.status} ${await deleted.text()}`);
      }
      results[`create, ${count} UTXOs`] = stats(create);
      // The part of each creation spent loading the wallet (wallet part: store read, engine views).
      const load = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        await running.runtime.services.wallets.coins.forSpending(wallet.id);
        load.push(performance.now() - started);
      }
      results[`  of which forSpending, ${count} UTXOs (in process)`] = stats(load);
    }

    // List with 100 pending PSBTs (on the 10,000-UTXO wallet).
    const body = JSON.stringify({ recipients: [{ address: external[0], amount: '0.004' }], fee_rate: '3' });
    for (let i = 0; i < 100; i++) {
      const answer = await fetch(`${api}/wallets/bench10k/psbt`, { method: 'POST', headers: auth, body });
      if (answer.status !== 201) throw new Error(`create for list: ${answer.status} ${await answer.text()}`);
    }
    const list = [];
    for (let i = 0; i < RUNS + 5; i++) {
      const started = performance.now();
      const answer = await fetch(`${api}/wallets/bench10k/psbt`, { headers: bearer });
      const listed = await answer.json();
      const elapsed = performance.now() - started;
      if (Object.keys(listed.result).length !== 100) throw new Error(`list: ${Object.keys(listed.result).length} PSBTs`);
      if (i >= 5) list.push(elapsed);
    }
    results['list, 100 pending PSBTs (10,000 UTXOs)'] = stats(list);
    console.log(JSON.stringify({ machine: `${cpus().length} cores, Node ${process.version}`, results }, null, 2));
  } finally {
    await close();
  }
}

if (process.argv.includes('--large')) await import('./large.mjs');
else await main();
