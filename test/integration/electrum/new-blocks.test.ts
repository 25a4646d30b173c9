/**
 * A new block through a real Fulcrum over a real Bitcoin Core: the follower reads the block's own transactions
 * (txids by position, checked against the header's merkle root) and reads again only the histories of the scripts
 * they touch, for two groups of wallets with their own scripts. The calls are counted on their way to the server.
 * The blocks are mined with transactions that never were in the mempool, and the scripts' status notifications are
 * held back (Fulcrum sends them 500 ms after the header): what the wallets get comes from the block alone. Also: two
 * blocks at once, a block of more transactions than the rule allows, a list of txids that does not prove out, a
 * reorg; each time the groups get exactly their transactions of each block. And a payment waiting in the mempool that
 * a block leaves out through a conflict elsewhere: gone from the next mempool read.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ElectrumChainSource } from '../../../src/chain/electrum/source.js';
import { ElectrumClient } from '../../../src/chain/electrum/client.js';
import type { ElectrumCalls } from '../../../src/chain/electrum/calls.js';
import type { CallOutcome } from '../../../src/chain/electrum/json-rpc.js';
import { scriptHashOf } from '../../../src/chain/electrum/histories.js';
import type { BlockConnected, BlockDisconnected, FollowRequest } from '../../../src/chain/follower.js';
import { ChainError } from '../../../src/chain/types.js';
import { fromHex } from '../../../src/core/bytes.js';
import { txid as txidOf } from '../../../src/core/tx.js';
import { Chain, waitFor } from '../bitcoind/chain-world.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { FULCRUM_NODE_ARGS, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';

type Call = { method: string; params: unknown[] };

/**
 * The client the follower uses, counting each call by method (and the scripts whose history is asked), holding
 * back the scripts' status notifications while `holdStatuses`, and letting a test change an answer (`alter`).
 */
class CountedCalls implements ElectrumCalls {
  readonly counts = new Map<string, number>();
  readonly historiesAsked: string[] = [];
  holdStatuses = false;
  alter: ((call: Call, outcome: CallOutcome) => CallOutcome) | undefined;

  constructor(private readonly client: ElectrumClient) {}

  get serverInfo() {
    return this.client.serverInfo;
  }
  connect() {
    return this.client.connect();
  }
  close() {
    return this.client.close();
  }
  onReconnect(listener: () => void) {
    return this.client.onReconnect(listener);
  }
  onNotification(listener: (method: string, params: unknown[]) => void) {
    return this.client.onNotification((method, params) => {
      if (!(this.holdStatuses && method === 'blockchain.scripthash.subscribe')) listener(method, params);
    });
  }
  async request<T = unknown>(method: string, params: unknown[]): Promise<T> {
    this.count([{ method, params }]);
    return this.client.request<T>(method, params);
  }
  async batch<T = unknown>(calls: readonly Call[], options?: { maxCallsPerPage?: number }): Promise<T[]> {
    const outcomes = await this.batchSettled<T>(calls, options);
    return outcomes.map((o) => {
      if (!o.ok) throw o.error;
      return o.result;
    });
  }
  async batchSettled<T = unknown>(calls: readonly Call[], options?: { maxCallsPerPage?: number }): Promise<Array<CallOutcome<T>>> {
    this.count(calls);
    const outcomes = await this.client.batchSettled<T>(calls, options);
    return this.alter ? (outcomes.map((o, i) => this.alter!(calls[i]!, o)) as Array<CallOutcome<T>>) : outcomes;
  }
  reset(): void {
    this.counts.clear();
    this.historiesAsked.length = 0;
  }
  private count(calls: readonly Call[]): void {
    for (const { method, params } of calls) {
      this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
      if (method === 'blockchain.scripthash.get_history') this.historiesAsked.push(params[0] as string);
    }
  }
}

interface Group {
  key: string;
  scripts: Uint8Array[];
  from: FollowRequest['from'];
}

/** Unused scripts (P2WPKH of random keys): most of what wallets watch, and what the rule weighs a block against. */
const unused = (n: number) => Array.from({ length: n }, () => new Uint8Array([0x00, 0x14, ...randomBytes(20)]));
const FILLER = 150;

