// HTML time of every page of the web interface on the real server (in-process `startService`, SQLite
// file, request logging off), signed in with a session cookie, on a wpkh wallet whose store holds
// 10,000 confirmed coins (synthetic funding transactions written as the sync would write them) and
// one pending PSBT. Median and p99 of each page's full answer (request sent to body read).
// The chain backend only answers relay fees here (in process), so node round trips are not included.
// Usage: npm run build && node bench/web/run.mjs [--runs 60]
import { cpus } from 'node:os';
import { BENCH_PASSWORD, external, fillFixtureWallet, fixtures, numberArg, startBenchService, stats } from '../wallet-bench-support.mjs';

const RUNS = Math.min(numberArg('runs', 60), 500);

async function main() {
  const { running, api, bearer, close } = await startBenchService('wcs-bench-web-');
  try {
    const auth = { ...bearer, 'content-type': 'application/json' };
    const alias = 'bench10k';
    const count = 10_000;
    const made = await fetch(`${api}/wallets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: alias, alias, recv_descriptor: fixtures.w_wpkh.recv_descriptor, change_descriptor: fixtures.w_wpkh.change_descriptor, birthday: 0 }) });
    if (made.status !== 201) throw new Error(`wallet import: ${made.status} ${await made.text()}`);
    const store = running.runtime.store;
    await fillFixtureWallet(store, alias, count, 2_000_000);
    const created = await fetch(`${api}/wallets/${alias}/psbt`, { method: 'POST', headers: auth, body: JSON.stringify({ recipients: [{ address: external[0], amount: '0.004' }, { address: external[1], amount: 150_000, unit: 'sat' }], fee_rate: '5' }) });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
    const txid = (await created.json()).result.tx.txid;

    // Sign in through the sign-in form, as a browser does.
    const signIn = await fetch(`${running.url}/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: running.url }, body: new URLSearchParams({ user: 'admin', password: BENCH_PASSWORD }).toString() });
    const cookie = signIn.headers.getSetCookie().find((c) => c.startsWith('wcs_session='))?.split(';')[0];
    if (signIn.status !== 303 || !cookie) throw new Error(`sign-in: ${signIn.status}`);

    const pages = [
      ['wallet list', '/'],
      ['wallet page (receive, latest transactions, pending PSBTs)', `/wallets/${alias}`],
      ['transactions, first page of 50', `/wallets/${alias}?view=transactions`],
      ['coins, first page of 100', `/wallets/${alias}?view=coins`],
      ['addresses, first page of 50', `/wallets/${alias}?view=addresses`],
      ['send form', `/wallets/${alias}/send`],
      ['PSBT page', `/wallets/${alias}/psbts/${txid}`],
      ['live fingerprint (JSON)', `/wallets/${alias}/live`],
      ['administration', '/admin'],
    ];
    const results = {};
    for (const [name, path] of pages) {
      const times = [];
      for (let i = 0; i < RUNS + 5; i++) {
        const started = performance.now();
        const answer = await fetch(`${running.url}${path}`, { headers: { cookie }, redirect: 'manual' });
        await answer.text();
        const elapsed = performance.now() - started;
        if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`);
        if (i >= 5) times.push(elapsed); // the first requests warm caches and the JIT
      }
      results[name] = stats(times);
    }
    console.log(JSON.stringify({ machine: `${cpus().length} cores, Node ${process.version}`, coins: count, results }, null, 2));
  } finally {
    await close();
  }
}

await main();
