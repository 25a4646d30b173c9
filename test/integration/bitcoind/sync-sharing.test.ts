/**
 * Three `wcs serve` processes on one PostgreSQL schema and one real Bitcoin Core, with `sync_sharing` on: every
 * wallet is followed by exactly one instance (the lease rows name the process), every instance follows a share,
 * payments reach every wallet. The instance following a wallet is killed (-9); another takes its wallets over once
 * its leases expire, and the next payment shows, each transaction listed once and announced once.
 * Only instances that follow wallets long-poll the node for new blocks. Reads share the sync's record of the wallets
 * their instance follows.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { Chain, Client, describeWithBitcoind, fixtureWallets, serviceEnv, waitFor } from './chain-world.js';
import { TEST_ADMIN_PASSWORD, basicAuth, request } from '../../support/server.js';
import { createSharedStore, killHard, killStartedInstances, postgresClient, startInstance, stopInstance, type Instance, type SharedStore } from '../../support/instances.js';

const ALIASES = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3', 'w_shwsh2of3', 'w_wsh2of2'] as const;
const PAID = 1_000_000;
/** Seconds a silent instance keeps its wallets. */
const LEASE_SECONDS = '3';

describeWithBitcoind('wallets followed by a share of the instances (sync_sharing on)', () => {
  let chain: Chain;
  let store: SharedStore;
  let db: pg.Client;
  let instances: Instance[] = [];
  let client: Client;

  beforeAll(async () => {
    chain = await Chain.start();
    store = await createSharedStore('postgres');
    // Reads share the sync's record of every wallet with a transaction (wallet_states_shared_from 1) on the instance
    // following it, and load their own elsewhere: the readers below see both, and the takeover in between.
    const env = { ...serviceEnv(chain.node, '1'), SERVICE_SYNC_SHARING: 'on', SERVICE_SYNC_LEASE: LEASE_SECONDS, SERVICE_WALLET_STATES_SHARED_FROM: '1' };
    instances = [await startInstance(store, 'a', env)];
    instances.push(...(await Promise.all([startInstance(store, 'b', env), startInstance(store, 'c', env)])));
    db = await postgresClient(store);
    const token = await request(`${instances[0]!.api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) }, json: { jwt_token_description: 'sharing', jwt_token_life: '1 hours' } });
    expect(token.status, token.text).toBe(201);
    client = new Client(instances[0]!.api, token.body.jwt_token);
  }, 90_000);

  afterAll(async () => {
    await db?.end();
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await store?.dispose();
    await chain?.stop();
  });
  afterAll(() => killStartedInstances());

  /** Wallet alias to the process id of the instance holding its lease (unexpired or not). */
  async function followers(): Promise<Map<string, number>> {
    const rows = (await db.query<{ alias: string; instance_id: string }>('select w.alias, l.instance_id from wallet_follow_leases l join wallets w on w.id = l.wallet_id')).rows;
    return new Map(rows.map((r) => [r.alias, Number(r.instance_id.split(':').at(-2))]));
  }

  const pidOf = (instance: Instance) => instance.child.pid!;
  const live = () => instances.filter((i) => i.child.exitCode === null && i.child.signalCode === null);

  /** Active `waitfornewblock` calls on the node: one per instance that watches for new blocks. */
  async function tipPolls(): Promise<number> {
    const info = await chain.rpc.call('getrpcinfo');
    return info.active_commands.filter((c: { method: string }) => c.method === 'waitfornewblock').length;
  }

  async function expectEachTransactionOnce(reader: Client, alias: string, txids: string[]): Promise<void> {
    const details = await reader.details(alias);
    expect(details.txlist.map((t: { txid: string }) => t.txid).sort()).toEqual([...txids].sort());
    const events = (await db.query<{ type: string; data: string }>("select e.type, e.data from events e join wallets w on w.id = e.wallet_id where w.alias = $1 and e.type in ('transaction.received', 'transaction.confirmed')", [alias])).rows;
    for (const txid of txids) {
      const of = (type: string) => events.filter((e) => e.type === type && JSON.parse(e.data).txid === txid && (type !== 'transaction.confirmed' || JSON.parse(e.data).confirmations === 1));
      expect(of('transaction.received'), `${alias} ${txid} received`).toHaveLength(1);
      expect(of('transaction.confirmed'), `${alias} ${txid} confirmed`).toHaveLength(1);
    }
  }

  it('no instance long-polls the node while none follows a wallet', async () => {
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // three sync passes of every instance
    expect(await tipPolls()).toBe(0);
    expect((await db.query('select count(*)::int as n from sync_instances')).rows[0].n).toBe(3);
  });

  it('shares the wallets: each followed by exactly one instance, every instance following some, payments shown', async () => {
    const birthday = await chain.height();
    for (const alias of ALIASES) {
      const wallet = fixtureWallets[alias]!;
      await client.importWallet(alias, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday });
    }
    const pids = instances.map(pidOf);
    const shares = await waitFor(async () => {
      const held = await followers();
      const counts = pids.map((pid) => [...held.values()].filter((p) => p === pid).length);
      return held.size === ALIASES.length && [...held.values()].every((pid) => pids.includes(pid)) && counts.every((n) => n > 0) && counts;
    }, 'every wallet followed, by all three instances');
    expect(shares.reduce((a, b) => a + b, 0)).toBe(ALIASES.length);
    for (const alias of ALIASES) await waitFor(async () => (await client.details(alias)).scan === null, `${alias} at the tip`);
    await waitFor(async () => (await tipPolls()) === 3, 'each following instance long-polling the node');

    const payments = [];
    for (const alias of ALIASES) payments.push({ address: await client.nextAddress(alias), sat: PAID });
    await chain.pay(payments);
    await chain.mine(1);
    // Read through another instance than the one the wallets were created on.
    const reader = client.on(instances[1]!.api);
    for (const alias of ALIASES) await reader.waitForBalance(alias, { total: PAID, confirmed: PAID });
  }, 120_000);

  it('takes the wallets of a killed instance over: the next payment shows, each transaction once', async () => {
    const alias = 'w_wsh2of3';
    // Settled first: each holds no more than its share (3 of 7), so no lease is being handed on when one dies.
    await waitFor(async () => {
      const held = [...(await followers()).values()];
      return held.length === ALIASES.length && instances.every((i) => held.filter((pid) => pid === pidOf(i)).length <= 3);
    }, 'each instance holding at most 3 of the 7 wallets');
    const victimPid = (await followers()).get(alias)!;
    const victim = instances.find((i) => pidOf(i) === victimPid)!;
    const theirs = [...(await followers())].filter(([, pid]) => pid === victimPid).map(([a]) => a);
    await killHard(victim);
    const survivor = client.on(live()[0]!.api);

    const address = await survivor.nextAddress(alias);
    const txid = await chain.pay([{ address, sat: PAID }]);
    await chain.mine(1);
    await survivor.waitForBalance(alias, { total: 2 * PAID, confirmed: 2 * PAID }, 60_000);

    const survivors = live().map(pidOf);
    expect(survivors).toContain((await followers()).get(alias));
    await waitFor(async () => {
      const held = await followers();
      return theirs.every((other) => survivors.includes(held.get(other)!));
    }, `the killed instance's wallets (${theirs.join(', ')}) followed by the survivors`);
    const first = (await survivor.details(alias)).txlist.map((t: { txid: string }) => t.txid).filter((t: string) => t !== txid);
    expect(first).toHaveLength(1);
    await expectEachTransactionOnce(survivor, alias, [first[0], txid]);
    for (const other of ALIASES) await survivor.waitForBalance(other, { total: other === alias ? 2 * PAID : PAID, confirmed: other === alias ? 2 * PAID : PAID });
    await waitFor(async () => (await tipPolls()) === 2, 'the two survivors long-polling the node');
  }, 120_000);

  it('a clean stop hands the wallets over at once, and a new instance takes a share', async () => {
    const [leaving, staying] = live();
    await stopInstance(leaving!);
    const held = await followers();
    expect([...held.values()].every((pid) => pid !== pidOf(leaving!))).toBe(true);
    await waitFor(async () => (await followers()).size === ALIASES.length && [...(await followers()).values()].every((pid) => pid === pidOf(staying!)), 'the one left following every wallet');
    // Reads share the sync's record of every wallet with a transaction (wallet_states_shared_from 1) on the instance
    // following it, and load their own elsewhere: the readers below see both, and the takeover in between.
    const env = { ...serviceEnv(chain.node, '1'), SERVICE_SYNC_SHARING: 'on', SERVICE_SYNC_LEASE: LEASE_SECONDS, SERVICE_WALLET_STATES_SHARED_FROM: '1' };
    const joined = await startInstance(store, 'd', env);
    instances.push(joined);
    await waitFor(async () => {
      const pids = [...(await followers()).values()];
      return pids.length === ALIASES.length && pids.includes(pidOf(joined)) && pids.includes(pidOf(staying!));
    }, 'the new instance taking a share');
    const onJoined = client.on(joined.api);
    const address = await onJoined.nextAddress('w_tr');
    await chain.pay([{ address, sat: PAID }]);
    await chain.mine(1);
    await onJoined.waitForBalance('w_tr', { total: 2 * PAID, confirmed: 2 * PAID });
  }, 120_000);

  it('an instance paused past its leases comes back to find its wallets taken: it writes none of them again', async () => {
    const alias = 'w_wsh2of2';
    const pausedPid = (await followers()).get(alias)!;
    const paused = live().find((i) => pidOf(i) === pausedPid)!;
    const other = client.on(live().find((i) => i !== paused)!.api);
    const before = (await other.details(alias)).txlist.map((t: { txid: string }) => t.txid);
    paused.child.kill('SIGSTOP');
    try {
      await waitFor(async () => [...(await followers()).values()].every((pid) => pid !== pausedPid), 'the others holding every wallet');
      const txid = await chain.pay([{ address: await other.nextAddress(alias), sat: PAID }]);
      await chain.mine(1);
      await other.waitForBalance(alias, { total: 2 * PAID, confirmed: 2 * PAID });
      await expectEachTransactionOnce(other, alias, [...before, txid]);
    } finally {
      paused.child.kill('SIGCONT');
    }
    // Back, it renews nothing it lost and takes a share again through claims; nothing is announced twice.
    await waitFor(async () => (await followers()).size === ALIASES.length && [...(await followers()).values()].includes(pausedPid), 'the resumed instance holding a share again');
    const txids = (await other.details(alias)).txlist.map((t: { txid: string }) => t.txid);
    expect(txids).toHaveLength(before.length + 1);
    await expectEachTransactionOnce(client.on(paused.api), alias, txids);
  }, 120_000);
});