describeWithFulcrum('Electrum: a new block read through its own transactions', () => {
  let chain: Chain;
  let fulcrum: FulcrumServer;
  let calls: CountedCalls;
  let electrum: ElectrumChainSource;
  const warnings: string[] = [];
  const addresses: string[] = [];
  const scripts: Uint8Array[] = [];
  const hashOf = (i: number) => scriptHashOf(scripts[i]!);
  let a: Group;
  let b: Group;
  const parents = new Map<string, string>();

  beforeAll(async () => {
    chain = await Chain.start({ args: FULCRUM_NODE_ARGS });
    fulcrum = await startFulcrum(chain.node);
    calls = new CountedCalls(new ElectrumClient({ url: fulcrum.url, timeoutMs: 10_000 }));
    electrum = new ElectrumChainSource(calls, { network: 'regtest', log: (level, message) => {
        if (level === 'warn') warnings.push(message);
      },
    });
    await chain.rpc.call('createwallet', { wallet_name: 'watched', load_on_startup: false });
    for (let i = 0; i < 6; i++) {
      const address: string = await chain.rpc.call('getnewaddress', ['', 'bech32'], 'watched');
      addresses.push(address);
      scripts.push(fromHex((await chain.rpc.call('getaddressinfo', [address], 'watched')).scriptPubKey));
    }
    // Group B's script 2 holds a coin before the groups start.
    await chain.pay([{ address: addresses[2]!, sat: 50_000_000 }]);
    await chain.mine(1);
    await atTip();
    const tip = await electrum.follower.tip();
    a = { key: 'a1', scripts: [scripts[0]!, scripts[1]!, ...unused(FILLER)], from: { height: tip.height - 2, hash: null } };
    b = { key: 'b1', scripts: [scripts[2]!, scripts[3]!, ...unused(FILLER)], from: { height: tip.height - 2, hash: null } };
    await follow(a);
    expect(await follow(b)).toHaveLength(2);
  }, 180_000);
  afterAll(async () => {
    await electrum?.close();
    await fulcrum?.stop();
    await chain?.node.stop();
  });

  async function atTip(): Promise<void> {
    await fulcrum.waitForTip();
    const best: string = await chain.rpc.call('getbestblockhash');
    await waitFor(async () => (await electrum.follower.tip()).hash === best, 'the Electrum source at the node tip');
  }

  /** Follows the group to the tip (as the sync does: again after a disconnection); returns the updates. */
  async function follow(group: Group): Promise<Array<BlockConnected | BlockDisconnected>> {
    const updates: Array<BlockConnected | BlockDisconnected> = [];
    for (let more = true; more; ) {
      more = false;
      const request: FollowRequest = {
        watchers: [group.key],
        from: group.from,
        scripts: () => ({ key: group.key, derive: () => group.scripts }),
        recordedParent: async (hash) => parents.get(hash),
      };
      for await (const update of electrum.follower.follow(request, await electrum.follower.tip(), 1_000)) {
        updates.push(update);
        if (update.type === 'block_connected') {
          parents.set(update.hash, update.prevHash);
          group.from = { height: update.height, hash: update.hash };
        } else {
          group.from = { height: update.height - 1, hash: update.prevHash };
          more = true;
        }
      }
    }
    return updates;
  }

  const txidsOf = (updates: Array<BlockConnected | BlockDisconnected>) =>
    updates.map((u) => (u.type === 'block_connected' ? { height: u.height, txids: u.transactions.map((tx) => txidOf(tx)) } : { disconnected: u.height }));

  /**
   * A transaction signed by the miner's wallet (or `wallet`) and not sent: it reaches the node only in a block. The
   * miner spends old coinbases only: a transaction spending the change of one that paid a watched script marks that
   * script touched too (its history holds the txid), which is right but would blur the counts here.
   */
  async function signedNotSent(outputs: Record<string, number>, wallet = 'miner'): Promise<{ hex: string; txid: string }> {
    const raw: string = await chain.rpc.call('createrawtransaction', [[], outputs], wallet);
    const funded = await chain.rpc.call('fundrawtransaction', [raw, { lockUnspents: true, minconf: wallet === 'miner' ? 105 : 1 }], wallet);
    const { hex } = await chain.rpc.call('signrawtransactionwithwallet', [funded.hex], wallet);
    return { hex, txid: (await chain.rpc.call('decoderawtransaction', [hex])).txid };
  }

  async function mineWith(txs: Array<{ hex: string }>): Promise<string> {
    const { hash } = await chain.rpc.call('generateblock', [await chain.miner.call('getnewaddress'), txs.map((t) => t.hex)]);
    return hash;
  }

  const minerAddress = () => chain.miner.call<string>('getnewaddress');

  it('a block paying watched scripts and spending a watched coin: each group gets its transactions, only the scripts they touch are read again', async () => {
    calls.holdStatuses = true;
    const payA = await signedNotSent({ [addresses[0]!]: 0.01, [addresses[4]!]: 0.02 });
    const spendB = await signedNotSent({ [await minerAddress()]: 0.1 }, 'watched');
    const payB = await signedNotSent({ [addresses[3]!]: 0.03 });
    const elsewhere = await signedNotSent({ [await minerAddress()]: 0.04 });
    await mineWith([payA, spendB, elsewhere, payB]);
    await atTip();
    calls.reset();
    // Group A derived script 4 meanwhile: a new script, subscribed and read whole.
    a.scripts = [...a.scripts, scripts[4]!];
    a.key = 'a2';
    const [toA, toB] = [await follow(a), await follow(b)];
    const height = a.from.height;
    expect(txidsOf(toA)).toEqual([{ height, txids: [payA.txid] }]);
    expect(txidsOf(toB)).toEqual([{ height, txids: [spendB.txid, payB.txid] }]);
    expect(calls.historiesAsked.sort()).toEqual([hashOf(0), hashOf(4), hashOf(2), hashOf(3)].sort());
    // The block's five txids listed (with the refusal past them), the four transactions not held read, none proved
    // again one by one.
    expect(calls.counts.get('blockchain.transaction.get')).toBe(5);
    expect(calls.counts.get('blockchain.transaction.get_merkle') ?? 0).toBe(0);
    expect(calls.counts.get('blockchain.transaction.id_from_pos')).toBeGreaterThanOrEqual(6);
    expect(warnings).toEqual([]);
  });

  it('two blocks at once: both read, each group gets its transactions of each', async () => {
    const first = await signedNotSent({ [addresses[1]!]: 0.05 });
    await mineWith([first]);
    const second = [await signedNotSent({ [addresses[3]!]: 0.06 }), await signedNotSent({ [addresses[0]!]: 0.07 })];
    await mineWith(second);
    await atTip();
    calls.reset();
    const [toA, toB] = [await follow(a), await follow(b)];
    const tip = a.from.height;
    expect(txidsOf(toA)).toEqual([{ height: tip - 1, txids: [first.txid] }, { height: tip, txids: [second[1]!.txid] }]);
    expect(txidsOf(toB)).toEqual([{ height: tip - 1, txids: [] }, { height: tip, txids: [second[0]!.txid] }]);
    expect(calls.historiesAsked.sort()).toEqual([hashOf(1), hashOf(0), hashOf(3)].sort());
    expect(warnings).toEqual([]);
  });

  it('a block of more transactions not held than the rule allows: every script read again, the same transactions', async () => {
    // 304 scripts allow 7 transactions not held (one in 40): the coinbase and seven more are over.
    const txs = [await signedNotSent({ [addresses[1]!]: 0.08 })];
    for (let i = 0; i < 6; i++) txs.push(await signedNotSent({ [await minerAddress()]: 0.01 }));
    await mineWith(txs);
    await atTip();
    calls.reset();
    const [toA, toB] = [await follow(a), await follow(b)];
    expect(txidsOf(toA)).toEqual([{ height: a.from.height, txids: [txs[0]!.txid] }]);
    expect(txidsOf(toB)).toEqual([{ height: b.from.height, txids: [] }]);
    expect(calls.historiesAsked.length).toBe(a.scripts.length + b.scripts.length);
    expect(calls.counts.get('blockchain.transaction.get') ?? 0).toBe(1); // the group's one transaction only
  });

  it("a list of txids that does not prove out (the server hides the block's last one): logged, every script read again", async () => {
    const hidden = await signedNotSent({ [addresses[3]!]: 0.09 });
    await mineWith([await signedNotSent({ [await minerAddress()]: 0.01 }), hidden]);
    await atTip();
    const height = (await electrum.follower.tip()).height;
    calls.reset();
    calls.alter = (call, outcome) =>
      call.method === 'blockchain.transaction.id_from_pos' && call.params[0] === height && (call.params[1] as number) >= 2
        ? { ok: false, error: new ChainError('rpc_error', `No transaction at position ${String(call.params[1])} for height ${height}`) }
        : outcome;
    try {
      const toB = await follow(b);
      expect(txidsOf(toB)).toEqual([{ height, txids: [hidden.txid] }]);
    } finally {
      calls.alter = undefined;
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/does not prove out/);
    expect(calls.historiesAsked.length).toBe(b.scripts.length);
    warnings.length = 0;
    await follow(a);
  });

  it('a reorg: the block that left is disconnected, the histories all read again, the new chain emitted', async () => {
    const gone = await signedNotSent({ [addresses[0]!]: 0.11 });
    const left = await mineWith([gone]);
    await atTip();
    expect(txidsOf(await follow(a))).toEqual([{ height: a.from.height, txids: [gone.txid] }]);
    await follow(b);
    // The block leaves; a longer chain replaces it with a payment to group B instead.
    await chain.rpc.call('invalidateblock', [left]);
    const instead = await signedNotSent({ [addresses[2]!]: 0.12 });
    await mineWith([instead]);
    await mineWith([]);
    await atTip();
    calls.reset();
    const toA = await follow(a);
    const toB = await follow(b);
    const tip = a.from.height;
    expect(txidsOf(toA)).toEqual([{ disconnected: tip - 1 }, { height: tip - 1, txids: [] }, { height: tip, txids: [] }]);
    expect(txidsOf(toB)).toEqual([{ disconnected: tip - 1 }, { height: tip - 1, txids: [instead.txid] }, { height: tip, txids: [] }]);
    expect(calls.historiesAsked.length).toBe(a.scripts.length + b.scripts.length);
    // The next block is read through its transactions again.
    const after = await signedNotSent({ [addresses[1]!]: 0.13 });
    await mineWith([after]);
    await atTip();
    calls.reset();
    expect(txidsOf(await follow(a))).toEqual([{ height: tip + 1, txids: [after.txid] }]);
    expect(txidsOf(await follow(b))).toEqual([{ height: tip + 1, txids: [] }]);
    // Script 1 is paid; script 0's history holds `gone`, back in the mempool since the reorg: a history holding an
    // unconfirmed transaction is read again at every block (the block may confirm it, or a conflict of it).
    expect([...calls.historiesAsked].sort()).toEqual([hashOf(0), hashOf(1)].sort());
    expect(warnings).toEqual([]);
  });

  it('a payment waiting in the mempool that a block leaves out through a conflict elsewhere is gone from the next mempool read', async () => {
    const watched = { key: a.key, derive: () => a.scripts };
    const mempoolTxids = async () => (await electrum.follower.mempool(watched)).transactions.map((t) => t.txid);
    // A payment to script 1 enters the mempool, and the follower sees it (statuses told).
    calls.holdStatuses = false;
    const payment = await signedNotSent({ [addresses[1]!]: 0.05 });
    await chain.rpc.call('sendrawtransaction', [payment.hex]);
    await waitFor(async () => (await mempoolTxids()).includes(payment.txid), 'the payment in the follower\'s mempool read');
    // A block spends the payment's first input elsewhere: neither its outputs nor its inputs name script 1.
    const spent = (await chain.rpc.call('decoderawtransaction', [payment.hex])).vin[0];
    const funding = await chain.rpc.call('decoderawtransaction', [(await chain.rpc.call('gettransaction', [spent.txid], 'miner')).hex]);
    const value: number = funding.vout[spent.vout].value;
    const raw: string = await chain.rpc.call('createrawtransaction', [[{ txid: spent.txid, vout: spent.vout }], { [await minerAddress()]: +(value - 0.001).toFixed(8) }]);
    const conflict = await chain.rpc.call('signrawtransactionwithwallet', [raw], 'miner');
    calls.holdStatuses = true; // what follows comes from the block alone
    await mineWith([conflict]);
    await atTip();
    expect(txidsOf(await follow(a))).toEqual([{ height: a.from.height, txids: [] }]);
    expect(await mempoolTxids()).not.toContain(payment.txid);
    calls.holdStatuses = false;
  });
});
