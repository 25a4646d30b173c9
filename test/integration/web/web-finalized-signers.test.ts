/**
 * A copy that arrives finalized (a cosigner's wallet finalized it: only the final witness is left, no
 * partial signatures): the signing page, in a real browser, says exactly which keys signed, read from
 * the final witness, and the key that never signed stays "not signed"; the psbt.signed event names the
 * same keys. Real Bitcoin Core signs and finalizes.
 */
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, newPage, signIn, visit } from '../../support/browser.js';
import { TEST_ADMIN_PASSWORD, startTestServer, type TestServer } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { Chain, Client, cosign, describeWithBitcoind, fixtureWallets, serviceEnv, type FixtureWallet } from '../bitcoind/chain-world.js';

/** Signs with Core and finalizes (`walletprocesspsbt` with `finalize`), as a cosigner's wallet does when it holds the last signature. */
async function signAndFinalize(signer: Awaited<ReturnType<Chain['signer']>>, base64: string): Promise<string> {
  const result = await signer.call<{ psbt: string; complete: boolean }>('walletprocesspsbt', { psbt: base64, sign: true, finalize: true });
  expect(result.complete).toBe(true);
  return result.psbt;
}

describeWithBitcoind('the signing page of a PSBT uploaded already finalized', () => {
  let chain: Chain;
  let server: TestServer;
  let client: Client;
  let browser: Browser;
  let web: WebClient;

  beforeAll(async () => {
    ensureWebAssets();
    chain = await Chain.start();
    server = await startTestServer({ env: { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn' } });
    client = await Client.forAdmin(server);
    browser = await launchBrowser();
    web = new WebClient(server.url);
    await web.signIn('admin', TEST_ADMIN_PASSWORD);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
    await chain?.stop();
  });

  async function fundedPsbt(alias: string, wallet: FixtureWallet): Promise<string> {
    await client.importWallet(alias, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    await chain.pay([{ address: await client.nextAddress(alias), sat: 20_000_000 }]);
    await chain.mine(1);
    await client.waitForBalance(alias, { total: 20_000_000, confirmed: 20_000_000 });
    const created = await client.createPsbt(alias, { recipients: [{ address: await chain.minerAddressOf('bech32'), amount: 5_000_000, unit: 'sat' }], fee_rate: '2' });
    return created.tx.txid;
  }

  /** The cosigner table as the browser shows it: fingerprint -> the "Signed" cell. */
  async function cosignerTable(alias: string, txid: string): Promise<Record<string, string>> {
    const { page, errors, close } = await newPage(browser);
    try {
      await signIn(page, server.url, 'admin', TEST_ADMIN_PASSWORD);
      await visit(page, `${server.url}/wallets/${alias}/psbts/${txid}`);
      const rows = await page.$$eval('[data-cosigners] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
      expect(errors).toEqual([]);
      return Object.fromEntries(rows.map((cells) => [cells[1]!, cells[2]!]));
    } finally {
      await close();
    }
  }

  it('2-of-3: the two keys whose signatures are in the final witness are signed, the third is not', async () => {
    const wallet = fixtureWallets.w_wsh2of3!;
    const [alice, bob, carol] = wallet.keys as [FixtureWallet['keys'][number], FixtureWallet['keys'][number], FixtureWallet['keys'][number]];
    const txid = await fundedPsbt('vault', wallet);
    const start = await server.running.runtime.store.events.lastSeq();
    const unsigned = await client.psbtBase64('vault', txid);
    // Bob signs and hands his copy to Carol, whose wallet signs and finalizes: only Carol's copy reaches the service.
    const bobCopy = await cosign(await chain.signer('final-bob', wallet, bob), unsigned);
    const finalized = await signAndFinalize(await chain.signer('final-carol', wallet, carol), bobCopy);

    const upload = await web.post(`/wallets/vault/psbts/${txid}/sign`, { psbt: finalized });
    expect(upload.status, upload.text).toBe(303);
    expect(upload.location).toBe(`/wallets/vault/psbts/${txid}?added=${bob.fingerprint},${carol.fingerprint}`);

    const record = await client.psbtRecord('vault', txid);
    expect(record.inputs.every((i: any) => i.final_scriptwitness && !i.partial_signatures)).toBe(true);
    expect(record.sigs_count).toBe(2);
    const table = await cosignerTable('vault', txid);
    expect(table).toEqual({ [alice.fingerprint]: 'not signed', [bob.fingerprint]: 'signed', [carol.fingerprint]: 'signed' });

    const events = await server.running.runtime.store.events.listAfter(start, undefined, 100);
    const signed = events.filter((e) => e.type === 'psbt.signed').map((e) => JSON.parse(e.dataText));
    expect(signed).toHaveLength(1);
    expect(signed[0].signed_by).toEqual([bob.fingerprint, carol.fingerprint].sort());
  }, 120_000);

  it('single key: the one key is signed once its wallet finalized the copy', async () => {
    const wallet = fixtureWallets.w_wpkh!;
    const key = wallet.keys[0]!;
    const txid = await fundedPsbt('solo', wallet);
    const finalized = await signAndFinalize(await chain.signer('final-solo', wallet, key), await client.psbtBase64('solo', txid));
    const upload = await web.post(`/wallets/solo/psbts/${txid}/sign`, { psbt: finalized });
    expect(upload.location).toBe(`/wallets/solo/psbts/${txid}?added=${key.fingerprint}`);
    expect(await cosignerTable('solo', txid)).toEqual({ [key.fingerprint]: 'signed' });
  }, 120_000);
});
