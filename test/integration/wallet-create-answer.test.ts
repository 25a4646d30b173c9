/**
 * The creation answer shows the addresses of the descriptors as checked by the request (not parsed again): it is
 * the same, byte for byte, as the wallet's details read by a restarted service, which parses the stored
 * descriptors, for every kind of input (a pair, a multipath descriptor, a policy, miniscript multipath and pair,
 * a paths policy). No chain: neither answer has a scan.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { wallets } from './wallet-helpers.js';

type FixtureKey = { fingerprint: string; derivation: string; tpub: string };
const accountKey = (k: FixtureKey) => `[${k.fingerprint}${k.derivation.slice(1)}]${k.tpub}`;
const keys: string[] = wallets.w_wsh2of3!.keys.map(accountKey);
const heir: string = accountKey(wallets.w_wpkh!.keys[0]);
const multi = (step: string) => `wsh(sortedmulti(2,${keys.map((k) => `${k}/${step}/*`).join(',')}))`;
const recoverable = (step: string) => `wsh(or_d(multi(2,${keys.map((k) => `${k}/${step}/*`).join(',')}),and_v(v:pkh(${heir}/${step}/*),older(1000))))`;

const bodies: Record<string, Record<string, unknown>> = {
  pair: { recv_descriptor: multi('0'), change_descriptor: multi('1') },
  multipath: { descriptor: multi('<0;1>') },
  policy: { policy: { type: 'wsh-sortedmulti', threshold: 2, keys: keys.map((key, i) => ({ key, label: `k${i}` })) } },
  'miniscript-multipath': { descriptor: recoverable('<0;1>') },
  'miniscript-pair': { recv_descriptor: recoverable('0'), change_descriptor: recoverable('1') },
  paths: { policy: { type: 'paths', script: 'tr', paths: [{ threshold: 2, keys: keys.map((key) => ({ key })) }, { threshold: 1, keys: [{ key: heir, label: 'heir' }], after_blocks: 1000 }] } },
};

describe('the creation answer', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const server of servers.slice(1)) await server.stop();
    await servers[0]?.dispose();
  });

  it('equals the details a restarted service reads from the stored descriptors', async () => {
    const first = await startTestServer({ env: { SERVICE_NETWORK: 'regtest' } });
    servers.push(first);
    const auth = { authorization: bearer((await createToken(first, 'admin', first.adminPassword, 'create answer')).jwt_token as string) };
    const created: Record<string, unknown> = {};
    for (const [alias, body] of Object.entries(bodies)) {
      const answer = await request(`${first.api}/wallets`, { method: 'POST', headers: auth, json: { name: alias, alias, birthday: 0, ...body } });
      expect(answer.status, answer.text).toBe(201);
      created[alias] = answer.body;
    }
    expect((created.paths as { spending_paths: unknown[] }).spending_paths).toHaveLength(2);
    await first.stop();

    const second = await startTestServer({ dataFolder: first.dataFolder, env: { SERVICE_NETWORK: 'regtest' } });
    servers.push(second);
    const again = { authorization: bearer((await createToken(second, 'admin', second.adminPassword, 'create answer, restarted')).jwt_token as string) };
    for (const alias of Object.keys(bodies)) {
      const read = await request(`${second.api}/wallets/${alias}`, { headers: again });
      expect(read.status, read.text).toBe(200);
      expect(JSON.stringify(read.body), alias).toBe(JSON.stringify(created[alias]));
    }
  });
});
