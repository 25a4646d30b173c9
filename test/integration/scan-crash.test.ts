/**
 * kill -9 a real `wcs serve` process in the middle of a wallet's first scan, several times, on SQLite and on
 * PostgreSQL: each restart resumes the scan from what was committed, and the wallet ends equal to Bitcoin
 * Core's view (no transaction lost or counted twice, progress never ahead of the data it covers).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { adminImportsWpkh, expectWalletMatchesCore, nodeEnv, timeline } from './wallet-helpers.js';
import { createSharedStore, sqliteIntegrity, killHard, killStartedInstances, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';

const KILLS = 3;
const LAST = timeline.snapshots.length - 1;
const stores: SharedStore[] = [];
const nodes: RpcTestServer[] = [];

afterAll(async () => {
  await killStartedInstances();
  for (const node of nodes) await node.close();
  for (const store of stores) await store.dispose();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function details(instance: Instance, auth: string): Promise<any> {
  const answer = await fetch(`${instance.api}/wallets/w_wpkh`, { headers: { authorization: auth } });
  expect(answer.status).toBe(200);
  return answer.json();
}

describe.each(['sqlite', 'postgres'] as const)('SIGKILL during a wallet scan (%s)', (kind) => {
  it('resumes from what was committed and ends equal to Core', async () => {
    const store = await createSharedStore(kind);
    stores.push(store);
    // No filters (every block is read) and slow block reads: the scan takes seconds, so kills land inside it.
    const node = await startRpcTestServer({ snapshot: LAST, filters: false, methodDelayMs: { getblock: 250 } });
    nodes.push(node);
    const env = { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '0.2' };
    let instance = await startInstance(store, 'scan-crash', env);
    try {
      const auth = await adminImportsWpkh(instance.api, 'scan crash', 'Scan crash');

      let kills = 0;
      let lastHeight = -1;
      for (let waited = 0; kills < KILLS && waited < 60_000; waited += 20) {
        const scan = (await details(instance, auth)).scan as { height: number } | null;
        if (scan === null) break; // finished before all the kills: the ones done still count
        if (scan.height > lastHeight) {
          // The scan moved on since the last restart: kill it at a random moment from here.
          lastHeight = scan.height;
          await sleep(Math.random() * 400);
          await killHard(instance);
          kills++;
          if (kind === 'sqlite') expect(sqliteIntegrity(store.databaseUrl)).toBe('ok');
          instance = await startInstance(store, 'scan-crash', env);
        }
        await sleep(20);
      }
      expect(kills).toBeGreaterThanOrEqual(1);

      const mempool = new Set<string>(timeline.snapshots[LAST].mempool.map((m: any) => m.txid));
      for (let waited = 0; ; waited += 100) {
        const now = await details(instance, auth);
        try {
          expect(now.scan).toBeNull();
          expectWalletMatchesCore(now, timeline.snapshots[LAST].expected.w_wpkh, mempool);
          break;
        } catch (error) {
          if (waited > 30_000) throw error;
          await sleep(100);
        }
      }
    } finally {
      await stopInstance(instance);
    }
  }, 120_000);
});
