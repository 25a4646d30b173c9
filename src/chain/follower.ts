/**
 * Following the chain for a group of wallets, whatever the backend: the follower is told where the wallets
 * stand and which scripts they watch, and emits what it saw as source-neutral updates (blocks connected with
 * the transactions that may touch those scripts, blocks disconnected, the unconfirmed transactions). It finds
 * reorgs itself: a group whose last block left the active chain gets that block disconnected first. How it
 * learns all this (BIP158 filters and block files from Bitcoin Core, scripthash histories from an Electrum
 * server) is its own business. See docs/adr/0012-chain-followers.md.
 */
import type { BlockConnected as BlockAdded, BlockDisconnected, MempoolSnapshot } from '../core/chain-update.js';
import type { ScriptList } from '../core/script-list.js';
import type { ChainTip } from './types.js';

export type { BlockDisconnected, MempoolSnapshot };

/** A block connected, as the engine applies it, and whether the source read it. */
export interface BlockConnected extends BlockAdded {
  /** False when the source ruled the block out without reading it (its filter matched none of the scripts). */
  read: boolean;
}

/** The scripts a group watches: `key` changes whenever they do; `derive` lists them all. */
export interface WatchedScripts {
  key: string;
  derive(): ScriptList;
}

/** Where a group stands: its last block, or (hash null) the height before the first block it needs. */
export interface ChainPosition {
  height: number;
  hash: string | null;
}

export interface FollowRequest {
  /** The wallets of the group (they stand at one position); the follower keeps per-group work under them. */
  watchers: readonly string[];
  from: ChainPosition;
  /** The group's scripts now: asked again after each update is applied, which may have derived more. */
  scripts(): WatchedScripts;
  /** The parent of a block the group applied, as recorded then (a source may no longer know a stale block). */
  recordedParent?(hash: string): Promise<string | undefined>;
}

/** A watch on the backend started by `watchTip` or `watchMempool`; `stop()` ends it (a poll in flight is dropped). */
export interface ChainWatch {
  stop(): Promise<void>;
}

export interface ChainFollower {
  /** Checks again that the backend follows the service's network; throws ChainError `wrong_network` if not. */
  verifyNetwork(): Promise<void>;
  /** The backend's tip now. */
  tip(): Promise<ChainTip>;
  /**
   * Updates that move the group from where it stands toward `to`, at most `maxBlocks` blocks: its last block
   * disconnected when that left the active chain (one per call: the caller asks again from the parent), else the
   * next blocks connected in order. Ends early when the chain changes under it; the caller regroups and asks again.
   * Apply each update before asking for the next: the scripts may grow with it. Stopping the iteration early
   * drops what was read ahead.
   */
  follow(request: FollowRequest, to: ChainTip, maxBlocks: number): AsyncIterable<BlockConnected | BlockDisconnected>;
  /** The unconfirmed transactions, for groups that stand at the tip. */
  mempool(scripts: WatchedScripts): Promise<MempoolSnapshot>;
  /**
   * Tells `onTip` of each new tip as soon as the backend has it (Bitcoin Core's `waitfornewblock`, an Electrum
   * server's header subscription). Optional: a source without it is followed at the sync's interval alone, which
   * stays as the fallback anyway. A tip may be told more than once, or skipped when several come quickly.
   */
  watchTip?(onTip: (tip: ChainTip) => void): ChainWatch;
  /**
   * Tells `onChange` when the unconfirmed transactions may have changed (Bitcoin Core's mempool moved, an Electrum
   * server told a watched script's new status), so that the sync reads them without waiting for its interval.
   * Optional, like `watchTip`; a change may be told that touches no wallet.
   */
  watchMempool?(onChange: () => void): ChainWatch;
}

export const NO_PARENT = '0'.repeat(64);
