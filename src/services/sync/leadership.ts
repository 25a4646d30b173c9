/**
 * "May this instance run the chain sync?" Several service processes may share one database; only
 * one of them syncs at a time. SQLite (one host, one writer): always. PostgreSQL: an advisory lock
 * held on a dedicated connection (see store/sync-leadership.ts).
 */
export interface SyncLeadership {
  /** True while this instance holds (or just took) the right to sync. Never throws. */
  acquire(): Promise<boolean>;
  /** Gives the right up (on shutdown). */
  release(): Promise<void>;
}

export const ALWAYS_LEADER: SyncLeadership = {
  acquire: async () => true,
  release: async () => {},
};
