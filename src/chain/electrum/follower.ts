/**
 * Follows an Electrum server for groups of wallets. Headers come from the server (`blockchain.block.headers`, up
 * to 2016 a read) and are checked here; the transactions of each block are those of the watched scripts'
 * histories at its height (read through subscriptions, again only when a script's status changes), each proved
 * in its block by its merkle proof before it is emitted. At a new tip that extends the chain the histories were read
 * at, the new blocks' own transactions are read (block-reads.ts) and only the histories they touch are read again.
 * Every block is emitted, with its transactions or none (the engine applies blocks one after the other); a block is
 * `read` when it held some. The tip and news of new blocks come from the header subscription; a reorg is found from
 * the headers themselves.
 */
import type { NetworkName } from '../../core/network.js';
import { NO_PARENT, type BlockConnected, type BlockDisconnected, type ChainFollower, type FollowRequest, type MempoolSnapshot, type ChainWatch, type WatchedScripts } from '../follower.js';
import { ChainError, type ChainLog, type ChainTip } from '../types.js';
import type { ElectrumCalls } from './calls.js';
import { checkHeaders, HEADERS_PER_READ, HeaderChain, parseHeader, parseHeaders, type Header } from './headers.js';
import { scriptHashOf, ScriptHistories, type HistoryEntry } from './histories.js';
import { TRANSACTIONS_PER_PAGE_ON_LOOPBACK, TransactionReader } from './transactions.js';
import { readBlocks } from './block-reads.js';
import { fromHex } from '../../core/bytes.js';
import { PackedScripts, type ScriptList } from '../../core/script-list.js';

/** Headers read lately, by hash (stale ones included): a left block's parent, a birthday's header. */
const REMEMBERED_HEADERS = 10_000;
/** Unconfirmed transactions whose first sighting is kept. */
const REMEMBERED_UNCONFIRMED = 100_000;
/** Script lists whose script hashes are kept (a list per group of wallets; a new key when its scripts change). */
const REMEMBERED_SCRIPT_LISTS = 4;
/**
 * A new tip is followed through its blocks' own transactions while that costs less than reading again the histories
 * of the scripts to bring to it, else through those histories. Measured on a real Fulcrum over a local node
 * (bench/electrum/block-reads.bench.mjs): a script's `get_history` 13-15 µs of wall time (20 µs of CPU, both
 * processes), a txid by position two to three times that, a transaction not held 0.27-0.56 ms (Fulcrum asks its
 * node for it; 0.25-0.39 ms of CPU): 20 to 40 scripts. So the txids are listed while they number at most a quarter of
 * the scripts, and the transactions read while those not held number at most one in 40 scripts.
 */
const SCRIPTS_PER_LISTED_TXID = 4;
const SCRIPTS_PER_FETCHED_TRANSACTION = 40;

export interface ElectrumFollowerDeps {
  client: ElectrumCalls;
  network: NetworkName;
  /** Checks (once per connection) that the server follows the service's network. */
  ensureNetwork(): Promise<void>;
  /** Checks it again now. */
  verifyNetwork(): Promise<void>;
  log?: ChainLog | undefined;
  /** The server is on this machine (transactions.ts: small pages of transactions answer fastest there). */
  serverOnLoopback?: boolean;
}

/** A script list and its scripts' hashes, in order. */
interface HashedList {
  scripts: ScriptList;
  hashes: readonly string[];
}

/** A group's confirmed transactions by height, from its scripts' histories. */
class GroupIndex {
  key: string | undefined;
  hashes: readonly string[] = [];
  private readonly byHeight = new Map<number, Set<string>>();

  add(histories: Iterable<readonly HistoryEntry[]>): void {
    for (const history of histories) {
      for (const { txid, height } of history) {
        if (height <= 0) continue;
        let txids = this.byHeight.get(height);
        if (!txids) this.byHeight.set(height, (txids = new Set()));
        txids.add(txid);
      }
    }
  }

  at(height: number): string[] {
    return [...(this.byHeight.get(height) ?? [])];
  }
}

export class ElectrumFollower implements ChainFollower {
  readonly headers: HeaderChain;
  private readonly histories: ScriptHistories;
  readonly transactions: TransactionReader;
  private readonly seen = new Map<string, Header>();
  /** When the follower first saw each unconfirmed transaction (the server does not say). */
  private readonly firstSeen = new Map<string, number>();
  private readonly tipListeners = new Set<(tip: ChainTip) => void>();
  private headerSubscribed = false;
  /** Script hashes by script list key: each pass's blocks and mempool read ask for the same lists again. */
  private readonly hashesByKey = new Map<string, HashedList>();
  /** Histories being brought from one tip to another (`from>to`): groups asking meanwhile wait for the same. */
  private readonly advancing = new Map<string, Promise<void>>();

