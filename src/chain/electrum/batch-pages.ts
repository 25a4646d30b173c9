/**
 * Cuts a batch into pages an Electrum server takes and the client reads without holding the event loop long:
 * at most 300 calls, about 500 KB of request, and about 1 MiB of expected answer, from the answer sizes seen
 * per method. A page is cut when it is sent, so later pages follow what earlier ones brought back.
 */
import type { RpcCall } from './json-rpc.js';

/** Fulcrum takes at most 345 calls in a batch (its max_batch); ElectrumX about 1 MB of request per message. */
export const BATCH_MAX_CALLS = 300;
const BATCH_MAX_BYTES = 500_000;
/**
 * A page's answer arrives as one line, parsed in one step: pages are sized so that line stays near 1 MiB, about
 * 1.5-2.5 ms of the event loop (reading a line costs 1.2-2.6 ms of CPU per MB, bench/electrum); a page of 300
 * long histories would make a line near the 64 MiB cap, over 100 ms in one step.
 */
const PAGE_ANSWER_BYTES = 1024 * 1024;
/** Answer bytes per call assumed until a method's answers were seen. */
const FIRST_GUESS_ANSWER_BYTES: Record<string, number> = {
  'blockchain.transaction.get': 16 * 1024,
  // Up to 2016 headers of 160 hex digits.
  'blockchain.block.headers': 330 * 1024,
};
const DEFAULT_ANSWER_BYTES = 1024;

export class BatchPager {
  /** Answer bytes per call last seen, by method. */
  private readonly answerBytesPerCall = new Map<string, number>();

  /**
   * Where the page starting at `start` ends: at most `maxCalls` calls, about BATCH_MAX_BYTES of request and
   * PAGE_ANSWER_BYTES of expected answer, and at least one call.
   */
  pageEnd(calls: ReadonlyArray<{ method: string; params: unknown[] }>, start: number, maxCalls: number): number {
    let end = start;
    let requestBytes = 0;
    let answerBytes = 0;
    while (end < calls.length && end - start < maxCalls) {
      const call = calls[end]!;
      // The envelope ({"jsonrpc":"2.0","method":..,"params":..,"id":N}) adds about 50 bytes to the call's own text.
      const size = call.method.length + JSON.stringify(call.params).length + 50;
      const answer = this.answerBytesPerCall.get(call.method) ?? FIRST_GUESS_ANSWER_BYTES[call.method] ?? DEFAULT_ANSWER_BYTES;
      if (end > start && (requestBytes + size > BATCH_MAX_BYTES || answerBytes + answer > PAGE_ANSWER_BYTES)) break;
      requestBytes += size;
      answerBytes += answer;
      end++;
    }
    return end;
  }

  /** Takes a page's answer size as the next guess for its methods. */
  learn(page: readonly RpcCall[], answerBytes: number): void {
    if (answerBytes <= 0) return;
    const perCall = answerBytes / page.length;
    for (const method of new Set(page.map((call) => call.method))) this.answerBytesPerCall.set(method, perCall);
  }
}
