/**
 * A timelocked recovery wallet in a real browser (Debian's Chromium) against a real Bitcoin Core, at a
 * phone's width: a person adds an inheritance wallet from the template (the delay in days, its block
 * count shown as they type), sees its spending paths, receives a coin and sees when its recovery opens,
 * and on the send page choosing the recovery path gets the refusal naming that height on the form.
 */
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clickAndWait, launchBrowser, newPage, signIn, visit } from '../../support/browser.js';
import { TEST_ADMIN_PASSWORD } from '../../support/server.js';
import { ensureWebAssets } from '../../support/web-client.js';
import { describeWithBitcoind, fixtureWallets, startChainWorld, type ChainWorld } from '../bitcoind/chain-world.js';

const wallet = fixtureWallets.w_wsh2of3!;
const keyText = (k: { fingerprint: string; derivation: string; tpub: string }) => `[${k.fingerprint}${k.derivation.replace(/^m/, '').replaceAll("'", 'h')}]${k.tpub}`;

/** Nothing wider than the viewport, and every visible field named by a label. */
async function usableAtWidth(page: Page): Promise<{ overflow: number; unlabelled: string[] }> {
  return page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    unlabelled: [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea')]
      .filter((e) => e.type !== 'hidden' && e.offsetParent !== null && e.labels?.length === 0 && !e.getAttribute('aria-label'))
      .map((e) => e.name || e.id),
  }));
}

describeWithBitcoind('a timelocked recovery wallet in a browser against a real Bitcoin Core', () => {
  let world: ChainWorld;
  let browser: Browser;
  let heir: string;

  beforeAll(async () => {
    ensureWebAssets();
    world = await startChainWorld();
    browser = await launchBrowser();
    await world.chain.rpc.call('createwallet', { wallet_name: 'keys-heir', load_on_startup: false });
    const descriptors: { desc: string; internal: boolean }[] = (await world.chain.rpc.wallet('keys-heir').call('listdescriptors', [false])).descriptors;
    heir = /^wpkh\((.+)\/0\/\*\)/.exec(descriptors.find((d) => d.desc.startsWith('wpkh(') && !d.internal)!.desc)![1]!;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  it('adds an inheritance wallet, shows its paths and when a coin\'s recovery opens, and refuses the recovery before it on the send form', async () => {
    const { page, errors, close } = await newPage(browser, 390, 844);
    const text = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
    await signIn(page, base(), 'admin', TEST_ADMIN_PASSWORD);
    await clickAndWait(page, 'a[href="/wallets/new"]');
    await page.type('#name', 'Inheritance');
    await page.click('input[name=mode][value=recovery]');
    expect(await page.$eval('[data-mode=recovery]', (e) => (e as HTMLElement).hidden)).toBe(false);
    await page.select('#template', 'inheritance');
    await page.type('#primary_keys', wallet.keys.map((k) => `${keyText(k)} ${k.key}`).join('\n'));
    await page.type('#recovery_keys', `${heir} Heir`);
    await page.$eval('#delay_days', (e) => ((e as HTMLInputElement).value = ''));
    await page.type('#delay_days', '30');
    expect(await text('[data-delay-blocks]')).toContain('30 days = 4320 blocks');
    expect(await usableAtWidth(page)).toEqual({ overflow: 0, unlabelled: [] });
    await clickAndWait(page, 'form[data-wallet-form] button[type=submit]');
    expect(page.url()).toBe(`${base()}/wallets/inheritance`);
    const paths = await text('[data-spending-paths]');
    expect(paths).toContain('primary');
    expect(paths).toMatch(/recovery-1[^]*4320 blocks \(about 30 days\)/);

    const address = await text('[data-receive-address]');
    await world.chain.pay([{ address, sat: 10_000_000 }]);
    await world.chain.mine(1);
    const minedAt = await world.chain.height();
    await world.client.waitForBalance('inheritance', { total: 10_000_000, confirmed: 10_000_000 });
    await visit(page, `${base()}/wallets/inheritance`);
    expect(await text('[data-timelock-notice]')).toContain('1 coin(s) can soon be spent by a recovery path');
    expect(await text('[data-expiring]')).toContain(`block ${minedAt + 4320} (4319 blocks, about 30 days)`);
    expect(await usableAtWidth(page)).toEqual({ overflow: 0, unlabelled: [] });

    await clickAndWait(page, 'a[href="/wallets/inheritance/send"]');
    await page.select('#spending_path', 'recovery-1');
    await page.type('#address-0', await world.chain.minerAddressOf('bech32'));
    await page.type('#amount-0', '0.01');
    await page.type('#fee_rate', '2');
    await clickAndWait(page, 'button[value=preview]');
    expect(page.url()).toBe(`${base()}/wallets/inheritance/send`);
    expect(await text('#spending-path-error')).toContain(`from height ${minedAt + 4320}`);
    // The form keeps what was typed, so the person can choose the primary path instead.
    expect(await page.$eval('#spending_path', (e) => (e as HTMLSelectElement).value)).toBe('recovery-1');
    expect(await page.$eval('#amount-0', (e) => (e as HTMLInputElement).value)).toBe('0.01');
    expect(await usableAtWidth(page)).toEqual({ overflow: 0, unlabelled: [] });
    expect(errors).toEqual([]);
    await close();
  }, 120_000);

  const base = () => world.server.url;
});
