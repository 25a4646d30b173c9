/**
 * A store is for one network: wallets of another network than the configured one mean the service
 * was started with the wrong `network` (or on the wrong data folder or database). It refuses to
 * start rather than follow a chain its wallets do not belong to.
 */
import { ConfigError } from '../config.js';
import type { NetworkName } from '../core/network.js';
import type { Store } from '../store/repositories.js';

export async function checkStoreNetwork(store: Store, network: NetworkName): Promise<void> {
  // One row asked for, not every wallet: this runs before the server listens.
  const other = await store.wallets.findOfOtherNetwork(network);
  if (other === undefined) return;
  throw new ConfigError(
    `The store holds wallets of ${other.network} (such as "${other.alias}") but the service is configured for ${network}: ` +
      `set SERVICE_NETWORK (--network) to ${other.network}, or use another data folder or database`,
  );
}
