/**
 * Property: random recipient lists (address types, units, number or text amounts, fee subtraction,
 * fee rates) never give a PSBT that pays other amounts than asked, and never an unexpected error.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAddress } from '../../../src/core/address.js';
import { satsToBtcText } from '../../../src/core/amount.js';
import { DescriptorDeriver, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { NETWORKS } from '../../../src/core/network.js';
import { parsePsbt, psbtFee } from '../../../src/core/psbt/index.js';
import type { FeeEstimate, RelayFees } from '../../../src/chain/types.js';
import { ServiceError } from '../../../src/services/errors.js';
import { PsbtService } from '../../../src/services/psbts/service.js';
import { openTestSqlite, type OpenedStore } from '../../support/stores.js';
import { FIXTURE_WALLET_IDS, FixtureWalletReader, LAST_SNAPSHOT, storeFixtureWallets, wallets } from './psbt-fixture-wallets.js';

const regtest = NETWORKS.regtest;
/** One address of every output type: p2wpkh, p2sh, p2pkh, p2tr, p2wsh. */
const addresses = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3'].map((n) => new DescriptorDeriver(parseDescriptor(wallets[n].recv_descriptor, regtest)).derive(95).address);
const fees = {
  estimateFee: async (): Promise<FeeEstimate | null> => null,
  getRelayFees: async (): Promise<RelayFees> => ({ minRelaySatPerVb: 1, incrementalSatPerVb: 1, mempoolMinSatPerVb: 1 }),
  broadcast: async (): Promise<string> => {
    throw new Error('not used');
  },
};

const recipient = fc.record({
  address: fc.constantFrom(...addresses),
  // Mostly affordable amounts; sometimes dust, sometimes more than any wallet holds.
  sats: fc.oneof(
    { arbitrary: fc.bigInt({ min: 1n, max: 1_000n }), weight: 1 },
    { arbitrary: fc.bigInt({ min: 1_000n, max: 15_000_000n }), weight: 8 },
    { arbitrary: fc.bigInt({ min: 15_000_000n, max: 2_100_000_000_000_000n }), weight: 1 },
  ),
  form: fc.constantFrom('btc-text', 'btc-number', 'sat-text', 'sat-number', 'default-unit'),
});

function amountOf(sats: bigint, form: string): { amount: number | string; unit?: string } {
  switch (form) {
    case 'btc-text':
      return { amount: satsToBtcText(sats), unit: 'btc' };
    case 'btc-number':
      return { amount: Number(satsToBtcText(sats)), unit: 'btc' };
    case 'sat-text':
      return { amount: sats.toString(), unit: 'sat' };
    case 'sat-number':
      return { amount: Number(sats), unit: 'sat' };
    default:
      return { amount: satsToBtcText(sats) };
  }
}

let opened: OpenedStore;
let service: PsbtService;
beforeAll(async () => {
  opened = await openTestSqlite();
  await storeFixtureWallets(opened.store);
  const reader = FixtureWalletReader.at(LAST_SNAPSHOT);
  service = new PsbtService({ store: opened.store, access: reader, coins: reader, chain: () => fees, maxFeeRate: 1000, maxPending: 1000 });
}, 60_000);
afterAll(() => opened?.dispose());

describe('random creation requests', () => {
  it('pay exactly what was asked, or fail with a typed 4xx error', async () => {
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FIXTURE_WALLET_IDS),
        fc.array(recipient, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1000, max: 60_000 }),
        fc.option(fc.nat({ max: 4 }), { nil: undefined, freq: 2 }),
        async (alias, recipients, feeRateMilli, subtractFrom) => {
          const body = {
            recipients: recipients.map((r) => ({ address: r.address, ...amountOf(r.sats, r.form) })),
            fee_rate: (feeRateMilli / 1000).toFixed(3),
            ...(subtractFrom !== undefined ? { subtract: true, subtract_from: String(subtractFrom) } : {}),
          };
          let created;
          try {
            created = await service.create({ userName: 'alice', isAdmin: false }, alias, body);
          } catch (error) {
            expect(error).toBeInstanceOf(ServiceError);
            const e = error as ServiceError;
            count(e.code);
            expect(['invalid_input', 'unprocessable']).toContain(e.kind);
            if (e.kind === 'invalid_input') {
              const total = recipients.reduce((sum, r) => sum + r.sats, 0n);
              expect((subtractFrom !== undefined && subtractFrom >= recipients.length) || total > 2_100_000_000_000_000n).toBe(true);
            } else {
              expect(['insufficient_funds', 'amount_below_dust']).toContain(e.code);
            }
            return;
          }
          const psbt = parsePsbt(created.record.base64);
          const fee = psbtFee(psbt)!;
          const change = new Set((await opened.store.psbts.find(`id-${alias}`, created.txid))!.changeOutputs);
          const paid = psbt.tx.outputs.filter((_, i) => !change.has(i));
          expect(paid.length).toBe(recipients.length);
          paid.forEach((output, i) => {
            const asked = recipients[i]!.sats - (i === subtractFrom ? fee : 0n);
            expect(output.value).toBe(asked);
            expect(output.script).toEqual(decodeAddress(recipients[i]!.address, regtest));
          });
          // Never below the asked rate for the estimated signed size.
          expect(fee * 1000n).toBeGreaterThanOrEqual(BigInt(feeRateMilli) * BigInt(created.record.tx_full_size) - 999n);
          await service.delete({ userName: 'alice', isAdmin: false }, alias, created.txid);
          count(subtractFrom === undefined ? 'created' : 'created with fee subtracted');
        },
      ),
      { numRuns: 150 },
    );
    // The generator reaches both outcomes often enough to mean something.
    expect(outcomes.get('created') ?? 0).toBeGreaterThan(15);
    expect(outcomes.get('created with fee subtracted') ?? 0).toBeGreaterThan(5);
  }, 120_000);
});
