/**
 * Block headers as an Electrum server sends them (80 bytes each, hex), checked before anything rests on them:
 * each header's hash is computed here (never taken from the server), each links to the one before, and off
 * regtest its proof of work meets the target its `bits` claim, that target is within the network's limit and,
 * on mainnet and signet, `bits` changes only at a retarget and by at most a factor of four.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { fromHex, reverseHex } from '../../core/bytes.js';
import type { NetworkName } from '../../core/network.js';
import { ChainError } from '../types.js';

export interface Header {
  height: number;
  /** Display hex. */
  hash: string;
  /** Display hex; all zeros for the genesis block. */
  prevHash: string;
  /** The merkle root as stored in the header (internal byte order). */
  merkleRoot: Uint8Array;
  time: number;
  bits: number;
}

export const HEADER_BYTES = 80;
const RETARGET_INTERVAL = 2016;

/** Genesis block hashes: what `server.features` must report for the service's network. */
export const GENESIS_HASHES: Readonly<Record<NetworkName, string>> = {
  mainnet: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
  testnet: '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
  testnet4: '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
  signet: '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6',
  regtest: '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206',
};

/** The easiest target each network allows, as compact bits (regtest's proof of work is not checked). */
const POW_LIMIT_BITS: Readonly<Record<Exclude<NetworkName, 'regtest'>, number>> = {
  mainnet: 0x1d00ffff,
  testnet: 0x1d00ffff,
  testnet4: 0x1d00ffff,
  signet: 0x1e0377ae,
};

/** Networks whose difficulty changes only at a retarget (testnets allow minimum-difficulty blocks between). */
const STEADY_BITS: ReadonlySet<NetworkName> = new Set(['mainnet', 'signet']);

const bad = (message: string) => new ChainError('bad_response', message);

/** One header, parsed and hashed here. */
export function parseHeader(bytes: Uint8Array, height: number): Header {
  if (bytes.length !== HEADER_BYTES) throw bad('The Electrum server sent a block header that is not 80 bytes');
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  return {
    height,
    hash: reverseHex(sha256(sha256(bytes))),
    prevHash: reverseHex(bytes, 4, 36),
    merkleRoot: bytes.slice(36, 68),
    time: view.getUint32(68, true),
    bits: view.getUint32(72, true),
  };
}

/** `count` consecutive headers from concatenated hex, the first at `height`, linked to each other. */
export function parseHeaders(hex: unknown, height: number, count: number): Header[] {
  let bytes: Uint8Array;
  try {
    bytes = fromHex(String(hex));
  } catch {
    throw bad('The Electrum server sent block headers that are not hex');
  }
  if (bytes.length !== count * HEADER_BYTES) throw bad(`The Electrum server sent ${bytes.length / HEADER_BYTES} block headers for ${count}`);
  const headers: Header[] = [];
  for (let i = 0; i < count; i++) {
    const header = parseHeader(bytes.subarray(i * HEADER_BYTES, (i + 1) * HEADER_BYTES), height + i);
    const prev = headers[i - 1];
    if (prev && header.prevHash !== prev.hash) throw bad(`The Electrum server sent block headers that do not link at height ${header.height}`);
    headers.push(header);
  }
  return headers;
}

/** The target a compact `bits` value stands for (null when negative or overflowing: never valid). */
export function targetOf(bits: number): bigint | null {
  const exponent = bits >>> 24;
  const mantissa = bits & 0x007fffff;
  if (bits & 0x00800000 && mantissa !== 0) return null;
  if (mantissa === 0) return 0n;
  const target = exponent <= 3 ? BigInt(mantissa >>> (8 * (3 - exponent))) : BigInt(mantissa) << BigInt(8 * (exponent - 3));
  return target >= 1n << 256n ? null : target;
}

/**
 * Checks a header's proof of work (off regtest), and with `prev`, its link to it and the change of difficulty.
 * Throws ChainError `bad_response`: a server that sends such a header is not to be believed.
 */
