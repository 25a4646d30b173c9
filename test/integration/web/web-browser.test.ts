/**
 * The web interface in a real browser (Debian's Chromium) against a real Bitcoin Core: a person signs
 * in, adds a 2-of-3 wallet by the policy form, receives, sends to two recipients, takes the PSBT file
 * to two cosigners (Core signer wallets, outside the browser), uploads their signed files, watches the
 * status change, broadcasts, sees the transaction arrive without reloading and bumps its fee; the
 * animated QR code decodes back to the PSBT. Also: escaping, a cross-site post, a read user, sign-out.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsQRModule from 'jsqr';
import type { Browser, ElementHandle, Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { PsbtScanAccumulator, type ScanProgress } from '../../../src/web/client/qr/frames.js';
import { clickAndWait, launchBrowser, newPage, signIn, visit } from '../../support/browser.js';
import { TEST_ADMIN_PASSWORD } from '../../support/server.js';
import { ensureWebAssets } from '../../support/web-client.js';
import { cosign, describeWithBitcoind, fixtureWallets, startChainWorld, type ChainWorld } from '../bitcoind/chain-world.js';

// jsqr is a CommonJS bundle with `exports.default`: depending on the loader the default import is the function or the object.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as typeof jsQRModule.default;
const wallet = fixtureWallets.w_wsh2of3!;
/** `WCS_SCREENSHOTS=docs/screenshots` keeps PNGs of the main pages (desktop and phone, light and dark) there. */
const SCREENSHOTS = process.env.WCS_SCREENSHOTS;

