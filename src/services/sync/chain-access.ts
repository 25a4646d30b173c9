/** The chain source as the wallet part sees it: maybe absent, tip cached briefly, health as a readiness check. */
import type { ChainSource, ChainTip, HealthReport } from '../../chain/types.js';
import type { ReadinessCheck } from '../health.js';
import type { ChainStatus, ChainStatusSource } from '../service-details.js';
import type { ChainAccess } from '../wallets/index.js';
import type { SyncProgress } from './sync-service.js';

export class CachedChainAccess implements ChainAccess, ChainStatusSource, SyncProgress {
  private cached: { at: number; tip: ChainTip | null } | undefined;
  /** What the sync said last: a pass is catching up (`syncing`), or none is (`synced`); undefined: no sync told. */
  private syncing: boolean | undefined;
  /** The last tip the node told (kept while it does not answer). */
  private lastTip: ChainTip | null = null;
  private health: { at: number; report: Promise<HealthReport>; pending: boolean } | undefined;

  constructor(
    readonly source: ChainSource | null,
    private readonly now: () => number = Date.now,
    private readonly maxAgeMs = 2_000,
  ) {}

  async tip(): Promise<ChainTip | null> {
    if (!this.source) return null;
    if (this.cached && this.now() - this.cached.at < this.maxAgeMs) return this.cached.tip;
    let tip: ChainTip | null;
    try {
      tip = await this.source.getTip();
    } catch {
      tip = null;
    }
    this.cached = { at: this.now(), tip };
    if (tip) this.lastTip = tip;
    return tip;
  }

  lastKnownTip(): ChainTip | null {
    return this.lastTip;
  }

  /** Forget the cached tip (after a sync pass saw a new one). */
  noteTip(tip: ChainTip): void {
    this.cached = { at: this.now(), tip };
    this.lastTip = tip;
  }

  noteSyncing(syncing: boolean): void {
    this.syncing = syncing;
  }

  /** Readiness check `chain`: fails when no node is configured, or it is down, warming up, in IBD or misconfigured. */
  readinessCheck(): ReadinessCheck {
    return {
      name: 'chain',
      check: async () => {
        if (!this.source) throw new Error('No chain backend is configured');
        const report = await this.source.checkHealth(); // fresh: a load balancer must see the node as it is now
        if (!report.ok) throw new Error(report.reason);
      },
      // Health reasons name no address, port or path (src/chain/bitcoind): safe to show to users.
      publicReason: true,
    };
  }

  async status(): Promise<ChainStatus> {
    if (!this.source) return { backend: 'none', network: null, tip_height: null, tip_hash: null, sync_state: 'not_configured' };
    const report = await this.recentHealth(this.source);
    if (!report.ok) {
      // A node on another network shows which one; the sync applies none of its blocks meanwhile.
      const network = report.nodeNetwork ?? null;
      return { backend: this.source.backend, network, tip_height: null, tip_hash: null, sync_state: `unavailable: ${report.code}` };
    }
    return { backend: this.source.backend, network: report.network, tip_height: report.tip.height, tip_hash: report.tip.hash, sync_state: this.syncing === undefined ? 'unknown' : this.syncing ? 'syncing' : 'synced' };
  }

  /**
   * A health report at most maxAgeMs old, one check at a time: a check costs the node three calls,
   * and clients polling the service details must not turn into a flood of calls to the user's node.
   */
  private recentHealth(source: ChainSource): Promise<HealthReport> {
    const at = this.now();
    if (this.health && (this.health.pending || at - this.health.at < this.maxAgeMs)) return this.health.report;
    const report = source.checkHealth();
    const entry = { at, report, pending: true };
    this.health = entry;
    const settled = () => {
      entry.pending = false;
      entry.at = this.now();
    };
    report.then(settled, settled);
    return report;
  }
}