  constructor(private readonly deps: ElectrumFollowerDeps) {
    this.headers = new HeaderChain(deps.network, (height, count) => this.readHeaders(height, count));
    this.histories = new ScriptHistories(deps.client);
    this.transactions = new TransactionReader(deps.client, deps.log, deps.serverOnLoopback ? TRANSACTIONS_PER_PAGE_ON_LOOPBACK : undefined);
    deps.client.onNotification((method, params) => {
      if (method === 'blockchain.headers.subscribe') void this.takeTip(params[0]).catch((error: unknown) => this.warnTip(error));
    });
    deps.client.onReconnect(() => {
      this.headerSubscribed = false;
      if (this.tipListeners.size > 0) void this.tip().catch((error: unknown) => this.warnTip(error));
    });
  }

  /**
   * The sync asks this once at the start of each pass, and every group it follows then asks for its scripts:
   * the scripts no group asked for during the pass before (a deleted wallet's) are released here.
   */
  async verifyNetwork(): Promise<void> {
    await this.deps.verifyNetwork();
    const released = await this.histories.newPass();
    if (released > 0) this.deps.log?.('info', 'Electrum scripts no wallet watches any more are unsubscribed', { scripts: released });
  }

  /** The server's tip, from the header subscription (made here, again after a new connection). */
  async tip(): Promise<ChainTip> {
    await this.deps.ensureNetwork();
    const answer = await this.deps.client.request('blockchain.headers.subscribe', []);
    this.headerSubscribed = true;
    const header = await this.takeTip(answer);
    return { height: header.height, hash: header.hash };
  }

  watchTip(onTip: (tip: ChainTip) => void): ChainWatch {
    this.tipListeners.add(onTip);
    if (!this.headerSubscribed) void this.tip().catch((error: unknown) => this.warnTip(error)); // a new connection subscribes again
    return {
      stop: () => {
        this.tipListeners.delete(onTip);
        return Promise.resolve();
      },
    };
  }

  /** The scripts' new statuses the server tells: a payment in the mempool is read at the next pass, asked for now. */
  watchMempool(onChange: () => void): ChainWatch {
    const stop = this.histories.onStatusChange(onChange);
    return {
      stop: () => {
        stop();
        return Promise.resolve();
      },
    };
  }

  async *follow(request: FollowRequest, to: ChainTip, maxBlocks: number): AsyncGenerator<BlockConnected | BlockDisconnected> {
    await this.deps.ensureNetwork();
    const { from } = request;
    if (from.hash !== null && (await this.activeHashAt(from.height)) !== from.hash) {
      yield await this.disconnected(request, from.height, from.hash);
      return;
    }
    const last = Math.min(to.height, from.height + maxBlocks);
    const index = new GroupIndex();
    let prev: { hash: string; header: Header | undefined } | undefined = from.hash === null ? undefined : { hash: from.hash, header: this.headers.kept(from.height) };
    for (let start = from.height + 1; start <= last; ) {
      const count = Math.min(HEADERS_PER_READ, last - start + 1);
      const headers = await this.readHeaders(start, count);
      if (headers.length === 0) return;
      if (prev && headers[0]!.prevHash !== prev.hash) return; // the server's chain changed since the group's block was checked
      checkHeaders(this.deps.network, headers, prev?.header);
      await this.refresh(request, index, to);
      // The transactions known now in these blocks, proved in one batch ahead of the blocks applied.
      await this.transactions.prove(headers.map((header) => ({ header, txids: index.at(header.height) })).filter((b) => b.txids.length > 0));
      for (const header of headers) {
        await this.refresh(request, index, to); // the block before may have made the wallets derive more scripts
        const txids = index.at(header.height);
        const found = txids.length === 0 ? { ok: true as const, transactions: [] } : await this.transactions.inBlock(header, txids);
        if (!found.ok) return; // the block or a history moved: the next step reads them again
        const { height, hash, prevHash, time } = header;
        yield { type: 'block_connected', height, hash, prevHash, time, transactions: found.transactions, read: txids.length > 0 };
      }
      prev = { hash: headers.at(-1)!.hash, header: headers.at(-1) };
      if (headers.length < count) return; // the server's chain ends before `to`
      start += headers.length;
    }
  }

