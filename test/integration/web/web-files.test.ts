/**
 * The web interface's wallet files over HTTP: adding a wallet from another tool's setup file, downloading the
 * setup in each format and the BIP329 labels (the same files the API gives), importing a label file all or
 * nothing, and no label import for a `read` user.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, TEST_ADMIN_PASSWORD } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { startWalletWorld, wallets, type WalletWorld } from '../wallet-helpers.js';

const COLDCARD_FILE = readFileSync(join(import.meta.dirname, '..', '..', 'vectors', 'coldcard', 'caravan-wc-p2wsh_t.txt'), 'utf8');
const FORMATS = ['descriptor', 'bsms', 'coldcard', 'specter', 'caravan'] as const;

let world: WalletWorld;
let admin: WebClient;

async function apiLabels(): Promise<string> {
  const answer = await fetch(`${world.server.api}/wallets/family/labels`, { headers: world.auth });
  expect(answer.status).toBe(200);
  return answer.text();
}

beforeAll(async () => {
  ensureWebAssets();
  world = await startWalletWorld({ snapshot: 5 });
  await world.server.running.runtime.services.users.addUser('reader', 'reader-password-1', { admin: false });
  const w = wallets.w_wsh2of3!;
  const created = await request(`${world.server.api}/wallets`, {
    method: 'POST',
    headers: world.auth,
    json: { name: 'Family', alias: 'family', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0, shared_with: [{ user: 'reader', access: 'read' }] },
  });
  expect(created.status, created.text).toBe(201);
  await world.server.running.runtime.services.sync.runOnce();
  admin = new WebClient(world.server.url);
  await admin.signIn('admin', TEST_ADMIN_PASSWORD);
}, 60_000);
afterAll(() => world?.close());

describe('wallet files in the web interface', () => {
  it('adds a wallet from a Coldcard setup file, named by the file, the same wallet the API makes of it', async () => {
    const made = await admin.post('/wallets/new', { mode: 'file', name: '', import_text: COLDCARD_FILE, import_format: '', birthday: '0' });
    expect(made.status, made.text.slice(0, 2000)).toBe(303);
    expect(made.location).toBe('/wallets/p2wsh-t');
    const viaApi = await request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json: { alias: 'p2wsh-t-api', import: COLDCARD_FILE, birthday: 0 } });
    expect(viaApi.status, viaApi.text).toBe(201);
    const reads = world.server.running.runtime.services.wallets.reads;
    const fromWeb = await reads.details({ userName: 'admin', isAdmin: true }, 'p2wsh-t', { limit: 0 });
    expect(fromWeb.name).toBe('p2wsh-t');
    expect([fromWeb.recv_descriptor, fromWeb.change_descriptor, fromWeb.address]).toEqual([viaApi.body.recv_descriptor, viaApi.body.change_descriptor, viaApi.body.address]);
  });

  it('a file that is not a wallet setup shows the refusal next to the file and adds nothing', async () => {
    const before = (await world.server.running.runtime.services.wallets.reads.list({ userName: 'admin', isAdmin: true })).length;
    const page = await admin.post('/wallets/new', { mode: 'file', name: 'Broken', import_text: 'Policy: 5 of 2\nnot a key', import_format: 'coldcard' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('id="import_text-error"');
    expect(page.text).toContain('Policy: 5 of 2');
    expect((await world.server.running.runtime.services.wallets.reads.list({ userName: 'admin', isAdmin: true })).length).toBe(before);
  });

  it('downloads the setup in every format as the API exports it, as an attachment', async () => {
    const page = await admin.get('/wallets/family/files');
    expect(page.status).toBe(200);
    for (const format of FORMATS) {
      expect(page.text).toContain(`href="/wallets/family/files/setup/${format}"`);
      const file = await admin.get(`/wallets/family/files/setup/${format}`);
      const api = await fetch(`${world.server.api}/wallets/family/export?format=${format}`, { headers: world.auth });
      expect(file.status).toBe(200);
      expect(file.text).toBe(await api.text());
      expect(file.headers.get('content-disposition')).toBe(api.headers.get('content-disposition'));
    }
    expect((await admin.get('/wallets/family/files/setup/electrum')).status).toBe(400);
  });

  it('imports a label file from the form, downloads the labels as the API does, and refuses a faulty file whole', async () => {
    const { address } = await (await fetch(`${world.server.api}/wallets/family`, { headers: world.auth })).json();
    const good = `${JSON.stringify({ type: 'addr', ref: address, label: 'Rent <b>March</b>' })}\n`;
    const imported = await admin.post('/wallets/family/files/labels', { labels: good });
    expect(imported.status).toBe(200);
    expect(imported.text).toContain('Imported 1 label.');
    const download = await admin.get('/wallets/family/files/labels.jsonl');
    expect(download.headers.get('content-type')).toMatch(/^application\/jsonl/);
    expect(download.text).toBe(await apiLabels());
    expect(download.text).toContain('Rent <b>March</b>');

    const before = await apiLabels();
    const faulty = `${JSON.stringify({ type: 'addr', ref: address, label: 'Changed' })}\n{"type": "addr"\n`;
    const refused = await admin.post('/wallets/family/files/labels', { labels: faulty });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('line 2');
    expect(await apiLabels()).toBe(before);
  });

  it('shows a read user the downloads but no label import, and refuses its post', async () => {
    const reader = new WebClient(world.server.url);
    await reader.signIn('reader', 'reader-password-1');
    const page = await reader.get('/wallets/family/files');
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="/wallets/family/files/labels.jsonl"');
    expect(page.text).not.toContain('action="/wallets/family/files/labels"');
    const before = await apiLabels();
    const refused = await reader.post('/wallets/family/files/labels', { labels: '' });
    expect(refused.status).toBe(404);
    expect(await apiLabels()).toBe(before);
  });

  it('refuses a cross-site label import', async () => {
    const before = await apiLabels();
    const refused = await admin.post('/wallets/family/files/labels', { labels: '' }, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(await apiLabels()).toBe(before);
  });
});
