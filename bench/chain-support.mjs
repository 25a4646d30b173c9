// Synthetic regtest chains for the benchmarks: real serialized blocks with BIP158 basic filters, and a
// JSON-RPC server answering the Bitcoin Core methods the service's chain source calls, so a real
// `wcs serve` process can sync from it. Nothing here is Bitcoin Core: block headers carry no proof
// of work and a placeholder merkle root, which the service does not check.
import http from 'node:http';
import { sha256 } from '@noble/hashes/sha2.js';
import { HDKey } from '@scure/bip32';
import { buildBasicFilter } from '../dist/core/bip158.js';
import { reverseHex, toHex } from '../dist/core/bytes.js';
import { encodeVarint, serializeTransaction, txid, u32le } from '../dist/core/tx.js';

const TPUB_VERSIONS = { private: 0x04358394, public: 0x043587cf };
const GENESIS_TIME = 1_700_000_000;
const enc = new TextEncoder();
const hash256 = (b) => sha256(sha256(b));

export const seedScript = (seed) => Uint8Array.from([0x00, 0x14, ...sha256(enc.encode(seed)).subarray(0, 20)]);
export const seedTxid = (seed) => toHex(sha256(enc.encode(seed)));

/** `[fingerprint/path]tpub` of the account at `path` under a master key derived from `seedText`. */
export function accountKey(seedText, path) {
  const master = HDKey.fromMasterSeed(sha256(enc.encode(seedText)), TPUB_VERSIONS);
  const fingerprint = master.fingerprint.toString(16).padStart(8, '0');
  return `[${fingerprint}/${path.slice(2).replaceAll("'", 'h')}]${master.derive(path).publicExtendedKey}`;
}

/** A one-input transaction spending a made-up outpoint (or a coinbase at `coinbaseHeight`). */
export function syntheticTransaction(seed, outputs, coinbaseHeight) {
  const input = coinbaseHeight === undefined
    ? { txid: seedTxid(`prev ${seed}`), vout: 0, scriptSig: new Uint8Array(), sequence: 0xfffffffd, witness: [new Uint8Array(71), new Uint8Array(33)] }
    : { txid: '0'.repeat(64), vout: 0xffffffff, scriptSig: Uint8Array.from([0x03, coinbaseHeight & 0xff, (coinbaseHeight >> 8) & 0xff, coinbaseHeight >> 16]), sequence: 0xffffffff, witness: [] };
  return { version: 2, locktime: 0, inputs: [input], outputs };
}

/**
 * Blocks at heights 0..lastHeight, each a coinbase followed by `transactionsAt(height)`, one block
 * every 600 s. Each block: { height, hash, prev, time, raw, filter }.
 */
export function buildChain(lastHeight, transactionsAt) {
  const blocks = [];
  let prev = '0'.repeat(64);
  for (let height = 0; height <= lastHeight; height++) {
    const txs = [syntheticTransaction(`cb${height}`, [{ value: 5_000_000_000n, script: seedScript(`miner${height}`) }], height), ...transactionsAt(height)];
    const header = new Uint8Array(80);
    header.set(u32le(0x20000000), 0);
    header.set(Uint8Array.from(Buffer.from(prev, 'hex')).reverse(), 4);
    header.set(hash256(enc.encode(txs.map(txid).join())), 36);
    header.set(u32le(GENESIS_TIME + height * 600), 68);
    header.set(u32le(0x207fffff), 72);
    const hash = reverseHex(hash256(header));
    const raw = Buffer.concat([header, encodeVarint(txs.length), ...txs.map((t) => serializeTransaction(t))]);
    const filter = buildBasicFilter(hash, txs.flatMap((t) => t.outputs.map((o) => o.script)));
    blocks.push({ height, hash, prev, time: GENESIS_TIME + height * 600, raw, filter });
    prev = hash;
  }
  return blocks;
}

/** 1 sat/vB, Bitcoin Core's default relay fees, in BTC/kvB. */
const RELAY_FEE_BTC_PER_KVB = 0.00001;

/**
 * A JSON-RPC server on 127.0.0.1 (random port) over `blocks`, with an empty mempool and a fee
 * estimate of `feeRateBtcPerKvb`. Broadcasts are refused. Resolves to { url, user, password, close }.
 */
export async function startChainNode(blocks, { feeRateBtcPerKvb = 0.00002 } = {}) {
  const byHash = new Map(blocks.map((b) => [b.hash, b]));
  const tip = blocks.at(-1);
  const user = 'bench';
  const password = toHex(sha256(enc.encode(`${tip.hash}${Math.random()}`))).slice(0, 32);
  const blockNotFound = { code: -5, message: 'Block not found' };
  const known = (hash) => byHash.get(hash) ?? Promise.reject(blockNotFound);
  const methods = {
    getblockchaininfo: () => ({ chain: 'regtest', blocks: tip.height, headers: tip.height, bestblockhash: tip.hash, initialblockdownload: false, verificationprogress: 1 }),
    getnetworkinfo: () => ({ subversion: '/bench-chain-node/', incrementalfee: RELAY_FEE_BTC_PER_KVB }),
    getmempoolinfo: () => ({ minrelaytxfee: RELAY_FEE_BTC_PER_KVB, incrementalrelayfee: RELAY_FEE_BTC_PER_KVB, mempoolminfee: RELAY_FEE_BTC_PER_KVB }),
    getrawmempool: () => ({}),
    estimatesmartfee: () => ({ feerate: feeRateBtcPerKvb, blocks: 2 }),
    getblockhash: ([height]) => blocks[height]?.hash ?? Promise.reject({ code: -8, message: 'Block height out of range' }),
    getblock: async ([hash]) => (await known(hash)).raw.toString('hex'),
    getblockfilter: async ([hash]) => ({ filter: toHex((await known(hash)).filter), header: '00'.repeat(32) }),
    getblockheader: async ([hash]) => {
      const b = await known(hash);
      return { hash, height: b.height, time: b.time, mediantime: b.time, confirmations: tip.height - b.height + 1, ...(b.height > 0 ? { previousblockhash: b.prev } : {}) };
    },
    getmempoolentry: () => Promise.reject({ code: -5, message: 'Transaction not in mempool' }),
    sendrawtransaction: () => Promise.reject({ code: -26, message: 'broadcasts are refused by the benchmark node' }),
  };
  const answer = async (request) => {
    const method = methods[request?.method];
    if (!method) return { result: null, error: { code: -32601, message: 'Method not found' }, id: request?.id ?? null };
    try {
      return { result: await method(request.params ?? []), error: null, id: request.id };
    } catch (error) {
      return { result: null, error, id: request.id };
    }
  };
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const server = http.createServer(async (req, res) => {
    if (req.headers.authorization !== expected) {
      res.writeHead(401).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const reply = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    user,
    password,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