  /** The scripts' unconfirmed transactions: the entries of their histories without a height. */
  async mempool(scripts: WatchedScripts): Promise<MempoolSnapshot> {
    await this.deps.ensureNetwork();
    const tip = this.headers.tip?.hash ?? (await this.tip()).hash;
    const hashes = this.hashesOf(scripts);
    if (this.histories.stale(hashes, tip)) await this.advanceHistories(this.headers.tip);
    const histories = await this.histories.histories(hashes, tip);
    const txids = new Set<string>();
    for (const history of histories) for (const { txid, height } of history) if (height <= 0) txids.add(txid);
    const now = Math.floor(Date.now() / 1000);
    for (const txid of txids) if (!this.firstSeen.has(txid)) this.firstSeen.set(txid, now);
    // Kept across groups (each asks for its own scripts), the oldest forgotten past a bound.
    for (const txid of this.firstSeen.keys()) {
      if (this.firstSeen.size <= REMEMBERED_UNCONFIRMED) break;
      if (!txids.has(txid)) this.firstSeen.delete(txid);
    }
    const list = [...txids];
    const transactions = await this.transactions.get(list);
    return { type: 'mempool', transactions: list.map((txid, i) => ({ tx: transactions[i]!, txid, time: this.firstSeen.get(txid)! })) };
  }

  /** The active chain's block hash at `height` (null above the tip): from the kept headers, else from the server. */
  async activeHashAt(height: number): Promise<string | null> {
    const kept = this.headers.kept(height);
    if (kept && this.headers.tip && height <= this.headers.tip.height) return kept.hash;
    const [header] = await this.readHeaders(height, 1);
    return header?.hash ?? null;
  }

  /** Headers from the server, `count` at most (fewer past its tip), hashed and linked here. */
  async readHeaders(height: number, count: number): Promise<Header[]> {
    if (count <= 0) return [];
    const answer = (await this.deps.client.request('blockchain.block.headers', [height, count])) as { count?: unknown; hex?: unknown; headers?: unknown } | null;
    const got = answer?.count;
    if (typeof got !== 'number' || !Number.isSafeInteger(got) || got < 0 || got > count) {
      throw new ChainError('bad_response', 'The Electrum server sent an unexpected answer for block headers');
    }
    // Protocol 1.6 sends a list of headers; before, one hex string of them all.
    const hex = Array.isArray(answer!.headers) ? answer!.headers.map(String).join('') : answer!.hex;
    const headers = parseHeaders(hex, height, got);
    for (const header of headers) this.remember(header);
    return headers;
  }

  /** A header read lately (stale ones included). */
  headerOf(hash: string): Header | undefined {
    return this.seen.get(hash);
  }

  /**
   * The group's scripts, subscribed and their histories at the server's tip indexed; again when they grew, a status
   * changed or the tip moved.
   */
  private async refresh(request: FollowRequest, index: GroupIndex, to: ChainTip): Promise<void> {
    const scripts = request.scripts();
    // The tip as known before asking: the answers reflect at least that chain.
    const tipHeader = this.headers.tip;
    const tip = tipHeader?.hash ?? to.hash;
    if (scripts.key === index.key && !this.histories.stale(index.hashes, tip)) return;
    const hashes = this.hashesOf(scripts);
    await this.advanceHistories(tipHeader);
    index.add(await this.histories.histories(hashes, tip));
    index.key = scripts.key;
    index.hashes = hashes;
  }

  /**
   * Brings the histories read at earlier tips of the server's chain to `tip` through the blocks between (when `tip`
   * extends those tips, header by header): the blocks' transactions are read, and only the histories of the scripts
   * they touch stay to read again (`ScriptHistories.advance`). Anything else (a tip not on the kept chain, blocks
   * of too many transactions, a list of txids that does not prove out) leaves them all to read again.
   */
  private async advanceHistories(tip: Header | undefined): Promise<void> {
    if (!tip) return;
    for (const [from, scripts] of this.histories.readTips(tip.hash)) {
      const key = `${from}>${tip.hash}`;
      let running = this.advancing.get(key);
      if (!running) {
        running = this.advanceFrom(from, tip, scripts).finally(() => this.advancing.delete(key));
        this.advancing.set(key, running);
      }
      await running;
    }
  }

