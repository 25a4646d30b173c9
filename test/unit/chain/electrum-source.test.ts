/**
 * The Electrum source against servers that misbehave, on the recorded regtest chain (a scriptable Electrum server
 * serving Bitcoin Core's real blocks): a confirmed payment the server makes up (its proof does not hold) and a
 * header that does not link fail the step with `bad_response` and emit nothing of the block; a history refused as
 * too large is `history_too_large`; another network's genesis is `wrong_network`; broadcast refusals in the words
 * Bitcoin Core uses get Bitcoin Core's codes.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ElectrumClient } from '../../../src/chain/electrum/client.js';
import { GENESIS_HASHES } from '../../../src/chain/electrum/headers.js';
import { scriptHashOf, statusOf } from '../../../src/chain/electrum/histories.js';
import { ElectrumChainSource } from '../../../src/chain/electrum/source.js';
import type { BlockConnected, BlockDisconnected, FollowRequest } from '../../../src/chain/follower.js';
import { fromHex, reverseHex } from '../../../src/core/bytes.js';
import { PackedScripts } from '../../../src/core/script-list.js';
import { parseBlock, serializeTransaction, txid as txidOf } from '../../../src/core/tx.js';
import { chainFailure } from '../../support/chain-error.js';
import { FakeRpcError, startFakeElectrum, type FakeElectrumServer } from '../../support/electrum-fake-server.js';
import { loadFixture } from '../../support/fixtures.js';

const blocks = loadFixture<Record<string, { hex: string }>>('blocks');
const chain = loadFixture<{ snapshots: Array<{ chain: string[] }> }>('timeline').snapshots.at(-1)!.chain;
const headerHex = (height: number) => blocks[chain[height]!]!.hex.slice(0, 160);
const blockAt = (height: number) => parseBlock(blocks[chain[height]!]!.hex);
const hash256 = (b: Uint8Array) => sha256(sha256(b));

/** A block holding several transactions, and its payment (the second transaction) with the script it pays. */
const paidHeight = chain.findIndex((_, h) => h > 0 && blockAt(h).transactions.length >= 3);
const payment = blockAt(paidHeight).transactions[1]!;
const paidScript = payment.outputs[0]!.script;
const tipHeight = chain.length - 1;

