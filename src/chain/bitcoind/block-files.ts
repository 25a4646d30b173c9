/**
 * Blocks read from Bitcoin Core's own block files (`blocks/blk*.dat`), for a service that runs beside the node
 * and may read its data folder. Over JSON-RPC the node hex-encodes every block and the service decodes it again;
 * a scan of a node without the filter index reads every block since the wallet's birthday, so that encoding
 * costs more than the scan itself. Read from the files, a block costs one read of its own bytes.
 *
 * Nothing here is trusted more than the node: a block is taken only if its header hashes to the hash asked for,
 * as the node itself checks when it reads a block from these files. A block not found or not readable (a
 * pruned file, another network's files, a folder rebuilt by the node) is left to the caller, which reads it
 * from the node as before.
 *
 * Where each block lies is learnt by reading the files' record headers forward, as far as the blocks asked for
 * need, from the last file that starts well below the lowest of them: the node writes blocks nearly in height
 * order, so the files before it are never read (on mainnet, hundreds of thousands of record headers). The places
 * of the last MAX_PLACES blocks read past are kept (about 11 MB); a scan moves forward, and a block asked for
 * again after its place was dropped, or lying before where the reading started (an older wallet's scan), is
 * looked for again from the file its height points to.
 */
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { parseBlockForScan, parseBlockHeader } from '../../core/block.js';
import type { NetworkName } from '../../core/network.js';
import type { Block } from '../../core/tx.js';
import type { ChainLog } from '../types.js';

/**
 * The first four bytes of each record of the block files, per network (the P2P message start). A custom signet
 * has its own, derived from its challenge: for signet it is read from the first record of the files.
 */
const MESSAGE_START: Readonly<Record<NetworkName, number>> = {
  mainnet: 0xd9b4bef9,
  testnet: 0x0709110b,
  testnet4: 0x283f161c,
  signet: 0x40cf030a,
  regtest: 0xdab5bffa,
};

/** A record: message start (4 bytes), block size (4 bytes, little-endian), then the block. */
const RECORD_HEAD = 8;
const HEADER = 80;
/** Bytes read at once while looking for record headers, when records are small enough to share a read. */
const INDEX_READ = 256 * 1024;
/** Block files held open between reads. */
const OPEN_FILES = 4;
/** Places kept, the oldest dropped first: far more than the node ever writes out of height order (1,024). */
const MAX_PLACES = 100_000;
/** Blocks remembered as not in the files after a look through all of them, and as damaged in them. */
const MAX_ABSENT = 10_000;
/**
 * How far below later blocks the node may write a block: it downloads blocks up to 1,024 past the last one it
 * has connected and writes each as it arrives. Twice that, to be safe.
 */
const OUT_OF_ORDER = 2_048;

interface Place {
  file: number;
  /** Offset of the block's bytes (after the record head). */
  offset: number;
  size: number;
}

export interface BlockFileReaderOptions {
  /** The node's `blocks` folder (the one holding `blk00000.dat` and `xor.dat`). */
  folder: string;
  network: NetworkName;
  log?: ChainLog | undefined;
  /** Places kept (default MAX_PLACES). */
  maxPlaces?: number;
  /**
   * The node's height of each block (undefined if it does not know one), to start reading the files near the
   * blocks asked for; without it, reading starts at the first file.
   */
  heightsOf?: ((hashes: readonly string[]) => Promise<Array<number | undefined>>) | undefined;
  /** Heights by which the node may write a block after later ones (default OUT_OF_ORDER). */
  outOfOrder?: number;
}

