/**
 * Creating miniscript wallets over HTTP: what is refused, with the usual error body (400 naming the
 * reason, 422 for keys of another network), and what a paths policy becomes (the Liana-style wsh
 * script, spending paths and exports), against the fixture node (no chain needed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/server.js';
import { ensureWebAssets, WebClient } from '../support/web-client.js';
import { startWalletWorld, wallets, type WalletWorld } from './wallet-helpers.js';

type FixtureKey = { fingerprint: string; derivation: string; tpub: string };
const accountKey = (k: FixtureKey) => `[${k.fingerprint}${k.derivation.slice(1)}]${k.tpub}`;
const keys: string[] = wallets.w_wsh2of3!.keys.map(accountKey);
const heir: string = accountKey(wallets.w_wpkh!.keys[0]);

describe('miniscript wallets: creation input', () => {
  let world: WalletWorld;
  const post = (body: Record<string, unknown>) => request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json: { name: `m ${Math.random()}`, ...body } });
  const paths = (script: string, recovery: Record<string, unknown>) => ({
    type: 'paths',
    script,
    paths: [{ threshold: 2, keys: keys.map((key) => ({ key })) }, { threshold: 1, keys: [{ key: heir, label: 'heir' }], ...recovery }],
  });

  beforeAll(async () => {
    world = await startWalletWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('a paths policy becomes a wsh miniscript wallet with its spending paths and a BIP388 export', async () => {
    const created = await post({ alias: 'inherit', policy: paths('wsh', { after_blocks: 52560 }) });
    expect(created.status, created.text).toBe(201);
    expect(created.body.recv_descriptor).toMatch(/^wsh\(or_d\(multi\(2,.*\/0\/\*.*\),and_v\(v:pkh\(.*\/0\/\*\),older\(52560\)\)\)\)#[0-9a-z]{8}$/);
    expect(created.body.spending_paths.map((p: { id: string; timelock: unknown }) => [p.id, p.timelock])).toEqual([
      ['primary', null],
      ['recovery-1', { type: 'relative_blocks', blocks: 52560 }],
    ]);
    expect(created.body.spending_paths[1].keys[0].label).toBe('heir');
    const listed = await request(`${world.server.api}/wallets`, { headers: world.auth });
    expect(listed.body.wallets.find((w: { alias: string }) => w.alias === 'inherit').spending_paths).toHaveLength(2);
    const exported = await request(`${world.server.api}/wallets/inherit/export?format=bip388`, { headers: world.auth });
    expect(exported.status, exported.text).toBe(200);
    expect(JSON.parse(exported.text).descriptor_template).toBe('wsh(or_d(multi(2,@0/**,@1/**,@2/**),and_v(v:pkh(@3/**),older(52560))))');
  });

  it('an absolute lock is shown by its height', async () => {
    const created = await post({ policy: paths('tr', { after_height: 900_000 }) });
    expect(created.status, created.text).toBe(201);
    expect(created.body.address_type).toBe('bech32m');
    expect(created.body.spending_paths[1].timelock).toEqual({ type: 'absolute_height', height: 900_000 });
  });

  it.each([
    ['a lock out of range', { policy: paths('wsh', { after_blocks: 70_000 }) }, 'invalid_timelock', /65535/],
    ['both locks on one path', { policy: paths('wsh', { after_blocks: 10, after_height: 10 }) }, 'invalid_policy', /both after_blocks and after_height/],
    ['no primary path', { policy: { type: 'paths', script: 'wsh', paths: [{ threshold: 1, keys: [{ key: heir }], after_blocks: 5 }] } }, 'invalid_policy', /exactly one path without a lock/],
    ['a key without origin', { policy: { type: 'paths', script: 'wsh', paths: [{ threshold: 1, keys: [{ key: heir.replace(/^\[[^\]]+\]/, '') }] }] } }, 'invalid_policy', /origin/],
    ['a key that is no key', { policy: { type: 'paths', script: 'wsh', paths: [{ threshold: 1, keys: [{ key: 'A' }] }] } }, 'invalid_key', /Path 1, key 1/],
    ['an unknown script', { policy: paths('sh', { after_blocks: 5 }) }, 'invalid_policy', /wsh.*tr/],
    ['heights mixed with times', { descriptor: `wsh(and_v(v:pk(${keys[0]}/<0;1>/*),and_v(v:after(100),after(500000001))))` }, undefined, /time/i],
  ] as const)('%s is 400 naming the reason', async (_, body, code, message) => {
    const refused = await post(body);
    expect(refused.status, refused.text).toBe(400);
    if (code) expect(refused.body.code).toBe(code);
    expect(refused.body.message).toMatch(message);
    expect(refused.body.errors[0].path).toBe(Object.keys(body)[0] === 'policy' ? '/policy' : '/descriptor');
  });

  it.each([
    ['inheritance', 'recovery_keys', 2, 1],
    ['expanding', 'recovery_keys', 2, 2],
    ['decaying', '', 3, 2],
  ] as const)('the web form\'s %s template creates the wallet, shown with its paths', async (template, _, primaryThreshold, recoveryThreshold) => {
    ensureWebAssets();
    const web = new WebClient(world.server.url);
    await web.signIn('admin', world.server.adminPassword);
    const form = await web.get('/wallets/new');
    expect(form.text).toContain('value="recovery"');
    expect(form.text).toContain('365 days = 52560 blocks');
    const created = await web.post('/wallets/new', {
      name: `Family ${template}`,
      mode: 'recovery',
      template,
      script: 'wsh',
      primary_keys: keys.map((k, i) => `${k} Cosigner ${i + 1}`).join('\n'),
      primary_threshold: String(primaryThreshold),
      recovery_keys: `${heir} Heir`,
      recovery_threshold: String(recoveryThreshold),
      delay_days: '30',
    });
    expect(created.status, created.text.slice(0, 2000)).toBeLessThan(400);
    const listed = await request(`${world.server.api}/wallets`, { headers: world.auth });
    const alias = listed.body.wallets.find((w: { name: string }) => w.name === `Family ${template}`).alias;
    const details = await request(`${world.server.api}/wallets/${alias}`, { headers: world.auth });
    expect(details.body.spending_paths.map((p: { threshold: number; keys: unknown[]; timelock: unknown }) => [p.threshold, p.keys.length, p.timelock])).toEqual([
      [primaryThreshold, 3, null],
      [recoveryThreshold, template === 'inheritance' ? 1 : template === 'expanding' ? 4 : 3, { type: 'relative_blocks', blocks: 30 * 144 }],
    ]);
    const page = await web.get(`/wallets/${alias}`);
    expect(page.text).toContain('data-spending-paths');
    expect(page.text).toContain('4320 blocks (about 30 days)');
  });
});
