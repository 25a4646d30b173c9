// The Electrum client on loopback: how fast many small calls go as paged batches, as pipelined single requests
// and one at a time; and how long the client holds the event loop while reading large answers: pages sized by
// the answers seen, against one answer line of the size a 300-call page of transactions would make.
// The server is a child process (its work is not counted in the client's event loop).
// Run: npm run build && node bench/electrum/batch.bench.mjs
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ElectrumClient } from '../../dist/chain/electrum/client.js';

const HEADER_CALLS = 10_000;
const TX_CALLS = 1_200;
const TX_HEX_CHARS = 40_000; // a 20 KB transaction
const ROUNDS = 3;

// A minimal Electrum server: version, features, block headers (80 bytes) and transactions of TX_HEX_CHARS.
const SERVER = `
const net = require('node:net');
const header = '00'.repeat(80);
const tx = 'ab'.repeat(${TX_HEX_CHARS / 2});
const answer = (call) => {
  let result = null;
  if (call.method === 'server.version') result = ['BenchServer 1', '1.4'];
  else if (call.method === 'server.features') result = { genesis_hash: '00'.repeat(32) };
  else if (call.method === 'blockchain.block.header') result = header;
  else if (call.method === 'blockchain.transaction.get') result = tx;
  else if (call.method === 'bench.transactions') result = Array.from({ length: call.params[0] }, () => tx);
  return { jsonrpc: '2.0', result, id: call.id };
};
const server = net.createServer((socket) => {
  let partial = '';
  socket.setEncoding('utf8');
  socket.on('data', (text) => {
    const lines = (partial + text).split('\\n');
    partial = lines.pop();
    const out = lines.map((line) => {
      const message = JSON.parse(line);
      return JSON.stringify(Array.isArray(message) ? message.map(answer) : answer(message)) + '\\n';
    });
    socket.write(out.join(''));
  });
  socket.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  const client = new ElectrumClient({ url: `tcp://127.0.0.1:${port}`, timeoutMs: 120_000 });
  await client.connect();
  try {
    const headers = Array.from({ length: HEADER_CALLS }, (_, height) => ({ method: 'blockchain.block.header', params: [height] }));
    const ways = {
      'paged batches (300 a page, 2 pages in flight)': () => client.batch(headers),
      'pipelined single requests': () => Promise.all(headers.map((c) => client.request(c.method, c.params))),
      'one request at a time': async () => {
        for (const c of headers) await client.request(c.method, c.params);
      },
    };
    console.log(`${HEADER_CALLS} blockchain.block.header calls, median of ${ROUNDS}:`);
    for (const [name, run] of Object.entries(ways)) {
      const times = [];
      for (let i = 0; i < ROUNDS; i++) {
        const start = performance.now();
        await run();
        times.push(performance.now() - start);
      }
      const ms = median(times);
      console.log(`  ${name.padEnd(48)} ${ms.toFixed(0).padStart(6)} ms  ${Math.round((HEADER_CALLS / ms) * 1000).toLocaleString('en-US').padStart(9)} calls/s`);
    }

    const txs = Array.from({ length: TX_CALLS }, (_, n) => ({ method: 'blockchain.transaction.get', params: [String(n)] }));
    console.log(`\n${TX_CALLS} blockchain.transaction.get calls of ${TX_HEX_CHARS / 2 / 1000} KB transactions, median of ${ROUNDS}:`);
    const measure = async (name, run) => {
      const times = [];
      const stalls = [];
      for (let i = 0; i < ROUNDS; i++) {
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const start = performance.now();
        await run();
        times.push(performance.now() - start);
        delay.disable();
        stalls.push(delay.max / 1e6);
      }
      console.log(`  ${name.padEnd(58)} ${median(times).toFixed(0).padStart(6)} ms  longest event-loop stall ${median(stalls).toFixed(1).padStart(6)} ms`);
    };
    await measure('batch, pages sized by the answers seen (~1 MiB a line)', () => client.batch(txs));
    await measure('batch, at most 25 calls a page', () => client.batch(txs, { maxCallsPerPage: 25 }));
    const bigLineMb = ((300 * (TX_HEX_CHARS + 3)) / 1e6).toFixed(0);
    await measure(`one answer of 300 transactions (a ${bigLineMb} MB line), x4`, async () => {
      for (let i = 0; i < TX_CALLS / 300; i++) await client.request('bench.transactions', [300]);
    });

    // The client's own work on one answer line (joining the chunks, decoding, JSON.parse), in CPU time: what a
    // page of that answer size holds the event loop for, without the machine's other load.
    console.log('\nCPU time to read one answer line, median of 5:');
    const history = Array.from({ length: 1_000 }, (_, n) => ({ tx_hash: n.toString(16).padStart(64, '0'), height: 800_000 + n }));
    const lines = {
      '25 transactions of 20 KB': () => Array.from({ length: 25 }, () => 'ab'.repeat(TX_HEX_CHARS / 2)),
      '300 transactions of 20 KB': () => Array.from({ length: 300 }, () => 'ab'.repeat(TX_HEX_CHARS / 2)),
      '10 histories of 1,000 entries': () => Array.from({ length: 10 }, () => history),
      '100 histories of 1,000 entries': () => Array.from({ length: 100 }, () => history),
    };
    for (const [name, results] of Object.entries(lines)) {
      const line = JSON.stringify(results().map((result, id) => ({ jsonrpc: '2.0', result, id })));
      const chunks = [];
      for (let i = 0; i < line.length; i += 65_536) chunks.push(Buffer.from(line.slice(i, i + 65_536)));
      const cpu = [];
      for (let i = 0; i < 5; i++) {
        const before = process.cpuUsage();
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const used = process.cpuUsage(before);
        cpu.push((used.user + used.system) / 1000);
      }
      console.log(`  ${`${name} (${(line.length / 1e6).toFixed(1)} MB)`.padEnd(58)} ${median(cpu).toFixed(1).padStart(6)} ms`);
    }
  } finally {
    await client.close();
    child.kill();
  }
}

await main();