export class BlockFileReader {
  private readonly folder: string;
  private readonly network: NetworkName;
  private messageStart: number;
  private readonly maxPlaces: number;
  private readonly heightsOf: BlockFileReaderOptions['heightsOf'];
  private readonly outOfOrder: number;
  private readonly log: ChainLog | undefined;
  /** Key: the block hash's first six bytes (in the hash's own byte order). A clash only costs a read from the node. */
  private places = new Map<number, Place>();
  /** Whether places were dropped since the index last started from the first file. */
  private dropped = false;
  /** Keys of blocks looked for through every file and not found (the node reads those): no look again for them. */
  private absent = new Set<number>();
  /** Blocks whose place held something else, for which the index started again. */
  private restartedFor = new Set<number>();
  /** Blocks that failed again where the index found them afresh (a damaged file): left to the node. */
  private readonly unreadable = new Set<number>();
  /** Where the next record header not yet read lies; file -1: the file to start at is still to be chosen. */
  private cursor = { file: -1, offset: 0 };
  /** The height of the first block of the file reading started at; -Infinity: it started at the first file. */
  private startHeight = -Infinity;
  /** The key the files are obfuscated with; null: none; undefined: not read yet. */
  private xorKey: Uint8Array | null | undefined;
  /** One reader of the files at a time: the places and the cursor are shared. */
  private turn: Promise<unknown> = Promise.resolve();
  /** Block files held open while reads follow each other, least recently used first. */
  private readonly open = new Map<number, FileHandle>();
  /** Reads asked for and not yet done. */
  private waiting = 0;
  /** What the log last said, so that a lasting state is logged once. */
  private reported: string | undefined;

  constructor(options: BlockFileReaderOptions) {
    this.folder = options.folder;
    this.network = options.network;
    this.messageStart = MESSAGE_START[options.network];
    this.maxPlaces = options.maxPlaces ?? MAX_PLACES;
    this.heightsOf = options.heightsOf;
    this.outOfOrder = options.outOfOrder ?? OUT_OF_ORDER;
    this.log = options.log;
  }

