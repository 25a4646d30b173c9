/**
 * The Electrum chain source against a real Fulcrum over a real Bitcoin Core (regtest), side by side with Bitcoin
 * Core's own source on the same node: the same tip, the same blocks connected with the same transactions of the
 * watched scripts, the same reorg, the same mempool after a replacement, a payment told at once; health and the network check; broadcast
 * refusals with Bitcoin Core's codes; fees; a wallet birthday found by date.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { createElectrumChainSource } from '../../../src/chain/electrum/index.js';
import { scriptHashOf, statusOf } from '../../../src/chain/electrum/histories.js';
import type { BlockConnected, BlockDisconnected, ChainFollower, FollowRequest } from '../../../src/chain/follower.js';
import type { ChainSource } from '../../../src/chain/types.js';
import { fromHex } from '../../../src/core/bytes.js';
import { txid as txidOf, type Transaction } from '../../../src/core/tx.js';
import { birthdayHeight } from '../../../src/services/wallet-birthday.js';
import { Chain, waitFor } from '../bitcoind/chain-world.js';
import { chainFailure } from '../../support/chain-error.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { FULCRUM_NODE_ARGS, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';

type Update = BlockConnected | BlockDisconnected;

describeWithFulcrum('Electrum chain source against Fulcrum, beside Bitcoin Core', () => {
  let chain: Chain;
  let fulcrum: FulcrumServer;
  let electrum: ChainSource;
  let core: BitcoindChainSource;
  /** The watched scripts (addresses of a Core wallet that holds no key the miner uses). */
  const addresses: string[] = [];
  const scripts: Uint8Array[] = [];

  beforeAll(async () => {
    chain = await Chain.start({ args: FULCRUM_NODE_ARGS });
    fulcrum = await startFulcrum(chain.node);
    electrum = createElectrumChainSource({ url: fulcrum.url, network: 'regtest', timeoutMs: 10_000 });
    core = new BitcoindChainSource({ url: chain.node.url, cookieFile: chain.node.cookieFile, network: 'regtest' });
    await chain.rpc.call('createwallet', { wallet_name: 'watched', load_on_startup: false });
    for (let i = 0; i < 4; i++) {
      const address: string = await chain.rpc.call('getnewaddress', ['', 'bech32'], 'watched');
      const info = await chain.rpc.call('getaddressinfo', [address], 'watched');
      addresses.push(address);
      scripts.push(fromHex(info.scriptPubKey));
    }
  }, 180_000);
  afterAll(async () => {
    await electrum?.close();
    await core?.close();
    await fulcrum?.stop();
    await chain?.node.stop();
  });

  /** Where a group stands on the node's active chain (a new group, or one that applied every block). */
  const recorded = new Map<string, string>();
  const standing = (from: FollowRequest['from']): FollowRequest => ({
    watchers: ['w'],
    from,
    scripts: () => ({ key: String(scripts.length), derive: () => scripts }),
    recordedParent: async (hash) => recorded.get(hash),
  });

  async function followAll(follower: ChainFollower, from: FollowRequest['from'], maxBlocks = 1_000): Promise<Update[]> {
    const out: Update[] = [];
    for await (const update of follower.follow(standing(from), await follower.tip(), maxBlocks)) out.push(update);
    return out;
  }

  const ownTxids = new Set<string>();
  /** A block's transactions that pay a watched script or spend what one received (Core's source gives whole blocks). */
  function touching(transactions: Transaction[]): string[] {
    const hexes = new Set(scripts.map((s) => Buffer.from(s).toString('hex')));
    const out: string[] = [];
    for (const tx of transactions) {
      const id = txidOf(tx);
      if (tx.outputs.some((o) => hexes.has(Buffer.from(o.script).toString('hex'))) || tx.inputs.some((i) => ownTxids.has(i.txid))) {
        ownTxids.add(id);
        out.push(id);
      }
    }
    return out;
  }
  const summary = (updates: Update[], filter: (txs: Transaction[]) => string[]) =>
    updates.map((u) => (u.type === 'block_connected' ? { type: u.type, height: u.height, hash: u.hash, prevHash: u.prevHash, time: u.time, txids: filter(u.transactions) } : u));
  const electrumTxids = (txs: Transaction[]) => txs.map(txidOf);

  async function waitForFulcrumTip(): Promise<void> {
    await fulcrum.waitForTip();
    const best: string = await chain.rpc.call('getbestblockhash');
    await waitFor(async () => (await electrum.follower.tip()).hash === best, 'the Electrum source at the node tip');
  }

  it('is healthy, follows regtest, and a source configured for another network is refused', async () => {
    const health = await electrum.checkHealth();
    expect(health).toMatchObject({ ok: true, network: 'regtest', filters: false });
    if (health.ok) {
      expect(health.tip).toEqual(await core.getTip());
      expect(health.nodeVersion).toMatch(/^Fulcrum/);
    }
    const wrong = createElectrumChainSource({ url: fulcrum.url, network: 'testnet', timeoutMs: 10_000 });
    try {
      expect(await wrong.checkHealth()).toMatchObject({ ok: false, code: 'wrong_network', nodeNetwork: 'regtest' });
      expect((await chainFailure(wrong.follower.tip())).code).toBe('wrong_network');
      expect((await chainFailure(wrong.follower.verifyNetwork())).code).toBe('wrong_network');
    } finally {
      await wrong.close();
    }
    const away = createElectrumChainSource({ url: 'tcp://127.0.0.1:1', network: 'regtest', timeoutMs: 2_000 });
    try {
      expect(await away.checkHealth()).toMatchObject({ ok: false, code: 'connection_refused' });
    } finally {
      await away.close();
    }
  });

  it('connects the same blocks as Bitcoin Core with the same transactions of the watched scripts, each proved', async () => {
    const start = await core.getTip();
    const paid = await chain.pay([{ address: addresses[0]!, sat: 50_000_000 }, { address: addresses[1]!, sat: 1_000_000 }]);
    await chain.mine(1);
    const spent = await chain.miner.call('sendtoaddress', [addresses[2]!, 0.2]);
    await chain.mine(2);
    await waitForFulcrumTip();
    const from = { height: start.height, hash: start.hash };
    const fromElectrum = await followAll(electrum.follower, from);
    const fromCore = await followAll(core.follower, from);
    expect(fromElectrum).toHaveLength(3);
    expect(summary(fromElectrum, electrumTxids)).toEqual(summary(fromCore, touching));
    expect(fromElectrum.map((u) => (u.type === 'block_connected' ? u.read : null))).toEqual([true, true, false]);
    expect(summary(fromElectrum, electrumTxids).flatMap((u) => ('txids' in u ? u.txids : []))).toEqual([paid, spent]);
    // A group at its birthday (no block yet), a few blocks at a time.
    const fromBirthday = await followAll(electrum.follower, { height: start.height, hash: null }, 2);
    expect(fromBirthday.map((u) => u.hash)).toEqual(fromElectrum.slice(0, 2).map((u) => u.hash));
  });

  it('tells a new tip at once through the header subscription', async () => {
    const told: string[] = [];
    const watch = electrum.follower.watchTip!((tip) => told.push(tip.hash));
    try {
      await electrum.follower.tip();
      const [hash] = await chain.mine(1);
      await waitFor(async () => told.includes(hash!), 'the new tip told');
    } finally {
      await watch.stop();
    }
  });

  it('a reorg: the group\'s block disconnected first, then the new chain, as Bitcoin Core emits them', async () => {
    await waitForFulcrumTip();
    const base = await core.getTip();
    const paid = await chain.pay([{ address: addresses[3]!, sat: 3_000_000 }]);
    const [minedIn] = await chain.mine(1);
    await waitForFulcrumTip();
    const group = { height: base.height + 1, hash: minedIn! };
    recorded.set(minedIn!, base.hash);
    // The block leaves the chain; the payment is mined again in the longer chain that replaces it.
    await chain.rpc.call('invalidateblock', [minedIn]);
    await chain.mineEmpty();
    await chain.mine(1);
    await waitForFulcrumTip();
    const electrumSteps = await followAll(electrum.follower, group);
    const coreSteps = await followAll(core.follower, group);
    expect(electrumSteps).toEqual([{ type: 'block_disconnected', height: base.height + 1, hash: minedIn, prevHash: base.hash }]);
    expect(coreSteps).toEqual(electrumSteps);
    const after = await followAll(electrum.follower, { height: base.height, hash: base.hash });
    const afterCore = await followAll(core.follower, { height: base.height, hash: base.hash });
    expect(summary(after, electrumTxids)).toEqual(summary(afterCore, touching));
    expect(summary(after, electrumTxids).flatMap((u) => ('txids' in u ? u.txids : []))).toEqual([paid]);
  });

  it('the mempool of the scripts: a payment seen, then only its replacement after RBF', async () => {
    await waitForFulcrumTip();
    const first: string = await chain.miner.call('send', { outputs: { [addresses[1]!]: 0.01 }, fee_rate: 2, options: { replaceable: true } }).then((r: { txid: string }) => r.txid);
    const mempoolTxids = async (source: ChainSource) => (await source.follower.mempool({ key: 'k', derive: () => scripts })).transactions.map((e) => e.txid ?? txidOf(e.tx));
    await waitFor(async () => (await mempoolTxids(electrum)).includes(first), 'the payment in the Electrum mempool');
    const { txid: second } = await chain.miner.call('bumpfee', [first]);
    await waitFor(async () => {
      const seen = await mempoolTxids(electrum);
      return seen.includes(second) && !seen.includes(first);
    }, 'only the replacement in the Electrum mempool');
    const inCore = await mempoolTxids(core);
    expect(inCore).toContain(second);
    expect(inCore).not.toContain(first);
    // The status the server reports is the one computed from the history read (so a history is read again only
    // when the status changes), with unconfirmed entries and after they confirm.
    const statusNow = async () => {
      const hash = scriptHashOf(scripts[1]!);
      const [status, history] = [await fulcrum.request('blockchain.scripthash.subscribe', [hash]), await fulcrum.request('blockchain.scripthash.get_history', [hash])];
      return { status, computed: statusOf(history.map((e: { tx_hash: string; height: number }) => ({ txid: e.tx_hash, height: e.height }))) };
    };
    // Fulcrum answers a subscription with the status it told last, which follows its index shortly.
    const agreed = () => waitFor(async () => {
      const now = await statusNow();
      return now.computed === now.status ? now : undefined;
    }, 'the server\'s status and the history agreeing');
    const unconfirmed = await agreed();
    await chain.mine(1);
    await waitForFulcrumTip();
    await waitFor(async () => !(await mempoolTxids(electrum)).includes(second), 'the replacement mined');
    const confirmed = await agreed();
    expect(confirmed.status).not.toBe(unconfirmed.status);
  });

  it('tells a payment into the mempool at once: the watched script\'s new status, Bitcoin Core\'s mempool moving', async () => {
    await waitForFulcrumTip();
    // The scripts subscribed (as the sync's passes leave them), then both watches on.
    await electrum.follower.mempool({ key: 'k', derive: () => scripts });
    let electrumTold = 0;
    let coreTold = 0;
    const watches = [electrum.follower.watchMempool!(() => electrumTold++), core.follower.watchMempool!(() => coreTold++)];
    try {
      // Core's watch takes its first look (where the mempool stands) before the payment.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect([electrumTold, coreTold]).toEqual([0, 0]);
      await chain.pay([{ address: addresses[2]!, sat: 2_000_000 }]);
      await waitFor(async () => electrumTold > 0 && coreTold > 0, 'both watches telling the payment');
    } finally {
      await Promise.all(watches.map((watch) => watch.stop()));
    }
  });

  it('broadcasts, and refuses with the codes of Bitcoin Core\'s source', async () => {
    await waitForFulcrumTip();
    const unsigned: string = await chain.miner.call('createrawtransaction', [[], { [addresses[0]!]: 0.001 }]);
    const funded = await chain.miner.call('fundrawtransaction', [unsigned, { fee_rate: 3 }]);
    const { hex } = await chain.miner.call('signrawtransactionwithwallet', [funded.hex]);
    const txid = await electrum.broadcast(hex);
    expect(txid).toBe((await chain.rpc.call('decoderawtransaction', [hex])).txid);
    expect(await electrum.broadcast(hex)).toBe(txid); // already in the mempool: accepted again, as Core does
    const refusals: Array<[string, string]> = [['00', 'tx_decode_failed']];
    await chain.mine(1);
    await waitForFulcrumTip();
    refusals.push([hex, 'tx_already_confirmed']);
    for (const [tx, code] of refusals) {
      const [viaElectrum, viaCore] = [await chainFailure(electrum.broadcast(tx)), await chainFailure(core.broadcast(tx))];
      expect(viaCore.code).toBe(code);
      expect(viaElectrum.code, viaElectrum.reason).toBe(code);
      expect(viaElectrum.reason).toBeTruthy();
    }
    // Spending what the confirmed transaction spent, differently: the inputs are gone.
    const decoded = await chain.rpc.call('decoderawtransaction', [hex]);
    const conflict: string = await chain.miner.call('createrawtransaction', [decoded.vin.map((i: { txid: string; vout: number }) => ({ txid: i.txid, vout: i.vout })), { [addresses[1]!]: 0.0001 }]);
    const signed = await chain.miner.call('signrawtransactionwithwallet', [conflict]);
    const [viaElectrum, viaCore] = [await chainFailure(electrum.broadcast(signed.hex)), await chainFailure(core.broadcast(signed.hex))];
    expect(viaCore.code).toBe('tx_missing_inputs');
    expect(viaElectrum.code, viaElectrum.reason).toBe('tx_missing_inputs');
  });

  it('fees as the node gives them; headers for a wallet birthday by date', async () => {
    const [viaElectrum, viaCore] = [await electrum.getRelayFees(), await core.getRelayFees()];
    expect(viaElectrum.minRelaySatPerVb).toBe(viaCore.minRelaySatPerVb);
    expect(viaElectrum.mempoolMinSatPerVb).toBe(viaCore.mempoolMinSatPerVb);
    expect(viaElectrum.incrementalSatPerVb).toBe(viaCore.incrementalSatPerVb);
    // A fresh regtest node has no estimate: null from both.
    expect(await electrum.estimateFee(6)).toBe(await core.estimateFee(6));
    await expect(electrum.estimateFee(0)).rejects.toMatchObject({ code: 'invalid_argument' });
    const tip = await core.getTip();
    const header = await core.getBlockHeader(await core.getBlockHash(tip.height - 20));
    const byDate = { kind: 'date' as const, epochSeconds: header.time + 7_200 };
    expect(await birthdayHeight(electrum, byDate)).toBe(await birthdayHeight(core, byDate));
    const viaElectrumHeader = await electrum.getBlockHeader(await electrum.getBlockHash(tip.height - 20));
    expect(viaElectrumHeader).toEqual(header);
    expect((await chainFailure(electrum.getBlockHash(tip.height + 10))).code).toBe('not_found');
  });
});
