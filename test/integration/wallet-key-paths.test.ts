/**
 * A multisig wallet whose keys come from single-signature account paths (m/84h/..., BIP84) is created as
 * asked, by the API, the web form (policy and wallet file) and the command line, and each says so: the
 * wallet page (in a real browser) and `wcs wallet import` carry a warning. The API's creation answer keeps
 * the contract's fields (the contract has no warnings), and a wallet of multisig paths has no warning.
 */
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, newPage, signIn, visit } from '../support/browser.js';
import { assertBuilt, runCli } from '../support/cli.js';
import { TEST_ADMIN_PASSWORD, request } from '../support/server.js';
import { ensureWebAssets, WebClient } from '../support/web-client.js';
import { startWalletWorld, wallets, type WalletWorld } from './wallet-helpers.js';

let world: WalletWorld;
let web: WebClient;
let browser: Browser;
const fixture = wallets.w_wsh2of3!;
/** The fixture's three keys with the origin path of a BIP84 account (the keys themselves unchanged). */
const singleSigKeys = fixture.keys.map((k: any) => `[${k.fingerprint}/84h/1h/${fixture.keys.indexOf(k)}h]${k.tpub}`);
const multisigKeys = fixture.keys.map((k: any) => `[${k.fingerprint}/${k.derivation.slice(2)}]${k.tpub}`);
const descriptorOf = (keys: string[]) => `wsh(sortedmulti(2,${keys.map((k) => `${k}/<0;1>/*`).join(',')}))`;

beforeAll(async () => {
  ensureWebAssets();
  world = await startWalletWorld({ snapshot: 5 });
  web = new WebClient(world.server.url);
  await web.signIn('admin', TEST_ADMIN_PASSWORD);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await world?.close();
});

async function warningOnWalletPage(alias: string): Promise<string | null> {
  const { page, errors, close } = await newPage(browser);
  try {
    await signIn(page, world.server.url, 'admin', TEST_ADMIN_PASSWORD);
    await visit(page, `${world.server.url}/wallets/${alias}`);
    expect(errors).toEqual([]);
    return await page.$eval('[data-key-path-warning]', (e) => e.textContent).catch(() => null);
  } finally {
    await close();
  }
}

it('API: created as asked, with the contract\'s answer; the wallet page warns, naming each key', async () => {
  const created = await request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json: { name: 'Paths api', descriptor: descriptorOf(singleSigKeys), birthday: 0 } });
  expect(created.status, created.text).toBe(201);
  expect(created.body.keys.map((k: any) => k.derivation)).toEqual(['m/84h/1h/0h', 'm/84h/1h/1h', 'm/84h/1h/2h']);
  expect(created.body).not.toHaveProperty('warnings');
  const warning = await warningOnWalletPage(created.body.alias);
  expect(warning).toContain('single-signature account path');
  for (const [i, k] of fixture.keys.entries()) expect(warning).toContain(`key ${i + 1} (${k.fingerprint}, m/84h/1h/${i}h, BIP84)`);
}, 60_000);

it('web form: a policy of such keys is created and lands on the warning; multisig paths land on none', async () => {
  const fields = (name: string, keys: string[]) => ({ mode: 'policy', name, type: 'wsh-sortedmulti', threshold: '2', key: keys, key_label: keys.map(() => ''), birthday: '0' });
  const created = await web.post('/wallets/new', fields('Paths form', singleSigKeys));
  expect(created.status, created.text).toBe(303);
  const page = await web.get(created.location!);
  expect(page.text).toContain('data-key-path-warning');
  expect(await warningOnWalletPage(created.location!.split('/').pop()!)).toContain('BIP84');

  const plain = await web.post('/wallets/new', fields('Paths fine', multisigKeys));
  expect(plain.status, plain.text).toBe(303);
  expect((await web.get(plain.location!)).text).not.toContain('data-key-path-warning');
  expect(await warningOnWalletPage(plain.location!.split('/').pop()!)).toBeNull();
}, 60_000);

it('web form: a wallet file of such keys is imported and its page warns', async () => {
  const created = await web.post('/wallets/new', { mode: 'file', name: 'Paths file', import_text: descriptorOf(singleSigKeys), import_format: '', birthday: '0' });
  expect(created.status, created.text).toBe(303);
  expect((await web.get(created.location!)).text).toContain('data-key-path-warning');
});

it('command line: `wcs wallet import` imports and warns on stderr; multisig paths print no warning', async () => {
  assertBuilt();
  await world.server.stop();
  const env = { SERVICE_DATA_FOLDER: world.server.dataFolder, SERVICE_NETWORK: 'regtest' };
  const warned = await runCli(['wallet', 'import', '--name', 'Paths cli', '--descriptor', descriptorOf(singleSigKeys), '--birthday', '0'], env);
  expect(warned.code, warned.stderr).toBe(0);
  expect(warned.stdout).toContain('Imported wallet paths-cli');
  expect(warned.stderr).toMatch(/^wcs: warning: This multisig wallet's key 1 \([0-9a-f]{8}, m\/84h\/1h\/0h, BIP84\)/);
  const quiet = await runCli(['wallet', 'import', '--name', 'Paths cli fine', '--descriptor', descriptorOf(multisigKeys), '--birthday', '0'], env);
  expect(quiet.code, quiet.stderr).toBe(0);
  expect(quiet.stderr).toBe('');
}, 60_000);