export function checkHeader(network: NetworkName, header: Header, prev: Header | undefined): void {
  if (prev) {
    if (header.prevHash !== prev.hash || header.height !== prev.height + 1) {
      throw bad(`The Electrum server sent a block header at height ${header.height} that does not link to the one before`);
    }
  }
  if (network === 'regtest') return;
  const target = targetOf(header.bits);
  const limit = targetOf(POW_LIMIT_BITS[network])!;
  if (target === null || target === 0n || target > limit) throw bad(`The Electrum server sent a block header at height ${header.height} with an invalid difficulty`);
  if (BigInt(`0x${header.hash}`) > target) throw bad(`The Electrum server sent a block header at height ${header.height} without its proof of work`);
  if (prev && STEADY_BITS.has(network)) {
    const before = targetOf(prev.bits)!;
    const steady = header.height % RETARGET_INTERVAL !== 0;
    if (steady ? header.bits !== prev.bits : target > before * 4n || target < before / 4n) {
      throw bad(`The Electrum server sent a block header at height ${header.height} whose difficulty does not follow the one before`);
    }
  }
}

/** Checks a run of headers already linked to each other: each one's proof of work, the first one's link to `prev`. */
export function checkHeaders(network: NetworkName, headers: readonly Header[], prev: Header | undefined): void {
  headers.forEach((header, i) => checkHeader(network, header, i === 0 ? prev : headers[i - 1]));
}

/** Reads headers from the server: `blockchain.block.headers` (at most 2016 a call, fewer past the tip). */
export type HeaderRead = (height: number, count: number) => Promise<Header[]>;

/** Most headers one `blockchain.block.headers` call returns. */
export const HEADERS_PER_READ = 2016;

/**
 * The server's active chain near its tip: the last `keep` headers, linked and checked. A new tip that does not
 * link to them is followed back, header by header in growing reads, to where it meets them (a reorg); the
 * headers above that point are replaced.
 */
export class HeaderChain {
  private readonly recent = new Map<number, Header>();
  private best: Header | undefined;

  constructor(
    private readonly network: NetworkName,
    private readonly read: HeaderRead,
    private readonly keep = HEADERS_PER_READ,
  ) {}

  get tip(): Header | undefined {
    return this.best;
  }

  /**
   * Takes a tip the server told; returns the height of the first header replaced when it did not extend the
   * kept chain (a reorg), else undefined.
   */
  async setTip(tip: Header): Promise<number | undefined> {
    if (this.best?.hash === tip.hash) return undefined;
    const below = this.recent.get(tip.height - 1);
    if (!this.best || below?.hash === tip.prevHash || tip.height === 0) {
      checkHeader(this.network, tip, below);
      const replaced = this.best && this.best.height >= tip.height ? tip.height : undefined;
      this.place([tip]);
      return replaced;
    }
    // Read back from the new tip until its chain meets the kept one.
    const before = this.best.height;
    let chain: Header[] = [tip];
    for (let span = 8; ; span *= 4) {
      const start = Math.max(0, tip.height - span);
      const back = await this.read(start, chain[0]!.height - start);
      checkHeaders(this.network, [...back, ...chain], undefined);
      chain = [...back, ...chain];
      const meet = chain.findLastIndex((h) => this.recent.get(h.height)?.hash === h.hash);
      if (meet >= 0 || start === 0 || tip.height - start >= this.keep) {
        const kept = meet >= 0 ? chain.slice(meet + 1) : chain;
        if (meet < 0) this.recent.clear(); // deeper than the kept headers: start again from the new ones
        this.place(kept);
        return kept[0]!.height <= before ? kept[0]!.height : undefined;
      }
    }
  }

  /** The kept header at `height`, if any. */
  kept(height: number): Header | undefined {
    return this.recent.get(height);
  }

  /** Puts headers (linked, ending at the new tip) in place: those above them dropped, the oldest beyond `keep` too. */
  private place(headers: readonly Header[]): void {
    const last = headers.at(-1)!;
    for (const height of [...this.recent.keys()]) if (height > last.height || height <= last.height - this.keep) this.recent.delete(height);
    for (const header of headers) if (header.height > last.height - this.keep) this.recent.set(header.height, header);
    this.best = last;
  }
}