  private async advanceFrom(from: string, tip: Header, scripts: number): Promise<void> {
    const start = this.seen.get(from);
    if (!start || start.height >= tip.height || this.headers.kept(start.height)?.hash !== from) return;
    const blocks: Header[] = [];
    for (let prev = start; prev.hash !== tip.hash; ) {
      const next = this.headers.kept(prev.height + 1);
      if (!next || next.prevHash !== prev.hash) return;
      blocks.push((prev = next));
    }
    let read: Awaited<ReturnType<typeof readBlocks>>;
    try {
      read = await readBlocks(this.deps.client, this.transactions, blocks, { listed: Math.floor(scripts / SCRIPTS_PER_LISTED_TXID), fetched: Math.floor(scripts / SCRIPTS_PER_FETCHED_TRANSACTION) });
    } catch (error) {
      // A transaction that does not parse or hash to its id: the histories are read again instead.
      if (!(error instanceof ChainError) || error.code !== 'bad_response') throw error;
      read = { ok: false, why: 'unproven', height: tip.height, reason: error.message };
    }
    if (!read.ok) {
      if (read.why === 'unproven') {
        this.deps.log?.('warn', "Electrum server's list of a block's transactions does not prove out; every watched script is read again", { height: read.height, reason: read.reason });
      }
      return;
    }
    this.histories.advance(from, tip.hash, read.touches);
  }

  /**
   * The scripts' hashes, made once per script list: 400,000 sha256 at each pass's reads (10,000 wallets) were a fifth
   * of the process's work through Electrum. A list grown from one hashed before (wallets paid in a block derive
   * more) has only its new scripts hashed.
   */
  private hashesOf(scripts: WatchedScripts): readonly string[] {
    const known = this.hashesByKey.get(scripts.key);
    if (known) return known.hashes;
    const list = scripts.derive();
    let base: HashedList | undefined;
    if (list instanceof PackedScripts) {
      for (const kept of this.hashesByKey.values()) if (list.grownFrom(kept.scripts) && kept.scripts.length > (base?.scripts.length ?? -1)) base = kept;
    }
    // The strings the histories hold already where they do: a list kept costs its pointers, not its strings again.
    const hash = (script: Uint8Array) => this.histories.shared(scriptHashOf(script));
    const hashes = base ? base.hashes.concat((list as PackedScripts).from(base.scripts.length).map(hash)) : list.map(hash);
    this.hashesByKey.set(scripts.key, { scripts: list, hashes });
    if (this.hashesByKey.size > REMEMBERED_SCRIPT_LISTS) this.hashesByKey.delete(this.hashesByKey.keys().next().value!);
    return hashes;
  }

  private async disconnected(request: FollowRequest, height: number, hash: string): Promise<BlockDisconnected> {
    const prevHash = (await request.recordedParent?.(hash)) ?? this.seen.get(hash)?.prevHash;
    if (prevHash === undefined) throw new ChainError('not_found', `The parent of block ${hash}, which left the chain, is not known`);
    return { type: 'block_disconnected', height, hash, prevHash: height === 0 ? NO_PARENT : prevHash };
  }

  /** A tip the server sent (answer or notification): checked, kept, told to the watchers. */
  private async takeTip(value: unknown): Promise<Header> {
    const tip = value as { height?: unknown; hex?: unknown } | null;
    if (typeof tip?.height !== 'number' || !Number.isSafeInteger(tip.height) || tip.height < 0 || typeof tip.hex !== 'string') {
      throw new ChainError('bad_response', 'The Electrum server sent an unexpected tip');
    }
    let header: Header;
    try {
      header = parseHeader(fromHex(tip.hex), tip.height);
    } catch (error) {
      if (error instanceof ChainError) throw error;
      throw new ChainError('bad_response', 'The Electrum server sent a tip header that is not hex');
    }
    const known = this.headers.tip?.hash;
    const replaced = await this.headers.setTip(header);
    if (replaced !== undefined) this.histories.chainSwitched();
    this.remember(header);
    if (replaced !== undefined) this.deps.log?.('info', 'Electrum server switched to another chain', { from: replaced, tip: header.height });
    if (known !== header.hash) for (const listener of this.tipListeners) listener({ height: header.height, hash: header.hash });
    return header;
  }

  private remember(header: Header): void {
    this.seen.delete(header.hash);
    this.seen.set(header.hash, header);
    if (this.seen.size > REMEMBERED_HEADERS) this.seen.delete(this.seen.keys().next().value!);
  }

  private warnTip(error: unknown): void {
    this.deps.log?.('warn', 'Electrum tip update failed', { reason: error instanceof Error ? error.message : String(error) });
  }
}
