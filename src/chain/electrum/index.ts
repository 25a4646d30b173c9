/** Electrum protocol chain source (Fulcrum, ElectrumX, electrs). */
import type { NetworkName } from '../../core/network.js';
import type { ChainSource } from '../types.js';
import { ElectrumClient, type ElectrumClientOptions } from './client.js';
import { ElectrumChainSource } from './source.js';

export { ElectrumClient, type ElectrumClientOptions, type ServerInfo } from './client.js';
export { ElectrumChainSource } from './source.js';

export function createElectrumChainSource(options: ElectrumClientOptions & { network: NetworkName }): ChainSource {
  const { network, ...clientOptions } = options;
  const client = new ElectrumClient(clientOptions);
  return new ElectrumChainSource(client, { network, log: options.log, serverOnLoopback: client.onLoopback });
}
