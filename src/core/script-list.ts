/**
 * Lists of scripts as bytes. A plain `Uint8Array[]` is one; `PackedScripts` keeps them all in one buffer (a
 * `Uint8Array` object per script costs about 100 bytes, three times a script's own bytes): at 10,000 wallets
 * watching 40 scripts each, megabytes.
 */

/** Scripts as bytes, read in order or mapped: a `Uint8Array[]`, or a `PackedScripts`. */
export interface ScriptList extends Iterable<Uint8Array> {
  readonly length: number;
  map<T>(fn: (script: Uint8Array, index: number) => T): T[];
}

/** The bytes of every version of one list, grown in place: script i is bytes[ends[i - 1], ends[i]). */
interface PackedStore {
  bytes: Uint8Array;
  ends: Uint32Array;
  /** Scripts written: the length of the latest version. */
  count: number;
}

/** Room added when a store grows, as a share of what it holds: copies stay rare and spare room small. */
const GROWTH = 1.25;

/**
 * Scripts packed in one buffer. A version is immutable: `concat` gives a longer one, sharing the buffer when
 * it extends the latest version (the usual case: a list only grows), so `grownFrom` tells a version that holds
 * another's very scripts first. Scripts are handed out as views of the buffer, made when read.
 */
export class PackedScripts implements ScriptList {
  private constructor(
    private readonly store: PackedStore,
    readonly length: number,
  ) {}

  static of(scripts: Iterable<Uint8Array>): PackedScripts {
    return new PackedScripts({ bytes: new Uint8Array(0), ends: new Uint32Array(0), count: 0 }, 0).concat(scripts);
  }

  /** This list followed by `scripts`. */
  concat(scripts: Iterable<Uint8Array>): PackedScripts {
    const added = [...scripts];
    if (added.length === 0) return this;
    // An older version extended: its own store, not a fork of the shared one.
    const store = this.store.count === this.length ? this.store : copyStore(this.store, this.length);
    const size = added.reduce((sum, script) => sum + script.length, 0);
    reserve(store, store.count + added.length, endOf(store, store.count) + size);
    let end = endOf(store, store.count);
    for (const script of added) {
      store.bytes.set(script, end);
      store.ends[store.count++] = end += script.length;
    }
    return new PackedScripts(store, store.count);
  }

  /** Script `i` (a view of the shared buffer). */
  at(i: number): Uint8Array {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) throw new RangeError(`No script ${i} in a list of ${this.length}`);
    return this.store.bytes.subarray(endOf(this.store, i), this.store.ends[i]!);
  }

  *[Symbol.iterator](): Iterator<Uint8Array> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }

  map<T>(fn: (script: Uint8Array, index: number) => T): T[] {
    const out = new Array<T>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = fn(this.at(i), i);
    return out;
  }

  /** The scripts from `start` on, as views. */
  from(start: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = Math.max(0, start); i < this.length; i++) out.push(this.at(i));
    return out;
  }

  /** The buffer itself, to read in place: script i is bytes[ends[i - 1] (0 for the first), ends[i]), for i below `length`. */
  packed(): { readonly bytes: Uint8Array; readonly ends: Uint32Array } {
    return { bytes: this.store.bytes, ends: this.store.ends };
  }

  /** Whether this version begins with `earlier`'s very scripts: `earlier` is this list before it grew. */
  grownFrom(earlier: ScriptList): boolean {
    return earlier instanceof PackedScripts && earlier.store === this.store && earlier.length <= this.length;
  }
}

const endOf = (store: PackedStore, count: number): number => (count === 0 ? 0 : store.ends[count - 1]!);

function copyStore(store: PackedStore, count: number): PackedStore {
  const end = endOf(store, count);
  return { bytes: store.bytes.slice(0, end), ends: store.ends.slice(0, count), count };
}

function reserve(store: PackedStore, scripts: number, bytes: number): void {
  if (store.ends.length < scripts) {
    const ends = new Uint32Array(Math.max(scripts, Math.ceil(store.ends.length * GROWTH)));
    ends.set(store.ends.subarray(0, store.count));
    store.ends = ends;
  }
  if (store.bytes.length < bytes) {
    const grown = new Uint8Array(Math.max(bytes, Math.ceil(store.bytes.length * GROWTH)));
    grown.set(store.bytes.subarray(0, endOf(store, store.count)));
    store.bytes = grown;
  }
}
