// The first block read from the node's block files after a start, on a layout like mainnet's: `--files` files
// of 128 MiB, each a run of records of `--block-kb` KB (sparse files: only the record heads are written, so the
// disk is never the limit), and the block asked for, a real regtest block, at the end of the last file. Timed
// with the node's heights (reading starts near the block) and without (from the first file), `--rounds` times
// each in a fresh reader. `node bench/rescan/first-read.bench.mjs [--files 400] [--block-kb 1500] [--rounds 3]`
// after `npm run build`.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BlockFileReader } from '../../dist/chain/bitcoind/block-files.js';

const { values } = parseArgs({ options: { files: { type: 'string', default: '400' }, 'block-kb': { type: 'string', default: '1500' }, rounds: { type: 'string', default: '3' } } });
const FILES = Number(values.files);
const RECORD = Number(values['block-kb']) * 1000;
const ROUNDS = Number(values.rounds);
const FILE_SIZE = 128 * 1024 * 1024;
const REGTEST_START = Buffer.from([0xfa, 0xbf, 0xb5, 0xda]);

const displayHash = (header) => Buffer.from(createHash('sha256').update(createHash('sha256').update(header).digest()).digest()).reverse().toString('hex');
const head = (size) => {
  const bytes = Buffer.alloc(8);
  REGTEST_START.copy(bytes);
  bytes.writeUInt32LE(size, 4);
  return bytes;
};

const recorded = Object.entries(JSON.parse(readFileSync(new URL('../../test/fixtures/regtest/blocks.json', import.meta.url), 'utf8')));
const [wantedHash, { hex }] = recorded.sort((a, b) => b[1].height - a[1].height)[0];
const wantedBlock = Buffer.from(hex, 'hex');

const folder = mkdtempSync(join(tmpdir(), 'wcs-first-read-'));
const heights = new Map();
let records = 0;
for (let n = 0; n < FILES; n++) {
  const fd = openSync(join(folder, `blk${String(n).padStart(5, '0')}.dat`), 'w');
  let at = 0;
  for (; at + 2 * RECORD <= FILE_SIZE; at += RECORD) {
    const header = randomBytes(80);
    heights.set(displayHash(header), records++);
    writeSync(fd, Buffer.concat([head(RECORD - 8), header]), 0, 88, at);
  }
  if (n === FILES - 1) writeSync(fd, Buffer.concat([head(wantedBlock.length), wantedBlock]), 0, 8 + wantedBlock.length, at);
  ftruncateSync(fd, FILE_SIZE);
  closeSync(fd);
}
heights.set(wantedHash, records);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timings = { near: [], first: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['near', 'first']) {
      const reader = new BlockFileReader({ folder, network: 'regtest', ...(kind === 'near' ? { heightsOf: async (hashes) => hashes.map((hash) => heights.get(hash)) } : {}) });
      const started = performance.now();
      const [block] = await reader.getBlocks([wantedHash]);
      timings[kind].push(performance.now() - started);
      await reader.close();
      if (block?.hash !== wantedHash) throw new Error(`the block was not found (${kind})`);
    }
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
console.log(`${FILES} files, ${records + 1} records of ${RECORD / 1000} KB; ${ROUNDS} rounds, medians (each round's figure):`);
for (const [kind, label] of [['near', 'with the node\'s heights (starts near the block)'], ['first', 'from the first file']]) {
  console.log(`- ${label}: ${median(timings[kind]).toFixed(1)} ms (${timings[kind].map((ms) => ms.toFixed(1)).join(' / ')})`);
}