function proofOf(height: number, txid: string): { block_height: number; merkle: string[]; pos: number } {
  const txids = blockAt(height).transactions.map(txidOf);
  const pos = txids.indexOf(txid);
  let level = txids.map((t) => fromHex(t).reverse());
  const merkle: string[] = [];
  for (let i = pos; level.length > 1; i >>= 1) {
    if (level.length % 2 === 1) level.push(level.at(-1)!);
    merkle.push(reverseHex(level[i ^ 1]!));
    const next: Uint8Array[] = [];
    for (let j = 0; j < level.length; j += 2) next.push(hash256(new Uint8Array([...level[j]!, ...level[j + 1]!])));
    level = next;
  }
  return { block_height: height, merkle, pos };
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** A server of the recorded chain whose history of the paid script says `history`; the rest as given. */
async function serverWith(
  history: Array<{ tx_hash: string; height: number }>,
  genesisHash?: string,
  logged: string[] = [],
  protocol = '1.4',
): Promise<{ server: FakeElectrumServer; source: ElectrumChainSource }> {
  const server = await startFakeElectrum({ protocol, ...(genesisHash ? { genesisHash } : {}) });
  server.handle('blockchain.headers.subscribe', () => ({ height: tipHeight, hex: headerHex(tipHeight) }));
  server.handle('blockchain.block.headers', ([start, count]) => {
    const heights = Array.from({ length: Math.max(0, Math.min(Number(count), tipHeight + 1 - Number(start))) }, (_, i) => Number(start) + i);
    return { count: heights.length, hex: heights.map(headerHex).join(''), max: 2016 };
  });
  const known = scriptHashOf(paidScript);
  const entries = history.map((e) => ({ txid: e.tx_hash, height: e.height }));
  server.handle('blockchain.scripthash.subscribe', ([hash]) => (hash === known ? statusOf(entries) : null));
  server.handle('blockchain.scripthash.get_history', ([hash]) => (hash === known ? history : []));
  server.handle('blockchain.scripthash.get_balance', () => ({ confirmed: 0, unconfirmed: 0 }));
  const txs = new Map(Object.values(blocks).flatMap((b) => parseBlock(b.hex).transactions.map((tx, i) => [txidOf(tx), { hex: b.hex, i }] as const)));
  server.handle('blockchain.transaction.get', ([txid]) => {
    const found = txs.get(String(txid));
    if (!found) throw new FakeRpcError(2, 'No such mempool or blockchain transaction');
    return serializedTx(found.hex, found.i);
  });
  server.handle('blockchain.transaction.get_merkle', ([txid, asked]) => {
    // The branch from the block that truly holds it, said to be of the height asked.
    const height = chain.findIndex((_, h) => blockAt(h).transactions.some((tx) => txidOf(tx) === txid));
    return { ...proofOf(height, String(txid)), block_height: asked };
  });
  const client = new ElectrumClient({ url: server.url, timeoutMs: 5_000 });
  const source = new ElectrumChainSource(client, { network: 'regtest', log: (level, message) => logged.push(`${level}: ${message}`) });
  open.push(server, source);
  return { server, source };
}

/** The raw hex of the i-th transaction of a block (what blockchain.transaction.get answers). */
function serializedTx(blockHex: string, i: number): string {
  return Buffer.from(serializeTransaction(parseBlock(blockHex).transactions[i]!)).toString('hex');
}

const request = (from: FollowRequest['from']): FollowRequest => ({
  watchers: ['w'],
  from,
  scripts: () => ({ key: '1', derive: () => [paidScript] }),
});

async function follow(source: ElectrumChainSource, from: FollowRequest['from'], count: number): Promise<Array<BlockConnected | BlockDisconnected>> {
  const out: Array<BlockConnected | BlockDisconnected> = [];
  for await (const update of source.follower.follow(request(from), await source.follower.tip(), count)) out.push(update);
  return out;
}

describe('Electrum source against a server that misbehaves', () => {
  const paymentTxid = txidOf(payment);
  const before = { height: paidHeight - 1, hash: chain[paidHeight - 1]! };

  it('emits a payment whose proof holds, at its place in its block', async () => {
    const { source } = await serverWith([{ tx_hash: paymentTxid, height: paidHeight }]);
    const updates = await follow(source, before, 2);
    expect(updates.map((u) => u.hash)).toEqual([chain[paidHeight], chain[paidHeight + 1]]);
    expect((updates[0] as BlockConnected).transactions.map(txidOf)).toEqual([paymentTxid]);
    expect((updates[0] as BlockConnected).read).toBe(true);
    expect((updates[1] as BlockConnected).read).toBe(false);
  });

  it('refuses a confirmed payment the server puts in another block: nothing of that block is emitted', async () => {
    const logged: string[] = [];
    const { source } = await serverWith([{ tx_hash: paymentTxid, height: paidHeight + 1 }], undefined, logged);
    const emitted: Array<BlockConnected | BlockDisconnected> = [];
    const failure = await chainFailure((async () => {
      for await (const update of source.follower.follow(request({ height: paidHeight, hash: chain[paidHeight]! }), await source.follower.tip(), 2)) emitted.push(update);
    })());
    expect(failure.code).toBe('bad_response');
    expect(failure.message).toMatch(/proof .* does not hold/);
    expect(emitted).toEqual([]);
    expect(logged).toEqual(['warn: Electrum server sent a merkle proof that does not hold; nothing of its block is applied']);
  });

  it('refuses headers that do not link', async () => {
    const { server, source } = await serverWith([]);
    server.handle('blockchain.block.headers', ([start, count]) => {
      const heights = Array.from({ length: Number(count) }, (_, i) => Number(start) + i);
      // One header of the run replaced by the one two blocks on.
      return { count: heights.length, hex: heights.map((h, i) => headerHex(i === 1 ? h + 2 : h)).join(''), max: 2016 };
    });
    const failure = await chainFailure(follow(source, before, 3));
    expect(failure.code).toBe('bad_response');
    expect(failure.message).toMatch(/do not link/);
  });

  it('an empty history of a script that holds coins (Fulcrum over its max_history) is history_too_large, asked again until served', async () => {
    const { server, source } = await serverWith([]);
    const known = scriptHashOf(paidScript);
    server.handle('blockchain.scripthash.get_balance', ([hash]) => ({ confirmed: hash === known ? 5_000 : 0, unconfirmed: 0 }));
    const failure = await chainFailure(follow(source, before, 1));
    expect(failure.code).toBe('history_too_large');
    expect(failure.message).toBe("The Electrum server refuses to send the history of one of this wallet's addresses: it holds more transactions than the server allows (its max_history setting)");
    expect((await chainFailure(source.follower.mempool({ key: '1', derive: () => [paidScript] }))).code).toBe('history_too_large');
    // The server serves it again: followed.
    const paymentTxid = txidOf(payment);
    server.handle('blockchain.scripthash.get_history', ([hash]) => (hash === known ? [{ tx_hash: paymentTxid, height: paidHeight }] : []));
    const updates = await follow(source, before, 1);
    expect((updates[0] as BlockConnected).transactions.map(txidOf)).toEqual([paymentTxid]);
  });

  it('an empty history without coins is an unused script, its balance asked once', async () => {
    const { server, source } = await serverWith([]);
    expect(await follow(source, before, 2)).toHaveLength(2);
    expect(await follow(source, before, 2)).toHaveLength(2);
    expect(server.requests.filter((r) => r.method === 'blockchain.scripthash.get_balance')).toHaveLength(1);
  });

  it('scripts no group asked for during a whole sync pass are unsubscribed (protocol 1.4.2) and never read again', async () => {
    const { server, source } = await serverWith([{ tx_hash: txidOf(payment), height: paidHeight }], undefined, [], '1.4.2');
    server.handle('blockchain.scripthash.unsubscribe', () => true);
    const gone = Uint8Array.from([0x00, 0x14, ...new Uint8Array(20).fill(7)]);
    const goneHash = scriptHashOf(gone);
    const kept = (key: string) => ({ key, derive: () => [paidScript] });
    const touching = (hash: string) => server.requests.filter((r) => r.params[0] === hash).map((r) => r.method);
    // Pass 1: a group of two wallets' scripts; pass 2: the second wallet deleted, only the first's asked for.
    await source.follower.verifyNetwork();
    await source.follower.mempool({ key: 'both', derive: () => [paidScript, gone] });
    expect(touching(goneHash)).toEqual(['blockchain.scripthash.subscribe', 'blockchain.scripthash.get_history', 'blockchain.scripthash.get_balance']);
    await source.follower.verifyNetwork();
    await source.follower.mempool(kept('first'));
    expect(touching(goneHash)).toHaveLength(3);
    // Pass 3 begins: the deleted wallet's script was not asked for during pass 2.
    await source.follower.verifyNetwork();
    expect(touching(goneHash).slice(3)).toEqual(['blockchain.scripthash.unsubscribe']);
    expect(touching(scriptHashOf(paidScript))).not.toContain('blockchain.scripthash.unsubscribe');
    server.notify('blockchain.scripthash.subscribe', [goneHash, 'ab'.repeat(32)]); // a late notification changes nothing
    for (let pass = 0; pass < 3; pass++) {
      await source.follower.verifyNetwork();
      await source.follower.mempool(kept('first'));
    }
    expect(touching(goneHash)).toHaveLength(4);
  });

  it('a packed script list that grew (and one made anew) asks for the hash of each of its scripts, in order', async () => {
    const { server, source } = await serverWith([]);
    const scriptOf = (n: number) => Uint8Array.from([0x00, 0x14, ...new Uint8Array(20).fill(n)]);
    const subscribed = () => server.requests.filter((r) => r.method === 'blockchain.scripthash.subscribe').map((r) => r.params[0]);
    const first = PackedScripts.of([scriptOf(1), scriptOf(2)]);
    await source.follower.mempool({ key: 'v1', derive: () => first });
    // Grown in place (its first scripts shared), then grown from the older version (a copy): each hashed as it is.
    const grown = first.concat([scriptOf(3), scriptOf(4)]);
    await source.follower.mempool({ key: 'v2', derive: () => grown });
    const forked = first.concat([scriptOf(5)]);
    await source.follower.mempool({ key: 'v3', derive: () => forked });
    expect(subscribed()).toEqual([1, 2, 3, 4, 5].map((n) => scriptHashOf(scriptOf(n))));
    // Every script of each version is asked for again on the next pass of its key: the hashes line up with the list.
    server.requests.length = 0;
    await source.follower.verifyNetwork();
    await source.follower.verifyNetwork();
    await source.follower.mempool({ key: 'v2', derive: () => grown });
    expect(subscribed()).toEqual([1, 2, 3, 4].map((n) => scriptHashOf(scriptOf(n))));
  });

  it('a server before protocol 1.4.2 is not asked to unsubscribe; the script is dropped all the same', async () => {
    const { server, source } = await serverWith([]);
    const gone = Uint8Array.from([0x51]);
    for (const scripts of [[paidScript, gone], [paidScript], [paidScript], [paidScript]]) {
      await source.follower.verifyNetwork();
      await source.follower.mempool({ key: String(scripts.length), derive: () => scripts });
    }
    expect(server.requests.filter((r) => r.params[0] === scriptHashOf(gone)).map((r) => r.method)).toEqual([
      'blockchain.scripthash.subscribe',
      'blockchain.scripthash.get_history',
      'blockchain.scripthash.get_balance',
    ]);
    expect(server.requests.some((r) => r.method === 'blockchain.scripthash.unsubscribe')).toBe(false);
  });

  it('a history the server refuses as too large is history_too_large, from follow and mempool alike', async () => {
    const { server, source } = await serverWith([]);
    server.handle('blockchain.scripthash.subscribe', () => 'ab'.repeat(32));
    server.handle('blockchain.scripthash.get_history', () => {
      throw new FakeRpcError(-32600, 'history too large');
    });
    expect((await chainFailure(follow(source, before, 1))).code).toBe('history_too_large');
    expect((await chainFailure(source.follower.mempool({ key: '1', derive: () => [paidScript] }))).code).toBe('history_too_large');
  });

  it('a server of another network is refused', async () => {
    const { source } = await serverWith([], GENESIS_HASHES.testnet4);
    expect(await source.checkHealth()).toMatchObject({ ok: false, code: 'wrong_network', nodeNetwork: 'testnet4' });
    expect((await chainFailure(source.follower.tip())).code).toBe('wrong_network');
  });

  it("maps broadcast refusals, in the node's words, to Bitcoin Core's codes", async () => {
    const { server, source } = await serverWith([]);
    const cases: Array<[string, string]> = [
      ['TX decode failed', 'tx_decode_failed'],
      ['bad-txns-inputs-missingorspent', 'tx_missing_inputs'],
      ['Transaction outputs already in utxo set', 'tx_already_confirmed'],
      ['min relay fee not met, 100 < 141', 'tx_rejected'],
      ['insufficient fee, rejecting replacement', 'tx_rejected'],
      ['Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)', 'tx_failed'],
    ];
    for (const [reason, code] of cases) {
      server.handle('blockchain.transaction.broadcast', () => {
        throw new FakeRpcError(1, `the transaction was rejected by network rules.\n\n${reason}\n`);
      });
      const failure = await chainFailure(source.broadcast('0200'));
      expect(failure.code, reason).toBe(code);
      expect(failure.reason).toContain(reason);
    }
  });
});
