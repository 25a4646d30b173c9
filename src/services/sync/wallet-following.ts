/**
 * Which wallets this instance's sync follows. One process on SQLite, or the one sync leader on PostgreSQL: all of
 * them (`FOLLOW_ALL`). With `sync_sharing` on (docs/adr/0014): the wallets whose leases this instance holds in
 * PostgreSQL (`WalletLeases`), about an equal share of the wallets per live instance, each wallet held by one
 * instance at a time, taken over by the others when the holder's heartbeat stops, released at once on a clean stop.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { FollowLeaseLostError, type Repositories, type Store } from '../../store/repositories.js';

export interface WalletFollowing {
  /** The wallets to follow now; 'all': every wallet in the store. */
  followed(): ReadonlySet<string> | 'all';
  /** Starts renewing and claiming; `onChange` is told when the wallets to follow change. */
  start(onChange: () => void): void;
  /** The sync holds exactly these wallets in memory now: the leases of wallets given up and not held may go. */
  settled(loaded: ReadonlySet<string>): Promise<void>;
  /** In the transaction writing these wallets' sync: fails unless this instance still follows each of them. */
  fence(repos: Repositories, walletIds: readonly string[]): Promise<void>;
  /** Stops the heartbeat and releases every lease (a clean stop: others take the wallets over at once). */
  stop(): Promise<void>;
}

export const FOLLOW_ALL: WalletFollowing = {
  followed: () => 'all',
  start: () => {},
  settled: async () => {},
  fence: async () => {},
  stop: async () => {},
};

export interface WalletLeasesOptions {
  /** How long a lease lasts without renewal: an instance silent this long loses its wallets to the others. */
  leaseMs: number;
  /** Renewal period (a third of the lease by default: two heartbeats may fail before a lease expires). */
  heartbeatMs?: number;
  log?: ((level: 'info' | 'warn', message: string, details?: Record<string, unknown>) => void) | undefined;
}

export class WalletLeases implements WalletFollowing {
  /** Names this process in the lease rows: host and process id tell operators (and tests) which one it is. */
  readonly instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private held = new Set<string>();
  /** Held, and to be given up once the sync has let go of them (the balance moved to another instance). */
  private readonly releasing = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = true;
  private onChange: () => void = () => {};
  private lastFailure: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: WalletLeasesOptions,
  ) {}

  followed(): ReadonlySet<string> {
    return new Set([...this.held].filter((id) => !this.releasing.has(id)));
  }

  start(onChange: () => void): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.onChange = onChange;
    const loop = async () => {
      this.timer = undefined;
      this.beating = this.beat();
      await this.beating;
      if (!this.stopped) this.timer = setTimeout(() => void loop(), this.options.heartbeatMs ?? Math.round(this.options.leaseMs / 3));
    };
    void loop();
  }

  /** Renews this instance's leases, then takes or gives up wallets toward an equal share per live instance. */
  async beat(): Promise<void> {
    const before = [...this.followed()].sort().join(',');
    try {
      const { leaseMs } = this.options;
      const state = await this.store.followLeases.heartbeat(this.instanceId, leaseMs);
      // A lease not renewed was taken over (this instance was silent too long): the sync lets go at once.
      this.held = new Set(state.held);
      for (const id of this.releasing) if (!this.held.has(id)) this.releasing.delete(id);
      const share = Math.ceil(state.wallets / state.liveInstances);
      const kept = this.held.size - this.releasing.size;
      if (kept < share) {
        for (const id of await this.store.followLeases.claim(this.instanceId, share - kept, leaseMs)) this.held.add(id);
      } else if (kept > share) {
        // Another instance came: the surplus goes once the sync has let go of it (`settled`).
        const surplus = [...this.held].filter((id) => !this.releasing.has(id)).slice(share);
        for (const id of surplus) this.releasing.add(id);
      }
      if (this.lastFailure !== undefined) this.options.log?.('info', 'wallet leases renewed again', { after: this.lastFailure });
      this.lastFailure = undefined;
    } catch (error) {
      // The store away: the leases run out on their own, and the fence refuses writes past that.
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== this.lastFailure) this.options.log?.('warn', 'wallet lease heartbeat failed (said again only when the reason changes)', { reason });
      this.lastFailure = reason;
    }
    const after = [...this.followed()].sort().join(',');
    if (after !== before) {
      this.options.log?.('info', 'wallets followed by this instance changed', { instance: this.instanceId, wallets: this.followed().size });
      this.onChange();
    }
  }

  async settled(loaded: ReadonlySet<string>): Promise<void> {
    const release = [...this.releasing].filter((id) => !loaded.has(id));
    if (release.length === 0) return;
    await this.store.followLeases.release(this.instanceId, release);
    for (const id of release) {
      this.releasing.delete(id);
      this.held.delete(id);
    }
  }

  async fence(repos: Repositories, walletIds: readonly string[]): Promise<void> {
    try {
      await repos.followLeases.fence(this.instanceId, walletIds);
    } catch (error) {
      // Taken over while this instance was silent: not followed from the next pass on (no write fails twice).
      if (error instanceof FollowLeaseLostError) for (const id of error.walletIds) this.held.delete(id);
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.beating;
    this.held.clear();
    this.releasing.clear();
    await this.store.followLeases.release(this.instanceId).catch(() => {});
  }
}
