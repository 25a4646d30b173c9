/**
 * The events each sync write records (services/events/chain-events.ts says which), with what the sync keeps for
 * them between writes: per followed wallet, the tip height its recorded events have reached (confirmation depths
 * are counted from it), and miniscript wallets' spending paths for their timelock warnings.
 */
import { NETWORKS, type NetworkName } from '../../core/network.js';
import type { SpendPath } from '../../core/spend-plan.js';
import type { EngineState, WalletChangeset } from '../../engine/index.js';
import type { NewEvent, StoredWallet } from '../../store/repositories.js';
import { walletEvents } from '../events/chain-events.js';
import { branchDeriver, DEFAULT_TIMELOCK_WARNING_BLOCKS, isMiniscriptText, MiniscriptDeriver } from '../miniscript-wallet.js';
import type { PsbtSettlement } from '../psbts/chain-reconciler.js';

/** Miniscript descriptors whose paths are kept (a service holds far fewer kinds of wallets than wallets). */
const PATHS_KEPT = 1_000;

export interface SyncEventSettings {
  /** Depth (besides 1) at which transaction.confirmed is recorded. */
  confirmationsNotify?: number | undefined;
  /** Miniscript wallets: blocks before a recovery path opens that wallet.timelock_expiring is recorded. */
  timelockWarningBlocks?: number | undefined;
  now?: (() => number) | undefined;
}

export class SyncEvents {
  private readonly heights = new Map<string, number | null>();
  private readonly pathsByDescriptor = new Map<string, readonly SpendPath[]>();

  constructor(private readonly settings: SyncEventSettings) {}

  /** The wallet's recorded events stand at `height` (the wallet loaded, or its change written). */
  reached(walletId: string, height: number | null): void {
    this.heights.set(walletId, height);
  }

  forget(walletId: string): void {
    this.heights.delete(walletId);
  }

  clear(): void {
    this.heights.clear();
  }

  /** The events of one sync write, wallet by wallet: settled PSBTs, transactions, confirmations, scans done. */
  of(
    state: EngineState,
    walletOf: (walletId: string) => StoredWallet | undefined,
    changes: readonly WalletChangeset[],
    settlements: ReadonlyMap<string, PsbtSettlement[]>,
    reachedTip: ReadonlySet<string>,
  ): NewEvent[] {
    const at = (this.settings.now ?? Date.now)();
    const byWallet = new Map(changes.map((c) => [c.walletId, c]));
    const depths = [...new Set([1, this.settings.confirmationsNotify ?? 6])];
    const events: NewEvent[] = [];
    for (const walletId of new Set([...byWallet.keys(), ...settlements.keys()])) {
      const wallet = walletOf(walletId);
      if (!wallet) continue;
      events.push(
        ...walletEvents({
          state,
          wallet,
          change: byWallet.get(walletId),
          previousHeight: this.heights.get(walletId) ?? null,
          settlements: settlements.get(walletId) ?? [],
          depths,
          reachedTip: reachedTip.has(walletId),
          at,
          ...this.timelocksOf(wallet),
        }),
      );
    }
    return events;
  }

  /** A miniscript wallet's paths and the warning window, for its wallet.timelock_expiring events. */
  private timelocksOf(wallet: { receiveDescriptor: string; network: NetworkName }): { timelocks?: { paths: readonly SpendPath[]; warningBlocks: number } } {
    if (!isMiniscriptText(wallet.receiveDescriptor)) return {};
    let paths = this.pathsByDescriptor.get(wallet.receiveDescriptor);
    if (!paths) {
      const deriver = branchDeriver(wallet.receiveDescriptor, NETWORKS[wallet.network]);
      if (!(deriver instanceof MiniscriptDeriver)) return {};
      paths = deriver.plan.paths;
      if (this.pathsByDescriptor.size >= PATHS_KEPT) this.pathsByDescriptor.clear();
      this.pathsByDescriptor.set(wallet.receiveDescriptor, paths);
    }
    return { timelocks: { paths, warningBlocks: this.settings.timelockWarningBlocks ?? DEFAULT_TIMELOCK_WARNING_BLOCKS } };
  }
}
