/**
 * The worker thread of `GapDerivation`: derives a descriptor branch's scripts (hex) for a range of indexes, off the
 * thread that answers requests. Descriptors parsed lately are kept (a wallet's gap is asked for in a few ranges).
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { toHex } from '../core/bytes.js';
import { NETWORKS, type NetworkName } from '../core/network.js';
import { branchDeriver, type BranchDeriver } from './miniscript-wallet.js';
import type { GapRequest, GapAnswer } from './gap-derivation.js';

/**
 * This thread yields the CPU to the one answering requests: the gaps it derives are the sync's catch-up, which may
 * wait, and while thousands of wallets are created it would otherwise take the core the creations need. Linux
 * gives a thread its own priority (`/proc/thread-self` names it); elsewhere, or where refused, it keeps the process's.
 */
function yieldToRequests(): void {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 10);
  } catch {
    // not Linux, or not allowed: the same priority as the request thread
  }
}
yieldToRequests();

/** Parsed descriptors kept: the two branches of the few wallets being loaded at a time. */
const KEPT = 16;
const kept = new Map<string, BranchDeriver>();

function deriverOf(descriptor: string, network: NetworkName): BranchDeriver {
  const key = `${network} ${descriptor}`;
  let deriver = kept.get(key);
  if (deriver) kept.delete(key);
  else deriver = branchDeriver(descriptor, NETWORKS[network]);
  kept.set(key, deriver); // last used last
  if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  return deriver;
}

parentPort!.on('message', ({ id, descriptor, network, from, count }: GapRequest) => {
  let answer: GapAnswer;
  try {
    answer = { id, scripts: deriverOf(descriptor, network).deriveRange(from, count).map((output) => toHex(output.scriptPubKey)) };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
