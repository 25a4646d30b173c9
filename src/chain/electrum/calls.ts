/** What the Electrum source uses of its client (client.ts): calls, batches, notifications, reconnections. */
import type { ElectrumClient } from './client.js';

export type ElectrumCalls = Pick<ElectrumClient, 'connect' | 'request' | 'batch' | 'batchSettled' | 'onNotification' | 'onReconnect' | 'serverInfo'>;