  /** The blocks found in the files, by position in `hashes`; undefined where a block was not found or not readable. */
  getBlocks(hashes: readonly string[]): Promise<Array<Block | undefined>> {
    this.waiting++;
    const result = this.turn.then(async () => {
      try {
        return await this.read(hashes);
      } finally {
        // Idle: nothing held open, so that a file the node prunes meanwhile is not kept on its disk.
        if (--this.waiting === 0) await this.closeFiles();
      }
    });
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async read(hashes: readonly string[]): Promise<Array<Block | undefined>> {
    try {
      if (this.xorKey === undefined) this.xorKey = await this.readXorKey();
      const keys = hashes.map(placeKey);
      if (keys.some((key) => !this.places.has(key))) await this.indexForward(hashes);
      // Not found after the cursor: a block whose place was dropped, or one from before where reading started.
      const lost = hashes.filter((_, i) => !this.places.has(keys[i]!) && !this.absent.has(keys[i]!));
      if (lost.length > 0 && (this.dropped || (await this.mayLieBeforeStart(lost)))) {
        this.restartIndex();
        await this.indexForward(hashes);
      }
      for (const key of lost.map(placeKey)) if (!this.places.has(key)) this.remember(key);
      const blocks = await this.readBlocks(hashes, keys);
      const found = blocks.filter((b) => b !== undefined).length;
      this.report(found === 0 ? 'none' : 'found', found === 0 ? 'no block asked for was found in the node\'s block files; reading blocks from the node' : 'reading blocks from the node\'s block files', { folder: this.folder });
      return blocks;
    } catch (error) {
      // An unreadable folder or file: the node answers instead, and the files are looked at afresh next time.
      await this.forget();
      this.report('failed', 'reading the node\'s block files failed; reading blocks from the node', { reason: error instanceof Error ? error.message : String(error) });
      return hashes.map(() => undefined);
    }
  }

  /**
   * Whether any of these blocks may lie in a file before the one reading started at. A block the node has not
   * written yet (the tip, announced before its file is flushed) lies after it, and is left to the node.
   */
  private async mayLieBeforeStart(hashes: readonly string[]): Promise<boolean> {
    if (this.startHeight === -Infinity || !this.heightsOf) return false;
    return (await this.heightsOf(hashes)).some((height) => height !== undefined && height < this.startHeight + this.outOfOrder);
  }

  /** Reads record headers forward from the cursor until every block is placed or the written records end. */
  private async indexForward(hashes: readonly string[]): Promise<void> {
    const missing = new Set(hashes.map(placeKey).filter((key) => !this.places.has(key)));
    if (this.cursor.file < 0) this.cursor = { file: await this.startFile(hashes.filter((hash) => missing.has(placeKey(hash)))), offset: 0 };
    while (missing.size > 0) {
      const handle = await this.file(this.cursor.file);
      if (handle === undefined || !(await this.indexFile(handle, missing))) return;
      // This file's records end: go on in the next file if the node has started it, else wait for more records.
      if ((await this.file(this.cursor.file + 1)) === undefined) return;
      this.cursor = { file: this.cursor.file + 1, offset: 0 };
    }
  }

  /**
   * The file to start reading record headers at for these blocks: the last one whose first block lies at least
   * `outOfOrder` heights below the lowest of them (a search over the files' first blocks, by the node's heights),
   * or the first file when no file does or heights are not known.
   */
  private async startFile(hashes: readonly string[]): Promise<number> {
    const files = await this.fileNumbers();
    const first = files[0] ?? 0;
    if (this.network === 'signet') await this.learnMessageStart(first);
    this.startHeight = -Infinity;
    const heights = files.length > 2 && this.heightsOf ? await this.heightsOf(hashes) : [];
    const below = Math.min(...heights.filter((height) => height !== undefined)) - this.outOfOrder;
    if (!Number.isFinite(below)) return first;
    let start = first;
    for (let low = 1, high = files.length - 1; low <= high; ) {
      const middle = (low + high) >>> 1;
      const height = await this.firstBlockHeight(files[middle]!);
      if (height !== undefined && height <= below) {
        [start, this.startHeight] = [files[middle]!, height];
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    if (start !== first) this.log?.('info', 'finding blocks in the node\'s block files from a later file on', { folder: this.folder, file: start, height: this.startHeight });
    return start;
  }

  /** The node's height of the first block in file `n`; undefined if the file holds no record the node knows. */
  private async firstBlockHeight(n: number): Promise<number | undefined> {
    const handle = await this.file(n);
    const head = handle && (await this.readAt(handle, 0, RECORD_HEAD + HEADER));
    if (head?.length !== RECORD_HEAD + HEADER || new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true) !== this.messageStart) return undefined;
    const [height] = await this.heightsOf!([parseBlockHeader(head.subarray(RECORD_HEAD)).hash]);
    return height;
  }

  /**
   * Places the records of the cursor's file from the cursor on, until `missing` is empty (false) or the file's
   * written records end (true: the next file may hold more).
   */
  private async indexFile(handle: FileHandle, missing: Set<number>): Promise<boolean> {
    let chunk: Uint8Array = new Uint8Array(0);
    let chunkAt = 0;
    let lastSize = 0;
    while (missing.size > 0) {
      const at = this.cursor.offset;
      if (at + RECORD_HEAD + HEADER > chunkAt + chunk.length) {
        // Large records (mainnet's) each get a read of their head alone, small ones share a read. Only the
        // heads of a shared read are de-obfuscated: the blocks between them are read again when asked for.
        chunk = await this.readAt(handle, at, lastSize > INDEX_READ / 8 ? RECORD_HEAD + HEADER : INDEX_READ, false);
        chunkAt = at;
      }
      const head = chunk.subarray(at - chunkAt, at - chunkAt + RECORD_HEAD + HEADER);
      if (head.length < RECORD_HEAD + HEADER) return true; // the end of the file
      if (this.xorKey) applyXorKey(head, at, this.xorKey);
      const view = new DataView(head.buffer, head.byteOffset, head.length);
      // Past the last record the file is zeros the node set aside for later records.
      if (view.getUint32(0, true) !== this.messageStart) return true;
      const size = view.getUint32(4, true);
      if (size < HEADER) return true;
      const key = digestKey(sha256(sha256(head.subarray(RECORD_HEAD))));
      this.place(key, { file: this.cursor.file, offset: at + RECORD_HEAD, size });
      missing.delete(key);
      this.cursor.offset = at + RECORD_HEAD + size;
      lastSize = size;
    }
    return false;
  }

  /** Reads the placed blocks, neighbours in one read, each checked to be the block asked for. */
  private async readBlocks(hashes: readonly string[], keys: readonly number[]): Promise<Array<Block | undefined>> {
    const blocks: Array<Block | undefined> = hashes.map(() => undefined);
    const wanted = keys
      .map((key, i) => ({ i, place: this.unreadable.has(key) ? undefined : this.places.get(key) }))
      .filter((w): w is { i: number; place: Place } => w.place !== undefined)
      .sort((a, b) => a.place.file - b.place.file || a.place.offset - b.place.offset);
    let stale = false;
    const mismatched: number[] = [];
    for (let start = 0; start < wanted.length; ) {
      let end = start + 1;
      while (end < wanted.length && isNextRecord(wanted[end - 1]!.place, wanted[end]!.place)) end++;
      const run = wanted.slice(start, end);
      start = end;
      const first = run[0]!.place;
      const last = run.at(-1)!.place;
      const handle = await this.file(first.file);
      if (handle === undefined) {
        stale = true; // pruned, or the folder was rebuilt
        continue;
      }
      const bytes = await this.readAt(handle, first.offset, last.offset + last.size - first.offset);
      for (const { i, place } of run) {
        const from = place.offset - first.offset;
        // A block still being written (the node writes a record's head first) is not there yet; anything else
        // that is not the block asked for means the place is wrong.
        if (from + place.size > bytes.length) continue;
        const block = parseIfWanted(bytes.subarray(from, from + place.size), hashes[i]!);
        if (block === undefined) mismatched.push(keys[i]!);
        blocks[i] = block;
      }
    }
    // A place that no longer holds its block: the files changed under the index, which starts again. A block
    // that fails again at the place found afresh is damaged: the node answers for it from then on.
    const damaged = mismatched.filter((key) => this.restartedFor.has(key));
    for (const key of damaged) {
      if (this.unreadable.size >= MAX_ABSENT) this.unreadable.clear();
      this.unreadable.add(key);
    }
    if (stale || mismatched.length > damaged.length) {
      await this.forget();
      this.restartedFor = new Set(mismatched);
      this.log?.('warn', 'a block was not where the node\'s block files had it; finding blocks in them again', { folder: this.folder });
    }
    return blocks;
  }

  /** Closes the files held open. */
  close(): Promise<void> {
    const closed = this.turn.then(() => this.closeFiles());
    this.turn = closed.catch(() => undefined);
    return closed;
  }

  private place(key: number, place: Place): void {
    this.places.set(key, place);
    this.absent.delete(key);
    if (this.places.size <= this.maxPlaces) return;
    // The oldest tenth at once: deleting from the front of a Map one entry at a time costs a walk each.
    let drop = Math.max(1, Math.floor(this.maxPlaces / 10));
    for (const old of this.places.keys()) {
      if (drop-- === 0) break;
      this.places.delete(old);
    }
    this.dropped = true;
  }

  private remember(absentKey: number): void {
    if (this.absent.size >= MAX_ABSENT) this.absent.clear();
    this.absent.add(absentKey);
  }

  private restartIndex(): void {
    this.places = new Map();
    this.dropped = false;
    this.cursor = { file: -1, offset: 0 };
    this.startHeight = -Infinity;
  }

  private async forget(): Promise<void> {
    this.restartIndex();
    this.absent = new Set();
    this.xorKey = undefined;
    await this.closeFiles();
  }

  /** The message start of the first record of block file `n`, when it holds one (a signet's, default or custom). */
  private async learnMessageStart(n: number): Promise<void> {
    const handle = await this.file(n);
    const head = handle && (await this.readAt(handle, 0, 4));
    if (head?.length !== 4) return;
    const start = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
    // Zeros set aside for records (read through the key) are no message start.
    const setAside = this.xorKey ? new DataView(this.xorKey.buffer, this.xorKey.byteOffset, 4).getUint32(0, true) : 0;
    if (start !== setAside) this.messageStart = start;
  }

  /** The block files' numbers, lowest first (a pruned node has deleted the first files). */
  private async fileNumbers(): Promise<number[]> {
    const numbers = (await readdir(this.folder)).map((name) => /^blk(\d{5,})\.dat$/.exec(name)?.[1]).filter((n) => n !== undefined).map(Number);
    return numbers.sort((a, b) => a - b);
  }

  private async closeFiles(): Promise<void> {
    const handles = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(handles.map((handle) => handle.close()));
  }

  /** `length` bytes at `position`, de-obfuscated unless told not to; shorter if the file is. */
  private async readAt(handle: FileHandle, position: number, length: number, deobfuscate = true): Promise<Uint8Array> {
    // Not zero-filled (every byte read is overwritten), not pooled: at offset 0, the key applies a word at a time.
    const bytes = Buffer.allocUnsafeSlow(length);
    const { bytesRead } = await handle.read(bytes, 0, length, position);
    const read = bytes.subarray(0, bytesRead);
    if (deobfuscate && this.xorKey) applyXorKey(read, position, this.xorKey);
    return read;
  }

  /** Block file number `n`, held open (the last few used); undefined if it does not exist. */
  private async file(n: number): Promise<FileHandle | undefined> {
    const held = this.open.get(n);
    if (held) {
      this.open.delete(n);
      this.open.set(n, held); // most recently used last
      return held;
    }
    let handle: FileHandle;
    try {
      handle = await open(join(this.folder, `blk${String(n).padStart(5, '0')}.dat`), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    this.open.set(n, handle);
    for (const [old, oldHandle] of this.open) {
      if (this.open.size <= OPEN_FILES) break;
      this.open.delete(old);
      await oldHandle.close();
    }
    return handle;
  }

  /** The key the node obfuscates its block files with (`xor.dat`, Bitcoin Core 28+); none before. */
  private async readXorKey(): Promise<Uint8Array | null> {
    let handle: FileHandle;
    try {
      handle = await open(join(this.folder, 'xor.dat'), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const key = new Uint8Array(8);
      const { bytesRead } = await handle.read(key, 0, 8, 0);
      if (bytesRead !== 8) throw new Error('xor.dat is not 8 bytes long');
      return key.every((b) => b === 0) ? null : key;
    } finally {
      await handle.close();
    }
  }

  private report(state: string, message: string, details: Record<string, unknown>): void {
    if (state === this.reported) return;
    this.reported = state;
    this.log?.(state === 'found' ? 'info' : 'warn', message, details);
  }
}

function isNextRecord(before: Place, after: Place): boolean {
  return after.file === before.file && after.offset === before.offset + before.size + RECORD_HEAD;
}

/** The block, if its bytes parse and its header hashes to `hash`. */
function parseIfWanted(bytes: Uint8Array, hash: string): Block | undefined {
  try {
    const block = parseBlockForScan(bytes);
    return block.hash === hash ? block : undefined;
  } catch {
    return undefined;
  }
}

/** The place key of a block hash in display hex: its last twelve digits are the hash's first six bytes. */
function placeKey(hash: string): number {
  return Number.parseInt(hash.slice(52), 16);
}

/** The place key of a block hash as hashed (the reverse of display order). */
function digestKey(digest: Uint8Array): number {
  const low = ((digest[3]! << 24) | (digest[2]! << 16) | (digest[1]! << 8) | digest[0]!) >>> 0;
  return digest[5]! * 2 ** 40 + digest[4]! * 2 ** 32 + low;
}

/**
 * Undoes the node's obfuscation of bytes read at file position `position`: byte p of the file is XORed with
 * key[p % 8]. Four bytes at a time when `bytes` starts on a word boundary of its buffer.
 */
export function applyXorKey(bytes: Uint8Array, position: number, key: Uint8Array): void {
  const rotated = new Uint8Array(8);
  for (let j = 0; j < 8; j++) rotated[j] = key[(position + j) % 8]!;
  if (bytes.byteOffset % 4 !== 0) {
    for (let i = 0; i < bytes.length; i++) bytes[i]! ^= rotated[i % 8]!;
    return;
  }
  const [even, odd] = new Uint32Array(rotated.buffer);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  for (let i = 0; i + 1 < words.length; i += 2) {
    words[i]! ^= even!;
    words[i + 1]! ^= odd!;
  }
  if (words.length % 2 === 1) words[words.length - 1]! ^= even!;
  for (let i = words.length * 4; i < bytes.length; i++) bytes[i]! ^= rotated[i % 8]!;
}
