/**
 * How many watched scripts have each lookup key (`scriptLookupKey`: 30 bits, never negative), in two typed
 * arrays with open addressing: 8 bytes a slot, at most 5/8 of the slots used. A `Map<number, number>` of the
 * same keys cost about 30 bytes an entry, its table doubled at once: at 10,000 wallets of 40 scripts, a
 * megabyte of every 3,000 wallets.
 */
const MIN_CAPACITY = 64;

export class KeyCounts {
  /** key + 1 per slot; 0: empty. */
  private keys = new Int32Array(MIN_CAPACITY);
  private counts = new Int32Array(MIN_CAPACITY);
  private shift = 32 - Math.log2(MIN_CAPACITY);
  /** Distinct keys held. */
  size = 0;

  has(key: number): boolean {
    return this.slotOf(key) >= 0;
  }

  add(key: number): void {
    const slot = this.slotOf(key);
    if (slot >= 0) {
      this.counts[slot]!++;
      return;
    }
    if ((this.size + 1) * 8 > this.keys.length * 5) this.resize(this.keys.length * 2);
    this.place(key + 1, 1);
    this.size++;
  }

  /** One script of `key` fewer; the key goes with its last script. */
  remove(key: number): void {
    let hole = this.slotOf(key);
    if (hole < 0) return;
    if (--this.counts[hole]! > 0) return;
    this.size--;
    // Linear probing without tombstones: entries after the hole that may sit in it move back into it.
    const mask = this.keys.length - 1;
    for (let next = (hole + 1) & mask; this.keys[next] !== 0; next = (next + 1) & mask) {
      const home = this.home(this.keys[next]!);
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      this.keys[hole] = this.keys[next]!;
      this.counts[hole] = this.counts[next]!;
      hole = next;
    }
    this.keys[hole] = 0;
    this.counts[hole] = 0;
  }

  private home(stored: number): number {
    return Math.imul(stored, 0x9e3779b1) >>> this.shift;
  }

  private slotOf(key: number): number {
    const stored = key + 1;
    const mask = this.keys.length - 1;
    for (let slot = this.home(stored); ; slot = (slot + 1) & mask) {
      const at = this.keys[slot]!;
      if (at === stored) return slot;
      if (at === 0) return -1;
    }
  }

  private place(stored: number, count: number): void {
    const mask = this.keys.length - 1;
    let slot = this.home(stored);
    while (this.keys[slot] !== 0) slot = (slot + 1) & mask;
    this.keys[slot] = stored;
    this.counts[slot] = count;
  }

  private resize(capacity: number): void {
    const { keys, counts } = this;
    this.keys = new Int32Array(capacity);
    this.counts = new Int32Array(capacity);
    this.shift = 32 - Math.log2(capacity);
    for (let i = 0; i < keys.length; i++) if (keys[i] !== 0) this.place(keys[i]!, counts[i]!);
  }
}
