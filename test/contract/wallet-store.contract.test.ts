/** The wallet repository behaves the same on SQLite and PostgreSQL. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreConflictError, type Store, type StoredWallet, type WalletChainChange, type WalletTransactionRow } from '../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const HASH = (c: string) => c.repeat(64);

function wallet(overrides: Partial<StoredWallet> = {}): StoredWallet {
  return {
    id: 'w-1',
    alias: 'hot',
    name: 'Hot',
    description: 'spending',
    ownerName: 'alice',
    network: 'regtest',
    receiveDescriptor: 'wpkh(tpub/0/*)#aaaaaaaa',
    changeDescriptor: 'wpkh(tpub/1/*)#bbbbbbbb',
    addressType: 'bech32',
    sigsRequired: 1,
    sigsTotal: 1,
    keys: [{ fingerprint: '654cf308', derivation: 'm/84h/1h/0h', xpub: 'tpubX', label: 'laptop' }],
    gapLimit: 20,
    birthday: 100,
    createdAt: 1_700_000_000_000,
    revision: 0,
    tip: null,
    ...overrides,
  };
}

const tx = (txid: string, overrides: Partial<WalletTransactionRow> = {}): WalletTransactionRow => ({
  walletId: 'w-1',
  txid,
  hex: '0200',
  status: 'mempool',
  blockHeight: null,
  blockHash: null,
  blockTime: null,
  firstSeen: 1_700_000_000,
  replaceable: true,
  ...overrides,
});

function change(overrides: Partial<WalletChainChange> = {}): WalletChainChange {
  return {
    walletId: 'w-1',
    addressesAdded: [],
    transactionsAdded: [],
    transactionsUpdated: [],
    transactionsRemoved: [],
    sync: { walletId: 'w-1', tip: null, lastUsedReceive: -1, lastUsedChange: -1 },
    ...overrides,
  };
}

describe.each(STORE_KINDS)('wallet store conformance: $kind', ({ open }) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
    for (const name of ['alice', 'bob']) await store.users.insert({ name, passwordHash: 'x', isAdmin: false, createdAt: 1 });
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('reads one page of the wallets a user may reach with the total, oldest first then by alias, within a list of ids', async () => {
    await store.wallets.insert(wallet({ id: 'w-1', alias: 'b', createdAt: 5 }), [{ userName: 'bob', access: 'read' }]);
    await store.wallets.insert(wallet({ id: 'w-2', alias: 'a', createdAt: 5 }), []);
    await store.wallets.insert(wallet({ id: 'w-3', alias: 'c', createdAt: 1, ownerName: 'bob' }), []);
    await store.wallets.insert(wallet({ id: 'w-4', alias: 'd', createdAt: 9 }), [{ userName: 'bob', access: 'spend' }]);
    const aliases = async (user: string, page: Parameters<typeof store.wallets.listAccessiblePage>[1]) => {
      const { wallets, total } = await store.wallets.listAccessiblePage(user, page);
      return { aliases: wallets.map((w) => w.alias), total };
    };
    expect(await aliases('alice', {})).toEqual({ aliases: ['a', 'b', 'd'], total: 3 });
    expect(await aliases('bob', {})).toEqual({ aliases: ['c', 'b', 'd'], total: 3 });
    expect(await aliases('bob', { limit: 1, offset: 1 })).toEqual({ aliases: ['b'], total: 3 });
    expect(await aliases('bob', { offset: 2 })).toEqual({ aliases: ['d'], total: 3 });
    expect(await aliases('bob', { limit: 2, offset: 5 })).toEqual({ aliases: [], total: 3 });
    expect(await aliases('bob', { limit: 0 })).toEqual({ aliases: [], total: 3 });
    expect(await aliases('bob', { walletIds: ['w-4', 'w-2'] })).toEqual({ aliases: ['d'], total: 1 });
    expect(await aliases('bob', { walletIds: [] })).toEqual({ aliases: [], total: 0 });
    expect((await store.wallets.listAccessiblePage('alice', { limit: 1 })).wallets[0]).toEqual(wallet({ id: 'w-2', alias: 'a', createdAt: 5 }));
    // Handed to bob, with whom it was shared: his, counted once.
    await store.wallets.setOwner('w-1', 'bob');
    expect(await aliases('bob', {})).toEqual({ aliases: ['c', 'b', 'd'], total: 3 });
    expect(await aliases('bob', { limit: 1 })).toEqual({ aliases: ['c'], total: 3 });
    expect(await aliases('alice', { limit: 1 })).toEqual({ aliases: ['a'], total: 2 });
  });

  it('lists the id, alias and name of the wallets a user may reach, in the pages\' order, and counts those they own', async () => {
    await store.wallets.insert(wallet({ id: 'w-1', alias: 'b', name: 'Bee', createdAt: 5 }), [{ userName: 'bob', access: 'read' }]);
    await store.wallets.insert(wallet({ id: 'w-2', alias: 'a', name: 'Ay', createdAt: 5 }), []);
    await store.wallets.insert(wallet({ id: 'w-3', alias: 'c', name: 'Sea', createdAt: 1, ownerName: 'bob' }), []);
    await store.wallets.insert(wallet({ id: 'w-4', alias: 'd', name: 'Dee', createdAt: 9 }), [{ userName: 'bob', access: 'spend' }]);
    expect(await store.wallets.listAccessibleNames('alice')).toEqual([
      { id: 'w-2', alias: 'a', name: 'Ay' },
      { id: 'w-1', alias: 'b', name: 'Bee' },
      { id: 'w-4', alias: 'd', name: 'Dee' },
    ]);
    expect((await store.wallets.listAccessibleNames('bob')).map((w) => w.alias)).toEqual((await store.wallets.listAccessible('bob')).map((w) => w.wallet.alias));
    expect(await store.wallets.countOwned('alice')).toBe(3);
    expect(await store.wallets.countOwned('bob')).toBe(1);
    expect(await store.wallets.countOwned('carol')).toBe(0);
  });

  it('finds a wallet of another network than the one asked, the oldest, or none', async () => {
    await store.wallets.insert(wallet(), []);
    expect(await store.wallets.findOfOtherNetwork('regtest')).toBeUndefined();
    await store.wallets.insert(wallet({ id: 'w-2', alias: 'sig', network: 'signet', createdAt: 1_700_000_000_002 }), []);
    await store.wallets.insert(wallet({ id: 'w-3', alias: 'main', network: 'mainnet', createdAt: 1_700_000_000_001 }), []);
    expect((await store.wallets.findOfOtherNetwork('regtest'))?.alias).toBe('main');
    expect((await store.wallets.findOfOtherNetwork('mainnet'))?.alias).toBe('hot');
  });

  it('inserts, finds and lists wallets with their shares; a duplicate alias is a conflict', async () => {
    await store.wallets.insert(wallet(), [{ userName: 'bob', access: 'read' }]);
    expect(await store.wallets.findByAlias('hot')).toEqual(wallet());
    expect(await store.wallets.findById('w-1')).toEqual(wallet());
    await expect(store.wallets.insert(wallet({ id: 'w-2' }), [])).rejects.toBeInstanceOf(StoreConflictError);
    await store.wallets.insert(wallet({ id: 'w-3', alias: 'cold', ownerName: 'bob', createdAt: 1_700_000_000_001 }), []);
    expect((await store.wallets.listAccessible('bob')).map((w) => [w.wallet.alias, w.access])).toEqual([['hot', 'read'], ['cold', 'owner']]);
    expect((await store.wallets.listAccessible('alice')).map((w) => w.wallet.alias)).toEqual(['hot']);
    await store.wallets.replaceShares('w-1', [{ userName: 'bob', access: 'spend' }]);
    expect(await store.wallets.shares('w-1')).toEqual([{ userName: 'bob', access: 'spend' }]);
    await store.wallets.updateDetails('w-1', { name: 'Hot 2', description: '', keys: [] });
    expect(await store.wallets.findByAlias('hot')).toMatchObject({ name: 'Hot 2', description: '', keys: [] });
  });

  it('lists every wallet\'s id and revision, oldest first then by alias; a chain write and a rescan move it, details do not', async () => {
    await store.wallets.insert(wallet({ id: 'w-2', alias: 'b', createdAt: 2 }), []);
    await store.wallets.insert(wallet({ id: 'w-1', alias: 'c', createdAt: 1 }), []);
    await store.wallets.insert(wallet({ id: 'w-3', alias: 'a', ownerName: 'bob', createdAt: 2 }), []);
    await store.transaction((repos) => repos.wallets.applyChange(change({ walletId: 'w-2', sync: { walletId: 'w-2', tip: { height: 101, hash: HASH('a') }, lastUsedReceive: -1, lastUsedChange: -1 } }), 0));
    await store.transaction((repos) => repos.wallets.resetChain('w-3', 0));
    await store.wallets.updateDetails('w-1', { name: 'Renamed', description: '', keys: [] });
    await store.wallets.setOwner('w-1', 'bob');
    expect(await store.wallets.listRevisions()).toEqual([{ id: 'w-1', revision: 0 }, { id: 'w-3', revision: 1 }, { id: 'w-2', revision: 1 }]);
    await store.wallets.delete('w-3');
    expect(await store.wallets.listRevisions()).toEqual([{ id: 'w-1', revision: 0 }, { id: 'w-2', revision: 1 }]);
  });

  it('applies changesets guarded by the revision and rebuilds the same rows', async () => {
    await store.wallets.insert(wallet(), []);
    const tip = { height: 101, hash: HASH('a') };
    const first = change({
      addressesAdded: [
        { walletId: 'w-1', branch: 0, index: 0, script: '0014aa' },
        { walletId: 'w-1', branch: 1, index: 0, script: '0014bb' },
      ],
      transactionsAdded: [tx(HASH('1')), tx(HASH('2'))],
      sync: { walletId: 'w-1', tip, lastUsedReceive: 0, lastUsedChange: -1 },
    });
    const revision = await store.transaction((repos) => repos.wallets.applyChange(first, 0));
    expect(revision).toBe(1);
    await expect(store.transaction((repos) => repos.wallets.applyChange(first, 0))).rejects.toBeInstanceOf(StoreConflictError);
    const confirmed = tx(HASH('1'), { status: 'confirmed', blockHeight: 101, blockHash: HASH('a'), blockTime: 1_700_000_100, replaceable: null });
    await store.transaction((repos) => repos.wallets.applyChange(change({ transactionsUpdated: [confirmed], transactionsRemoved: [HASH('2')], sync: first.sync }), 1));
    const rows = await store.wallets.chainRows('w-1');
    expect(rows).toEqual({
      revision: 2,
      sync: { walletId: 'w-1', tip, lastUsedReceive: 0, lastUsedChange: -1 },
      lastRevealedReceive: -1,
      addresses: first.addressesAdded,
      transactions: [confirmed],
    });
    expect(await store.wallets.revision('w-1')).toBe(2);
  });

  it('reads the rows written after a revision, and asks for a full read after a rescan or a new gap limit', async () => {
    await store.wallets.insert(wallet(), []);
    const tip = (height: number) => ({ walletId: 'w-1', tip: { height, hash: HASH(height.toString(16)) }, lastUsedReceive: 0, lastUsedChange: -1 });
    const a0 = { walletId: 'w-1', branch: 0 as const, index: 0, script: '0014aa' };
    const a1 = { walletId: 'w-1', branch: 0 as const, index: 1, script: '0014ab' };
    await store.transaction((repos) => repos.wallets.applyChange(change({ addressesAdded: [a0], transactionsAdded: [tx(HASH('1')), tx(HASH('2')), tx(HASH('3'))], sync: tip(1) }), 0));
    const confirmed = tx(HASH('1'), { status: 'confirmed', blockHeight: 2, blockHash: HASH('2'), blockTime: 1_700_000_100, replaceable: null });
    await store.transaction((repos) => repos.wallets.applyChange(change({ addressesAdded: [a1], transactionsUpdated: [confirmed], transactionsRemoved: [HASH('2')], sync: tip(2) }), 1));
    // Removed, then written again: present, not removed.
    await store.transaction((repos) => repos.wallets.applyChange(change({ transactionsRemoved: [HASH('3')], sync: tip(3) }), 2));
    await store.transaction((repos) => repos.wallets.applyChange(change({ transactionsAdded: [tx(HASH('3'))], sync: tip(4) }), 3));

    expect(await store.wallets.chainChangesSince('w-1', 1)).toEqual({
      revision: 4,
      sync: tip(4),
      lastRevealedReceive: -1,
      addresses: [a1],
      transactions: [confirmed, tx(HASH('3'))],
      removedTransactions: [HASH('2')],
    });
    expect(await store.wallets.chainChangesSince('w-1', 3)).toMatchObject({ revision: 4, addresses: [], transactions: [tx(HASH('3'))], removedTransactions: [] });
    expect(await store.wallets.chainChangesSince('w-1', 4)).toMatchObject({ revision: 4, addresses: [], transactions: [], removedTransactions: [] });
    expect(await store.wallets.chainChangesSince('missing', 0)).toBeUndefined();

    expect(await store.wallets.updateGapLimit('w-1', 30)).toBe(true);
    expect(await store.wallets.chainChangesSince('w-1', 4)).toBe('reload');
    expect(await store.wallets.chainChangesSince('w-1', 5)).toMatchObject({ revision: 5, transactions: [] });
    const rescanned = await store.transaction((repos) => repos.wallets.resetChain('w-1', 0));
    expect(await store.wallets.chainChangesSince('w-1', 5)).toBe('reload');
    expect(await store.wallets.chainChangesSince('w-1', rescanned)).toMatchObject({ revision: rescanned, addresses: [], transactions: [], removedTransactions: [] });
  });

  it('reads the chain rows in slices of one revision, each slice once the one before is taken, and says when the wallet changed between them', async () => {
    await store.wallets.insert(wallet(), []);
    const a0 = { walletId: 'w-1', branch: 0 as const, index: 0, script: '0014aa' };
    const sync = { walletId: 'w-1', tip: { height: 9, hash: HASH('9') }, lastUsedReceive: 0, lastUsedChange: -1 };
    // Seven rows, two of them in one block: 3 + 3 + 1 in slices of 3.
    const rows = ['7', '1', '5', '3', '2', '6', '4'].map((c) => tx(HASH(c), c === '1' || c === '2' ? { status: 'confirmed', blockHeight: 5, blockHash: HASH('b'), blockTime: 1_700_000_100, replaceable: null } : {}));
    await store.transaction((repos) => repos.wallets.applyChange(change({ addressesAdded: [a0], transactionsAdded: rows, sync }), 0));
    const whole = (await store.wallets.chainRows('w-1'))!;

    const slices: WalletTransactionRow[][] = [];
    const head = await store.wallets.chainRowsInSlices('w-1', 3, async (slice, at) => {
      expect(at.revision).toBe(1);
      slices.push(slice);
    });
    expect(head).toEqual({ revision: 1, sync, lastRevealedReceive: -1, addresses: [a0] });
    expect(slices.map((slice) => slice.length)).toEqual([3, 3, 1]);
    expect(slices.flat()).toEqual(whole.transactions); // by txid, as chainRows reads them
    expect(slices[0]![0]!.blockHash).toBe(slices[0]![1]!.blockHash);

    // A slice count that divides the rows ends on an empty read; a wallet without rows is read once.
    const exact: number[] = [];
    expect(await store.wallets.chainRowsInSlices('w-1', 7, async (slice) => void exact.push(slice.length))).toMatchObject({ revision: 1 });
    expect(exact).toEqual([7]);
    expect(await store.wallets.chainRowsInSlices('missing', 3, async () => expect.unreachable())).toBeUndefined();

    // Written between two slices: the read stops and says so, whatever was taken before is of no use.
    let taken = 0;
    const changed = await store.wallets.chainRowsInSlices('w-1', 3, async () => {
      if (taken++ === 0) await store.transaction((repos) => repos.wallets.applyChange(change({ transactionsRemoved: [HASH('7')], sync }), 1));
    });
    expect(changed).toBe('changed');
    expect(taken).toBe(1);
    // Deleted between two slices: changed too (a read in one snapshot then finds no wallet).
    taken = 0;
    expect(await store.wallets.chainRowsInSlices('w-1', 3, async () => void (taken++ === 0 && (await store.wallets.delete('w-1'))))).toBe('changed');
    expect(await store.wallets.chainRows('w-1')).toBeUndefined();
  });

  it('raises revisions in SQL: concurrent writers at one revision, one wins, and no two states share a revision', async () => {
    await store.wallets.insert(wallet(), []);
    const at = (height: number) => change({ sync: { walletId: 'w-1', tip: { height, hash: HASH(height.toString(16)) }, lastUsedReceive: -1, lastUsedChange: -1 } });
    const attempts = await Promise.allSettled([1, 2, 3, 4].map((h) => store.transaction((repos) => repos.wallets.applyChange(at(h), 0))));
    expect(attempts.filter((a) => a.status === 'fulfilled').map((a) => (a as PromiseFulfilledResult<number>).value)).toEqual([1]);
    expect(attempts.filter((a) => a.status === 'rejected').every((a) => (a as PromiseRejectedResult).reason instanceof StoreConflictError)).toBe(true);
    // A rescan and a gap limit change each move the revision on from whatever it is now.
    expect(await store.transaction((repos) => repos.wallets.resetChain('w-1', 0))).toBe(2);
    expect(await store.wallets.updateGapLimit('w-1', 30)).toBe(true);
    expect(await store.wallets.revision('w-1')).toBe(3);
    expect((await store.wallets.findById('w-1'))?.gapLimit).toBe(30);
    expect(await store.wallets.updateGapLimit('missing', 30)).toBe(false);
  });

  it('holds a revision for the transaction that checked it', async () => {
    await store.wallets.insert(wallet(), []);
    expect(await store.transaction((repos) => repos.wallets.holdRevision('w-1', 0))).toBe(true);
    expect(await store.wallets.revision('w-1')).toBe(0);
    await store.transaction((repos) => repos.wallets.applyChange(change({ sync: { walletId: 'w-1', tip: null, lastUsedReceive: -1, lastUsedChange: -1 } }), 0));
    expect(await store.transaction((repos) => repos.wallets.holdRevision('w-1', 0))).toBe(false);
    expect(await store.transaction((repos) => repos.wallets.holdRevision('missing', 0))).toBe(false);
  });

  it('reads the chain rows of one revision while changesets commit alongside', async () => {
    await store.wallets.insert(wallet(), []);
    // Each changeset adds one address and one transaction: any read that mixes two revisions shows
    // counts that differ from its revision (a transaction paying an address the read does not know).
    const writes = (async () => {
      for (let i = 0; i < 40; i++) {
        const n = i.toString(16).padStart(2, '0');
        const sync = { walletId: 'w-1', tip: null, lastUsedReceive: i, lastUsedChange: -1 };
        const added = change({ addressesAdded: [{ walletId: 'w-1', branch: 0, index: i, script: `0014${n}` }], transactionsAdded: [tx(n.repeat(32))], sync });
        await store.transaction((repos) => repos.wallets.applyChange(added, i));
      }
    })();
    const reads: { revision: number; addresses: number; transactions: number }[] = [];
    let writing = true;
    void writes.finally(() => (writing = false));
    while (writing) {
      const rows = await store.wallets.chainRows('w-1');
      reads.push({ revision: rows!.revision, addresses: rows!.addresses.length, transactions: rows!.transactions.length });
    }
    await writes;
    expect(reads.length).toBeGreaterThan(1);
    for (const read of reads) expect(read).toEqual({ revision: read.revision, addresses: read.revision, transactions: read.revision });
  });

  it('reads a batch of more transactions than one statement takes in slices, each wallet\'s rows as its own read', async () => {
    // 4,999 + 3 rows: the first slice of 5,000 ends inside the second wallet.
    for (const [id, count] of [['w-x', 4_999], ['w-y', 3]] as const) {
      await store.wallets.insert(wallet({ id, alias: id }), []);
      const transactionsAdded = Array.from({ length: count }, (_, i) => tx(`${id.at(-1) === 'x' ? 'a' : 'b'}${i.toString(16).padStart(63, '0')}`, { walletId: id, status: 'confirmed', blockHeight: 101, blockHash: HASH('e'), blockTime: 1_700_000_100, replaceable: null }));
      await store.transaction((repos) => repos.wallets.applyChange(change({ walletId: id, transactionsAdded, sync: { walletId: id, tip: { height: 101, hash: HASH('e') }, lastUsedReceive: -1, lastUsedChange: -1 } }), 0));
    }
    const both = await store.wallets.chainRowsOfMany(['w-x', 'w-y'], 10_000);
    expect(both.taken).toBe(2);
    for (const id of ['w-x', 'w-y']) expect(both.wallets.get(id)).toEqual({ wallet: await store.wallets.findById(id), rows: await store.wallets.chainRows(id) });
    expect(both.wallets.get('w-x')!.rows.transactions).toHaveLength(4_999);
    expect(both.wallets.get('w-y')!.rows.transactions).toHaveLength(3);
  });

  it('reads many wallets\' chain rows in one read, as each wallet\'s own read; a large wallet alone (or left for slices), a deleted one absent', async () => {
    // Rows (addresses + transactions): w-a 3, w-b 2, w-c 12, w-d 1.
    const sizes = { 'w-a': [2, 1], 'w-b': [1, 1], 'w-c': [6, 6], 'w-d': [1, 0] } as const;
    for (const [id, [addresses, transactions]] of Object.entries(sizes)) {
      await store.wallets.insert(wallet({ id, alias: id }), []);
      const at = (i: number) => `${id.at(-1)}${i.toString(16)}`; // w-a..w-d: hex
      const written = change({
        walletId: id,
        addressesAdded: Array.from({ length: addresses }, (_, i) => ({ walletId: id, branch: i % 2 === 0 ? (0 as const) : (1 as const), index: i, script: `0014${at(i)}` })),
        transactionsAdded: Array.from({ length: transactions }, (_, i) => tx(at(i).padEnd(64, '0'), { walletId: id, status: i === 0 ? 'confirmed' : 'mempool', blockHeight: i === 0 ? 101 : null, blockHash: i === 0 ? HASH('e') : null, blockTime: i === 0 ? 1_700_000_100 : null, replaceable: i === 0 ? null : false })),
        sync: { walletId: id, tip: { height: 101, hash: HASH('e') }, lastUsedReceive: addresses - 1, lastUsedChange: -1 },
      });
      await store.transaction((repos) => repos.wallets.applyChange(written, 0));
    }
    await store.wallets.delete('w-d');
    const alone = async (id: string) => ({ wallet: (await store.wallets.findById(id))!, rows: (await store.wallets.chainRows(id))! });

    const first = await store.wallets.chainRowsOfMany(['w-a', 'w-b', 'w-c', 'w-d'], 10);
    expect(first.taken).toBe(2);
    expect(first.wallets).toEqual(new Map([['w-a', await alone('w-a')], ['w-b', await alone('w-b')]]));
    expect(first.wallets.get('w-a')!.rows.transactions).toHaveLength(1);
    const large = await store.wallets.chainRowsOfMany(['w-c', 'w-d'], 10);
    expect(large.taken).toBe(1);
    expect(large.wallets).toEqual(new Map([['w-c', await alone('w-c')]]));
    expect(large.wallets.get('w-c')!.rows.transactions).toHaveLength(6);
    const rest = await store.wallets.chainRowsOfMany(['w-d', 'w-b'], 10);
    expect(rest).toEqual({ taken: 2, wallets: new Map([['w-b', await alone('w-b')]]) });
    expect(await store.wallets.chainRowsOfMany(['w-c'], 10)).toEqual(large);
    expect(await store.wallets.chainRowsOfMany([], 10)).toEqual({ taken: 0, wallets: new Map() });

    // Left for slices: a large wallet comes alone with its row only, alone or first; the others as without the option.
    const inSlices = await store.wallets.chainRowsOfMany(['w-c', 'w-d'], 10, { largeInSlices: true });
    expect(inSlices).toEqual({ taken: 1, wallets: new Map([['w-c', { wallet: (await alone('w-c')).wallet, rows: 'in slices' }]]) });
    expect(await store.wallets.chainRowsOfMany(['w-c'], 10, { largeInSlices: true })).toEqual(inSlices);
    expect(await store.wallets.chainRowsOfMany(['w-a', 'w-b', 'w-c', 'w-d'], 10, { largeInSlices: true })).toEqual(first);
    expect(await store.wallets.chainRowsOfMany(['w-a'], 10, { largeInSlices: true })).toEqual({ taken: 1, wallets: new Map([['w-a', await alone('w-a')]]) });
  });

  it('reads many wallets\' chain rows each at one revision while changesets commit alongside', async () => {
    for (const id of ['w-1', 'w-2']) await store.wallets.insert(wallet({ id, alias: id }), []);
    const writes = (async () => {
      for (let i = 0; i < 40; i++) {
        const id = i % 2 === 0 ? 'w-1' : 'w-2';
        const n = i.toString(16).padStart(2, '0');
        const sync = { walletId: id, tip: null, lastUsedReceive: i, lastUsedChange: -1 };
        const added = change({ walletId: id, addressesAdded: [{ walletId: id, branch: 0, index: i, script: `0014${n}` }], transactionsAdded: [tx(n.repeat(32), { walletId: id })], sync });
        await store.transaction((repos) => repos.wallets.applyChange(added, Math.floor(i / 2)));
      }
    })();
    const reads: { revision: number; addresses: number; transactions: number }[] = [];
    let writing = true;
    void writes.finally(() => (writing = false));
    while (writing) {
      const { wallets } = await store.wallets.chainRowsOfMany(['w-1', 'w-2'], 1_000);
      for (const { wallet: stored, rows } of wallets.values()) {
        expect(stored.revision).toBe(rows.revision);
        reads.push({ revision: rows.revision, addresses: rows.addresses.length, transactions: rows.transactions.length });
      }
    }
    await writes;
    expect(reads.length).toBeGreaterThan(2);
    for (const read of reads) expect(read).toEqual({ revision: read.revision, addresses: read.revision, transactions: read.revision });
  });

  it('rolls back a failed changeset with its block rows', async () => {
    await store.wallets.insert(wallet(), []);
    await expect(
      store.transaction(async (repos) => {
        await repos.wallets.recordBlocks([{ hash: HASH('c'), height: 5, prevHash: HASH('b'), time: 9 }]);
        await repos.wallets.applyChange(change({ sync: { walletId: 'w-1', tip: { height: 5, hash: HASH('c') }, lastUsedReceive: -1, lastUsedChange: -1 } }), 7);
      }),
    ).rejects.toBeInstanceOf(StoreConflictError);
    expect(await store.wallets.findBlock(HASH('c'))).toBeUndefined();
    expect((await store.wallets.findById('w-1'))?.tip).toBeNull();
  });

  it('moves many wallets\' sync rows in batched statements, each only at its expected revision', async () => {
    const ids = Array.from({ length: 1_001 }, (_, i) => `w-${i}`); // three statements' worth
    for (const [i, id] of ids.entries()) await store.wallets.insert(wallet({ id, alias: `a-${i}` }), []);
    await store.transaction((repos) => repos.wallets.applyChange(change({ walletId: 'w-7', sync: { walletId: 'w-7', tip: { height: 4, hash: HASH('4') }, lastUsedReceive: 2, lastUsedChange: -1 } }), 0));
    const sync = (walletId: string, height: number, lastUsedReceive = -1) => ({ walletId, tip: { height, hash: HASH(height.toString(16)) }, lastUsedReceive, lastUsedChange: 0 });
    const moved = await store.transaction((repos) => repos.wallets.applySyncRows(ids.map((id) => ({ sync: sync(id, 5, id === 'w-7' ? 2 : -1), expectedRevision: id === 'w-7' ? 1 : 0 }))));
    expect(moved.size).toBe(ids.length);
    expect(moved.get('w-0')).toBe(1);
    expect(moved.get('w-7')).toBe(2);
    expect(await store.wallets.findById('w-1000')).toMatchObject({ revision: 1, tip: { height: 5, hash: HASH('5') } });
    expect(await store.wallets.receiveIndexes('w-7')).toMatchObject({ lastUsed: 2 });
    // One wallet moved on meanwhile (or deleted): the whole write fails as a conflict and none of it stays.
    const stale = ids.map((id) => ({ sync: sync(id, 6), expectedRevision: id === 'w-900' ? 0 : moved.get(id)! }));
    await expect(store.transaction((repos) => repos.wallets.applySyncRows(stale))).rejects.toBeInstanceOf(StoreConflictError);
    expect(await store.wallets.findById('w-0')).toMatchObject({ revision: 1, tip: { height: 5 } });
    await store.wallets.delete('w-3');
    await expect(store.transaction((repos) => repos.wallets.applySyncRows([{ sync: sync('w-3', 6), expectedRevision: 1 }]))).rejects.toBeInstanceOf(StoreConflictError);
    expect(await store.transaction((repos) => repos.wallets.applySyncRows([]))).toEqual(new Map());
  });

  it('records block links idempotently, resets a wallet for a rescan and deletes every row', async () => {
    await store.wallets.insert(wallet(), [{ userName: 'bob', access: 'read' }]);
    const block = { hash: HASH('d'), height: 7, prevHash: HASH('e'), time: 1_700_000_000 };
    await store.wallets.recordBlocks([block]);
    await store.wallets.recordBlocks([block]);
    expect(await store.wallets.findBlock(HASH('d'))).toEqual(block);
    await store.transaction((repos) =>
      repos.wallets.applyChange(change({ addressesAdded: [{ walletId: 'w-1', branch: 0, index: 0, script: '00' }], transactionsAdded: [tx(HASH('3'))], sync: { walletId: 'w-1', tip: { height: 7, hash: HASH('d') }, lastUsedReceive: 0, lastUsedChange: 0 } }), 0),
    );
    await store.wallets.setAddressLabels('w-1', [{ address: 'bcrt1qexample', label: 'rent' }]);
    await store.wallets.setUtxoFlag('w-1', { txid: HASH('3'), vout: 1, frozen: true, label: 'cold' });
    expect(await store.wallets.addressLabels('w-1')).toEqual(new Map([['bcrt1qexample', 'rent']]));
    expect(await store.wallets.utxoFlags('w-1')).toEqual([{ txid: HASH('3'), vout: 1, frozen: true, label: 'cold' }]);

    expect(await store.wallets.resetChain('w-1', 3)).toBe(2);
    expect(await store.wallets.chainRows('w-1')).toEqual({ revision: 2, sync: { walletId: 'w-1', tip: null, lastUsedReceive: -1, lastUsedChange: -1 }, lastRevealedReceive: -1, addresses: [], transactions: [] });
    expect((await store.wallets.findById('w-1'))?.birthday).toBe(3);

    expect(await store.wallets.delete('w-1')).toBe(true);
    expect(await store.wallets.delete('w-1')).toBe(false);
    expect(await store.wallets.shares('w-1')).toEqual([]);
    expect(await store.wallets.utxoFlags('w-1')).toEqual([]);
    expect(await store.wallets.addressLabels('w-1')).toEqual(new Map());
  });

  describe('revealing receive indexes', () => {
    const used = (lastUsedReceive: number) => change({ sync: { walletId: 'w-1', tip: null, lastUsedReceive, lastUsedChange: -1 } });

    it('hands out consecutive indexes after the shown index 0 without moving the revision', async () => {
      await store.wallets.insert(wallet(), []);
      await store.wallets.insert(wallet({ id: 'w-2', alias: 'cold' }), []);
      expect(await store.wallets.receiveIndexes('w-1')).toEqual({ shown: 0, lastRevealed: -1, lastUsed: -1 });
      expect(await store.wallets.revealNextReceive('w-1')).toEqual({ index: 1 });
      expect(await store.wallets.revealNextReceive('w-1')).toEqual({ index: 2 });
      expect(await store.wallets.revealNextReceive('w-1')).toEqual({ index: 3 });
      // The shown index stays where it was while it is unused.
      expect(await store.wallets.receiveIndexes('w-1')).toEqual({ shown: 0, lastRevealed: 3, lastUsed: -1 });
      expect(await store.wallets.receiveIndexes('missing')).toBeUndefined();
      expect(await store.wallets.revealedReceiveIndexes()).toEqual(new Map([['w-1', 3]])); // w-2 revealed none: absent
      expect((await store.wallets.chainRows('w-1'))?.lastRevealedReceive).toBe(3);
      expect(await store.wallets.revision('w-1')).toBe(0);
      // The sync's changeset still applies at the revision it read before the reveals.
      expect(await store.transaction((repos) => repos.wallets.applyChange(used(-1), 0))).toBe(1);
      expect(await store.wallets.revealNextReceive('missing')).toBe('not_found');
    });

    it('continues after the last index used on chain, and a sync write never lowers what was revealed', async () => {
      await store.wallets.insert(wallet(), []);
      await store.transaction((repos) => repos.wallets.applyChange(used(30), 0));
      expect((await store.wallets.receiveIndexes('w-1'))?.shown).toBe(31);
      expect(await store.wallets.revealNextReceive('w-1')).toEqual({ index: 32 });
      // The chain shows a use below the revealed index: revealing goes on from 32, 31 stays shown.
      await store.transaction((repos) => repos.wallets.applyChange(used(25), 1));
      expect(await store.wallets.revealNextReceive('w-1')).toEqual({ index: 33 });
      expect(await store.wallets.receiveIndexes('w-1')).toEqual({ shown: 31, lastRevealed: 33, lastUsed: 25 });
      // A rescan forgets the chain rows but not the addresses handed out nor the one shown; until the
      // scan finds the used ones again, 34 is past the gap limit of 20 after "none used".
      await store.wallets.resetChain('w-1', 0);
      expect(await store.wallets.revealNextReceive('w-1')).toBe('gap_limit_reached');
      expect(await store.wallets.receiveIndexes('w-1')).toEqual({ shown: 31, lastRevealed: 33, lastUsed: -1 });
    });

    it('never reveals more than the gap limit past the last used index', async () => {
      await store.wallets.insert(wallet(), []);
      const revealed = [];
      for (let i = 0; i < 20; i++) revealed.push(await store.wallets.revealNextReceive('w-1'));
      // Index 0 is shown: 1..19 go out, twenty unused addresses in all.
      expect(revealed.slice(0, 19)).toEqual(Array.from({ length: 19 }, (_, i) => ({ index: i + 1 })));
      expect(revealed[19]).toBe('gap_limit_reached');
      // A payment to index 4 moves the window up to 24, and the shown address past every one handed out.
      await store.transaction((repos) => repos.wallets.applyChange(used(4), 0));
      expect((await store.wallets.receiveIndexes('w-1'))?.shown).toBe(20);
      expect(await store.wallets.revealNextReceive('w-1')).toEqual({ index: 21 });
      expect(await store.wallets.receiveIndexes('w-1')).toEqual({ shown: 20, lastRevealed: 21, lastUsed: 4 });
    });

    it('gives concurrent callers distinct indexes', async () => {
      await store.wallets.insert(wallet(), []);
      await store.transaction((repos) => repos.wallets.applyChange(used(9), 0));
      // On PostgreSQL these run on several pooled connections at once; one in a transaction alongside.
      const inTransaction = store.transaction((repos) => repos.wallets.revealNextReceive('w-1'));
      const answers = await Promise.all([inTransaction, ...Array.from({ length: 40 }, () => store.wallets.revealNextReceive('w-1'))]);
      const indexes = answers.flatMap((a) => (typeof a === 'object' ? [a.index] : []));
      // Used up to 9 with a gap limit of 20, 10 shown: exactly 11..29 are handed out, each once; the rest are refused.
      expect(indexes.sort((a, b) => a - b)).toEqual(Array.from({ length: 19 }, (_, i) => 11 + i));
      expect(answers.filter((a) => a === 'gap_limit_reached')).toHaveLength(22);
      expect((await store.wallets.receiveIndexes('w-1'))?.shown).toBe(10);
      expect(await store.wallets.revision('w-1')).toBe(1);
    });
  });
});
