/**
 * The moment of broadcast in a real browser, with a node that takes 4 s to answer `sendrawtransaction`
 * (a JSON-RPC proxy on loopback in front of a real Bitcoin Core: the node has the transaction at once,
 * its answer comes late, so the sync sees the transaction while the broadcast form still waits). The
 * person who broadcast and a cosigner with the same PSBT open in another browser both end on "Sent in
 * transaction <txid>", then see its confirmation arrive.
 */
import { createServer, type Server } from 'node:http';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clickAndWait, launchBrowser, newPage, signIn, visit } from '../../support/browser.js';
import { TEST_ADMIN_PASSWORD, startTestServer, type TestServer } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { Chain, Client, cosign, describeWithBitcoind, fixtureWallets, serviceEnv } from '../bitcoind/chain-world.js';

const SLOW_BROADCAST_MS = 4000;
const wallet = fixtureWallets.w_wsh2of3!;

/** Forwards JSON-RPC to the node; a `sendrawtransaction` is forwarded at once and answered after `delayMs`. */
async function slowBroadcastProxy(target: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      try {
        const answer = await fetch(`${target}${req.url ?? '/'}`, {
          method: req.method ?? 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) },
          ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
        });
        const text = Buffer.from(await answer.arrayBuffer());
        if (body.includes('"sendrawtransaction"')) await new Promise((resolve) => setTimeout(resolve, delayMs));
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describeWithBitcoind('the moment of broadcast in a browser, with a node slow to accept the transaction', () => {
  let chain: Chain;
  let proxy: Awaited<ReturnType<typeof slowBroadcastProxy>>;
  let server: TestServer;
  let client: Client;
  let browser: Browser;

  beforeAll(async () => {
    ensureWebAssets();
    chain = await Chain.start();
    proxy = await slowBroadcastProxy(chain.node.url, SLOW_BROADCAST_MS);
    server = await startTestServer({ env: { ...serviceEnv(chain.node), SERVICE_BITCOIND_URL: proxy.url, SERVICE_LOG_LEVEL: 'warn' } });
    client = await Client.forAdmin(server);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
    await proxy?.close();
    await chain?.stop();
  });

  it('ends the broadcaster\'s page and a cosigner\'s open page on "Sent in transaction <txid>", then shows its confirmation', async () => {
    await client.importWallet('vault', { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    await chain.pay([{ address: await client.nextAddress('vault'), sat: 50_000_000 }]);
    await chain.mine(1);
    await client.waitForBalance('vault', { total: 50_000_000, confirmed: 50_000_000 });
    const created = await client.createPsbt('vault', { recipients: [{ address: await chain.minerAddressOf('bech32'), amount: 10_000_000, unit: 'sat' }], fee_rate: '2' });
    const txid: string = created.tx.txid;
    const signers = await Promise.all(wallet.keys.slice(1).map((key) => chain.signer(`slow-${key.key}`, wallet, key)));
    const unsigned = await client.psbtBase64('vault', txid);
    const [bob, carol] = await Promise.all(signers.map((signer) => cosign(signer, unsigned)));

    // The upload form says what each upload did (over HTTP: no browser needed for this part).
    const web = new WebClient(server.url);
    await web.signIn('admin', TEST_ADMIN_PASSWORD);
    const signPath = `/wallets/vault/psbts/${txid}/sign`;
    const first = await web.post(signPath, { psbt: bob! });
    expect(first.status).toBe(303);
    expect(first.location).toBe(`/wallets/vault/psbts/${txid}?added=${wallet.keys[1]!.fingerprint}`);
    expect((await web.get(first.location!)).text).toContain(`Added the signature of ${wallet.keys[1]!.fingerprint}.`);
    const again = await web.post(signPath, { psbt: bob! });
    expect(again.location).toBe(`/wallets/vault/psbts/${txid}?added=none`);
    expect((await web.get(again.location!)).text).toContain('The upload added no signature');
    const refused = await web.post(signPath, { psbt: 'cHNidP8BAAoCAAAAAAAAAAAAAAA=' });
    expect(refused.status).toBe(400);
    const flash = refused.text.indexOf('class="flash error"');
    expect(flash).toBeGreaterThan(0);
    expect(flash).toBeLessThan(refused.text.indexOf('<h1>')); // at the top, where the page opens
    expect(refused.text).toContain('id="signed-error"'); // and next to the field
    const second = await web.post(signPath, { psbt: carol! });
    expect(second.location).toBe(`/wallets/vault/psbts/${txid}?added=${wallet.keys[2]!.fingerprint}`);

    const broadcaster = await newPage(browser);
    const cosigner = await newPage(browser);
    try {
      const url = `${server.url}/wallets/vault/psbts/${txid}`;
      for (const { page } of [broadcaster, cosigner]) {
        await signIn(page, server.url, 'admin', TEST_ADMIN_PASSWORD);
        await visit(page, url);
        expect(await page.$eval('[data-signatures-needed]', (e) => e.textContent)).toContain('Signed enough to broadcast');
      }
      const rows = await cosigner.page.$$eval('[data-cosigners] tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
      expect(rows.filter((r) => r.includes('not signed'))).toHaveLength(1); // the key that did not sign

      const started = Date.now();
      await clickAndWait(broadcaster.page, 'form[action$="/broadcast"] button');
      expect(Date.now() - started).toBeGreaterThanOrEqual(SLOW_BROADCAST_MS); // the answer really was slow
      const mempool = await chain.rpc.call<string[]>('getrawmempool');
      expect(mempool).toHaveLength(1);
      const sent = mempool[0]!;

      for (const { page } of [broadcaster, cosigner]) {
        await page.waitForSelector(`[data-sent-txid="${sent}"]`, { timeout: 30_000 });
        const line = await page.$eval('[data-psbt-state]', (e) => e.textContent ?? '');
        expect(line).toContain(`Sent in transaction ${sent}`);
        expect(await page.$eval('[data-sent-txid] a', (a) => (a as HTMLAnchorElement).getAttribute('href'))).toBe(`/wallets/vault?view=transactions#tx-${sent}`);
        expect(await page.$('form[action$="/broadcast"]')).toBeNull();
        expect(await page.content()).not.toContain('Not found');
      }
      // The signatures as collected stay readable: the key that never signed is still "not signed".
      const after = await cosigner.page.$$eval('[data-cosigners] tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
      expect(after.filter((r) => r.includes('not signed'))).toHaveLength(1);

      // The change of the unconfirmed payment is unconfirmed on the wallet page (the API counts it as Core does).
      const change = 50_000_000 - 10_000_000 - Math.round(created.fee * 1e8);
      expect((await client.details('vault')).balance.confirmed_sat).toBe(change);
      const overview = (await web.get('/wallets/vault')).text;
      expect(overview).toContain('<dt>Confirmed</dt><dd class="amount"><span class="btc">0.00000000 BTC');
      expect(overview).toContain(`<dt>Unconfirmed</dt><dd class="amount"><span class="btc">${(change / 1e8).toFixed(8)} BTC`);

      await chain.mine(1);
      for (const { page } of [broadcaster, cosigner]) {
        await page.waitForFunction(() => document.querySelector('[data-sent-txid]')?.textContent?.includes('(1 confirmation)'), { timeout: 30_000 });
      }
      // The link leads to the transaction's row.
      await visit(cosigner.page, `${server.url}/wallets/vault?view=transactions#tx-${sent}`);
      expect(await cosigner.page.$(`tr#tx-${sent}`)).not.toBeNull();
      expect([...broadcaster.errors, ...cosigner.errors]).toEqual([]);
    } finally {
      await broadcaster.close();
      await cosigner.close();
    }
  }, 120_000);

  it('send page: the available balance, everything sent with the fee taken from it, the preview above Create with label and total, a missing estimate said once', async () => {
    const web = new WebClient(server.url);
    await web.signIn('admin', TEST_ADMIN_PASSWORD);
    const spendable = (await client.details('vault')).utxo.reduce((sum: number, u: { amount_sat: number }) => sum + u.amount_sat, 0);
    const form = await web.get('/wallets/vault/send');
    expect(form.text).toMatch(new RegExp(`Available to spend: <span class="amount">${(spendable / 1e8).toFixed(8)} BTC`));
    const token = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const address = await chain.minerAddressOf('bech32');
    const fields = { _csrf: token, address, amount: '', unit: 'btc', rlabel: 'Everything to cold storage', fee_rate: '2', rbf: 'on', send_max: 'on', action: 'preview' };
    const preview = await web.post('/wallets/vault/send', fields);
    expect(preview.status, preview.text).toBe(200);
    expect(preview.text).not.toContain('>change<'); // every coin spent: no change
    expect(preview.text).toContain('Everything to cold storage');
    expect(preview.text).toContain(`data-total-leaving>${(spendable / 1e8).toFixed(8)} BTC`);
    expect(preview.text.indexOf('class="preview"')).toBeLessThan(preview.text.indexOf('value="create"'));
    const created = await web.post('/wallets/vault/send', { ...fields, action: 'create' });
    expect(created.status, created.text).toBe(303);
    const record = (await client.psbts('vault'))[created.location!.split('/').pop()!];
    expect(record.tx.vout).toHaveLength(1);
    expect(Math.round(record.tx.vout[0].value * 1e8) + Math.round(record.fee * 1e8)).toBe(spendable);
    // Two recipients cannot share "everything".
    const two = await web.post('/wallets/vault/send', { ...fields, address: [address, address], amount: ['', '0.1'], unit: ['btc', 'btc'], rlabel: ['', ''] });
    expect(two.status).toBe(400);
    expect(two.text).toContain('id="send-max-error"');
    // Regtest's node has no fee estimate: the refusal shows once, next to the fee field.
    const noEstimate = await web.post('/wallets/vault/send', { _csrf: token, address, amount: '0.001', unit: 'btc', rlabel: '', fee_rate: '', action: 'preview' });
    expect(noEstimate.status).toBe(503);
    expect(noEstimate.text).toContain('id="fee_rate-error">The node has no fee estimate yet: enter a fee rate.<');
    expect(noEstimate.text.split('no fee estimate').length - 1).toBe(1);
    expect(noEstimate.text).not.toContain('give fee_rate');
  }, 60_000);
});
