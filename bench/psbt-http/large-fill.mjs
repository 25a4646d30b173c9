// Writes the large wallet of `run.mjs --large` into a data folder, in a process of its own, so that the process
// measured afterwards holds only what loading and serving the wallet costs (building 200,000 rows here takes
// hundreds of MB that a process does not give back).
// Usage: node bench/psbt-http/large-fill.mjs <folder> <payments> <spends>; prints {tip, transactions} as JSON.
import { fixtures, startBenchService } from '../wallet-bench-support.mjs';
import { fillLargeWallet } from './large-wallet.mjs';

const [folder, payments, spends] = process.argv.slice(2);
const { running, api, bearer, close } = await startBenchService('', { folder, keepFolder: true });
try {
  const made = await fetch(`${api}/wallets`, {
    method: 'POST',
    headers: { ...bearer, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'large', alias: 'large', recv_descriptor: fixtures.w_wpkh.recv_descriptor, change_descriptor: fixtures.w_wpkh.change_descriptor, birthday: 0 }),
  });
  if (made.status !== 201) throw new Error(`wallet import: ${made.status} ${await made.text()}`);
  const { tip, transactions } = await fillLargeWallet(running.runtime.store, 'large', { payments: Number(payments), spends: Number(spends) });
  process.stdout.write(`\n${JSON.stringify({ tip, transactions })}\n`);
} finally {
  await close();
}
