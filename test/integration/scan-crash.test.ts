/**
 * kill -9 a real `wcs serve` process in the middle of a wallet's first scan, several times, on SQLite and on
 * PostgreSQL: each restart resumes the scan from what was committed, and the wallet ends equal to Bitcoin
 * Core's view (no transaction lost or counted twice, progress never ahead of the data it covers). Blocks come
 * from the node, or half from the node's block files (`SERVICE_BITCOIND_BLOCKS_FOLDER`) and half from the node.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { blockRecords, blocksFolder, writeBlockFile } from '../support/block-files.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { adminImportsWpkh, expectWalletMatchesCore, nodeEnv, timeline } from './wallet-helpers.js';
import { createSharedStore, sqliteIntegrity, killHard, killStartedInstances, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';

const KILLS = 3;
const LAST = timeline.snapshots.length - 1;
const stores: SharedStore[] = [];
const nodes: RpcTestServer[] = [];
const folders: string[] = [];

afterAll(async () => {
  await killStartedInstances();
  for (const node of nodes) await node.close();
  for (const store of stores) await store.dispose();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function details(instance: Instance, auth: string): Promise<any> {
  const answer = await fetch(`${instance.api}/wallets/w_wpkh`, { headers: { authorization: auth } });
  expect(answer.status).toBe(200);
  return answer.json();
}

/**
 * Every other block of the chain in two block files, each file's in reverse order: the others, read from the
 * node, keep the scan slow, and each restart finds the files' blocks afresh.
 */
function halfTheChainInFiles(chain: readonly string[]): { folder: string; inFiles: Set<string> } {
  const folder = blocksFolder();
  folders.push(folder);
  const inFiles = chain.filter((_, height) => height % 2 === 0);
  const middle = Math.floor(inFiles.length / 2);
  writeBlockFile(folder, 0, blockRecords(inFiles.slice(0, middle).reverse()));
  writeBlockFile(folder, 1, blockRecords(inFiles.slice(middle).reverse()));
  return { folder, inFiles: new Set(inFiles) };
}

describe.each([
  { kind: 'sqlite', blocks: 'node' },
  { kind: 'postgres', blocks: 'node' },
  { kind: 'sqlite', blocks: 'files' },
] as const)('SIGKILL during a wallet scan ($kind, blocks from the $blocks)', ({ kind, blocks }) => {
  it('resumes from what was committed and ends equal to Core', async () => {
    const store = await createSharedStore(kind);
    stores.push(store);
    // No filters (every block is read) and slow block reads: the scan takes seconds, so kills land inside it.
    const node = await startRpcTestServer({ snapshot: LAST, filters: false, methodDelayMs: { getblock: 250 } });
    nodes.push(node);
    const files = blocks === 'files' ? halfTheChainInFiles(timeline.snapshots[LAST].chain) : undefined;
    const env = { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '0.2', ...(files ? { SERVICE_BITCOIND_BLOCKS_FOLDER: files.folder } : {}) };
    let instance = await startInstance(store, 'scan-crash', env);
    try {
      const auth = await adminImportsWpkh(instance.api, 'scan crash', 'Scan crash');

      // The chain is one step of a scan: its progress is committed at the step's end, so every kill lands
      // inside it, after a random part of it was read, and the next instance resumes it from the start.
      let kills = 0;
      while (kills < KILLS) {
        const scan = (await details(instance, auth)).scan as { height: number } | null;
        if (scan === null) break; // finished before all the kills: the ones done still count
        await sleep(100 + Math.random() * 500);
        await killHard(instance);
        kills++;
        if (kind === 'sqlite') expect(sqliteIntegrity(store.databaseUrl)).toBe('ok');
        instance = await startInstance(store, 'scan-crash', env);
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
      if (files) {
        // Every restart read the files' blocks from the files: the node was asked only for the others.
        const askedOfNode = node.calls.filter((c) => c.method === 'getblock').map((c) => c.params[0] as string);
        expect(askedOfNode.length).toBeGreaterThan(0);
        expect(askedOfNode.filter((hash) => files.inFiles.has(hash))).toEqual([]);
      }
    } finally {
      await stopInstance(instance);
    }
  }, 120_000);
});