async function shoot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const viewport = page.viewport();
  for (const [width, height, size] of [[1280, 900, 'desktop'], [390, 844, 'phone']] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewport({ width, height });
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-${size}-${scheme}.png`), fullPage: size === 'desktop' });
    }
  }
  await page.emulateMediaFeatures([]);
  if (viewport) await page.setViewport(viewport);
}
/** The key text as hardware wallets export it: [fingerprint/path]xpub. */
const keyText = (k: { fingerprint: string; derivation: string; tpub: string }) => `[${k.fingerprint}${k.derivation.replace(/^m/, '').replaceAll("'", 'h')}]${k.tpub}`;

describeWithBitcoind('the web interface in a browser against a real Bitcoin Core', () => {
  let world: ChainWorld;
  let browser: Browser;
  let base: string;
  let folder: string;
  let signers: WalletRpc[];
  let main: Awaited<ReturnType<typeof newPage>>;

  beforeAll(async () => {
    ensureWebAssets();
    folder = mkdtempSync(join(tmpdir(), 'wcs-web-'));
    world = await startChainWorld();
    base = world.server.url;
    browser = await launchBrowser();
    // The cosigners holding keys B and C sign; key A stays on its (absent) device.
    signers = await Promise.all(wallet.keys.slice(1).map((key) => world.chain.signer(`web-${key.key}`, wallet, key)));
    await world.server.running.runtime.services.users.addUser('reader', 'reader-password-1', { admin: false });
    main = await newPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent ?? '');

  /** Downloads the PSBT file of the page (as the browser would), signs it with a cosigner outside the browser, saves the signed file. */
  async function signedFile(page: Page, signer: WalletRpc, name: string): Promise<string> {
    const href = await page.$eval('a[download]', (a) => (a as HTMLAnchorElement).href);
    const bytes: number[] = await page.evaluate(async (url) => [...new Uint8Array(await (await fetch(url)).arrayBuffer())], href);
    const file = Buffer.from(bytes);
    expect(file.subarray(0, 5).toString('hex')).toBe('70736274ff'); // binary PSBT
    const signed = await cosign(signer, file.toString('base64'));
    const path = join(folder, name);
    writeFileSync(path, Buffer.from(signed, 'base64'));
    return path;
  }

  async function uploadSigned(page: Page, paths: string[]): Promise<void> {
    const input = (await page.$('input[data-psbt-files]')) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(...paths);
    await page.waitForFunction(() => (document.querySelector('textarea[name=psbt]') as HTMLTextAreaElement).value.startsWith('cHNidP8'));
    await clickAndWait(page, 'form[data-sign-form] button[type=submit]');
  }

  it('signs in, adds a 2-of-3 wallet by the policy form and shows its receive address with a QR code', async () => {
    const { page, errors } = main;
    await signIn(page, base, 'admin', TEST_ADMIN_PASSWORD);
    expect(await page.content()).toContain('No wallets yet');
    await clickAndWait(page, 'a[href="/wallets/new"]');
    await page.type('#name', 'Family vault');
    await page.select('#type', 'wsh-sortedmulti');
    await page.$eval('#threshold', (e) => ((e as HTMLInputElement).value = ''));
    await page.type('#threshold', '2');
    for (const [i, key] of wallet.keys.entries()) {
      await page.type(`#key-${i}`, keyText(key));
      await page.type(`#key-label-${i}`, `${key.key === 'A' ? 'Alice' : key.key === 'B' ? 'Bob' : 'Carol'}'s device`);
    }
    await page.type('#birthday', String(await world.chain.height()));
    await clickAndWait(page, 'form[data-wallet-form] button[type=submit]');
    expect(page.url()).toBe(`${base}/wallets/family-vault`);
    const details = await world.client.details('family-vault');
    expect(details.recv_descriptor).toBe(wallet.recv_descriptor); // the same wallet as the descriptor import
    expect(await text(page, '[data-receive-address]')).toBe(details.address);
    expect(await page.$('.qr svg')).not.toBeNull();
    expect(errors).toEqual([]);
  });

  it('shows the funding arrive without a reload, then sends to two recipients with a preview', async () => {
    const { page } = main;
    const address = await text(page, '[data-receive-address]');
    await world.chain.pay([{ address, sat: 100_000_000 }]);
    await world.chain.mine(1);
    // The page follows the change by itself (polling), no reload from the test.
    await page.waitForFunction(() => document.querySelector('.balances dd')?.textContent?.includes('1.00000000 BTC'), { timeout: 30_000 });
    await shoot(page, 'wallet-receive');
    await visit(page, `${base}/`);
    await shoot(page, 'wallet-list');
    await visit(page, `${base}/wallets/family-vault`);
    await clickAndWait(page, 'a[href="/wallets/family-vault/send"]');
    const one = await world.chain.minerAddressOf('bech32');
    const two = await world.chain.minerAddressOf('bech32m');
    await page.type('#address-0', one);
    await page.type('#amount-0', '0.25');
    await page.click('[data-add-row]');
    await page.type('#address-1', two);
    await page.type('#amount-1', '1234567');
    await page.select('#unit-1', 'sat');
    await page.type('#rlabel-1', 'Rent <b>June</b>');
    await page.type('#fee_rate', '2');
    await clickAndWait(page, 'button[value=preview]');
    const preview = await text(page, '.preview');
    expect(preview).toContain('2.00 sat/vB');
    expect(preview).toContain(one);
    expect(preview).toContain('0.01234567 BTC');
    expect(preview).toContain('change');
    expect(await world.client.psbts('family-vault')).toEqual({}); // a preview stores nothing
    await shoot(page, 'send-preview');
    await clickAndWait(page, 'button[value=create]');
    expect(page.url()).toMatch(/\/wallets\/family-vault\/psbts\/[0-9a-f]{64}$/);
    expect(await text(page, '[data-signatures-needed]')).toContain('2 more signatures needed');
  });

  it('shows the PSBT as an animated QR code that decodes back to the same PSBT, as UR and as BBQr', async () => {
    const { page } = main;
    const href = await page.$eval('a[download]', (a) => (a as HTMLAnchorElement).href);
    const expected = Buffer.from(await page.evaluate(async (url) => [...new Uint8Array(await (await fetch(url)).arrayBuffer())], href));
    await page.waitForSelector('[data-animated-qr] canvas.qr-canvas');
    // Paused, the widget shows one frame per step: each is read off the canvas and decoded here, as a signer's camera would.
    for (const format of ['ur', 'bbqr'] as const) {
      await page.click(`[data-animated-qr] input[value=${format}]`);
      const running = await page.$eval('[data-animated-qr] .qr-pause', (b) => b.getAttribute('aria-pressed') !== 'true' && !(b as HTMLElement).hidden);
      if (running) await page.click('[data-animated-qr] .qr-pause');
      const scan = new PsbtScanAccumulator();
      let progress: ScanProgress | undefined;
      const seen = new Set<string>();
      for (let frame = 0; frame < 200 && progress?.state !== 'complete'; frame++) {
        const image = await page.$eval('[data-animated-qr] canvas.qr-canvas', (canvas) => {
          const c = canvas as HTMLCanvasElement;
          const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
          let binary = '';
          for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
          return { width: c.width, height: c.height, rgba: btoa(binary) };
        });
        const decoded = jsQR(new Uint8ClampedArray(Buffer.from(image.rgba, 'base64')), image.width, image.height);
        expect(decoded, `${format} frame ${frame} decodes`).not.toBeNull();
        seen.add(decoded!.data);
        progress = scan.push(decoded!.data);
        if (progress.state !== 'complete') await page.click('[data-animated-qr] .qr-step');
      }
      expect(progress?.state, format).toBe('complete');
      expect(Buffer.from((progress as { psbt: Uint8Array }).psbt).equals(expected), `${format} decodes to the downloaded PSBT`).toBe(true);
      expect([...seen].every((t) => (format === 'ur' ? t.toLowerCase().startsWith('ur:crypto-psbt/') : t.startsWith('B$'))), format).toBe(true);
    }
  });

  it('shows an amount refusal next to its field', async () => {
    const { page: other, close } = await newPage(browser);
    try {
      await signIn(other, base, 'admin', TEST_ADMIN_PASSWORD);
      await other.goto(`${base}/wallets/family-vault/send`);
      await other.type('#address-0', await world.chain.minerAddressOf('bech32'));
      await other.type('#amount-0', '5');
      await other.type('#fee_rate', '2');
      await clickAndWait(other, 'button[value=preview]');
      expect(await text(other, '#recipients-error')).toContain('Insufficient funds');
      await other.$eval('#amount-0', (e) => ((e as HTMLInputElement).value = '0.000000001'));
      await clickAndWait(other, 'button[value=preview]');
      expect(await text(other, '#amount-0-error')).toMatch(/8 decimal/);
    } finally {
      await close();
    }
  });

  it('collects two signed files, shows the status change, broadcasts and shows the transaction without a reload', async () => {
    const { page } = main;
    await uploadSigned(page, [await signedFile(page, signers[0]!, 'bob.psbt')]);
    expect(await text(page, '[data-signatures-needed]')).toContain('1 more signature needed');
    const rows = await page.$$eval('[data-cosigners] tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(rows.find((r) => r.includes("Bob's device"))).toContain('signed');
    expect(rows.find((r) => r.includes("Alice's device"))).toContain('not signed');
    await shoot(page, 'psbt-signing');
    await uploadSigned(page, [await signedFile(page, signers[1]!, 'carol.psbt')]);
    expect(await text(page, '[data-signatures-needed]')).toContain('Signed enough to broadcast');
    await clickAndWait(page, 'form[action$="/broadcast"] button');
    const sent = new URL(page.url()).searchParams.get('sent')!;
    expect(await world.chain.inMempool(sent)).toBe(true);
    expect(await text(page, '[data-psbt-state]')).toContain(`Sent in transaction ${sent}`);
    await clickAndWait(page, `[data-sent-txid] a`);
    await page.waitForSelector(`tr[data-txid="${sent}"]`, { timeout: 30_000 });
    expect(await text(page, `tr[data-txid="${sent}"]`)).toContain('unconfirmed');
  });

  it('bumps the fee of the unconfirmed transaction from its row', async () => {
    const { page } = main;
    const original = await page.$eval('tr[data-txid]', (tr) => (tr as HTMLElement).dataset.txid!);
    await clickAndWait(page, `tr[data-txid="${original}"] a.button`);
    expect(await page.$eval('#amount-0', (e) => (e as HTMLInputElement).value)).not.toBe('');
    const rate = await page.$eval('#fee_rate', (e) => (e as HTMLInputElement).value);
    expect(Number(rate)).toBeGreaterThan(2);
    await clickAndWait(page, 'button[value=create]');
    await uploadSigned(page, [await signedFile(page, signers[0]!, 'bob-2.psbt'), await signedFile(page, signers[1]!, 'carol-2.psbt')]);
    await clickAndWait(page, 'form[action$="/broadcast"] button');
    const replacement = new URL(page.url()).searchParams.get('sent')!;
    expect(replacement).not.toBe(original);
    expect(await world.chain.inMempool(replacement)).toBe(true);
    expect(await world.chain.inMempool(original)).toBe(false);
  });

  it('shows a label holding <script> as text', async () => {
    const { page, dialogs } = main;
    await visit(page, `${base}/wallets/family-vault?view=addresses`);
    const input = 'td.label-cell input[name=label]';
    await page.$eval(input, (e) => ((e as HTMLInputElement).value = '<script>alert("x")</script><img src=x onerror=alert(1)>'));
    await clickAndWait(page, 'td.label-cell button[type=submit]');
    expect(await page.$eval(input, (e) => (e as HTMLInputElement).value)).toBe('<script>alert("x")</script><img src=x onerror=alert(1)>');
    await visit(page, `${base}/wallets/family-vault?view=transactions`);
    expect(await page.$$('main script, main img')).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(main.errors).toEqual([]);
  });

  it('refuses a form posted from another site', async () => {
    const { page } = main;
    // An attacker's page on another origin posts a form to the service in the signed-in browser.
    const attacker: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<form id="f" method="post" action="${base}/wallets/family-vault/rescan"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, 'localhost', resolve));
    try {
      const port = (attacker.address() as { port: number }).port;
      const refused = page.waitForResponse((r) => r.url().endsWith('/wallets/family-vault/rescan'));
      await page.goto(`http://localhost:${port}/`);
      expect((await refused).status()).toBe(403);
      await page.waitForFunction(() => location.pathname.endsWith('/rescan'));
      expect(await page.content()).toContain('not sent from a page of this service');
    } finally {
      attacker.close();
    }
  });

  it('shows a read user no spending controls, and sign-out ends the session', async () => {
    await world.client.ok('PATCH', '/wallets/family-vault', { shared_with: [{ user: 'reader', access: 'read' }] });
    const { page, close } = await newPage(browser, 390, 844);
    try {
      await signIn(page, base, 'reader', 'reader-password-1');
      await visit(page, `${base}/wallets/family-vault`);
      expect(await page.$('a[href$="/send"]')).toBeNull();
      expect(await page.$('input[name=coin]')).toBeNull();
      await visit(page, `${base}/wallets/family-vault?view=coins`);
      expect(await page.$('#coin-control')).toBeNull();
      await clickAndWait(page, 'form[action="/sign-out"] button');
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await visit(page, `${base}/wallets/family-vault`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
    } finally {
      await close();
    }
  });

  it('raised no script error on any page of the flow', () => {
    expect(main.errors).toEqual([]);
  });
});
