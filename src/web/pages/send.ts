/**
 * Sending: recipients, fee rate with the node's estimates, replaceable or not, coins chosen on the
 * coins view; a preview of what creation would build (the PSBT service's own planning, stored
 * nowhere), then creation. Every refusal of the service is shown next to the field it concerns.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PsbtRecord } from '../../services/psbts/record.js';
import type { SpendingPathView } from '../../services/miniscript-wallet.js';
import { timelockText } from './wallet-paths.js';

type Preview = { record: PsbtRecord; changeOutputs: number[] };
import { ServiceError } from '../../services/errors.js';
import type { WebSession } from '../../services/web-sessions.js';
import { field, fieldList, respond, sessionOf, walletUrl, type WebDeps } from '../context.js';
import { btcText, satText } from '../format.js';
import { html, type Html } from '../html.js';
import { csrfField, fieldError, fieldErrorMap } from '../layout.js';

/** Blocks to confirmation for the fast, normal and slow estimates. */
const TARGETS = [['Fast', 2], ['Normal', 6], ['Slow', 24]] as const;

/** Refusals that name no field, placed next to the one they concern. */
const FIELD_OF_CODE: Record<string, string> = {
  insufficient_funds: '/recipients',
  amount_below_dust: '/recipients',
  transaction_too_large: '/recipients',
  invalid_selection: '/recipients',
  wrong_network: '/recipients',
  fee_rate_too_low: '/fee_rate',
  fee_rate_too_high: '/fee_rate',
  fee_estimate_unavailable: '/fee_rate',
  cannot_replace: '/rbf_tx_id',
  timelock_not_met: '/spending_path',
  transaction_confirmed: '/rbf_tx_id',
  transaction_not_pending: '/rbf_tx_id',
  transaction_not_found: '/rbf_tx_id',
  input_reserved: '/inputs',
  input_frozen: '/inputs',
  unknown_input: '/inputs',
  coins_reserved: '/inputs',
};

/** Refusals whose API wording names request fields, said for a person filling the form. */
const WEB_WORDING: Record<string, string> = {
  fee_estimate_unavailable: 'The node has no fee estimate yet: enter a fee rate.',
};

interface Recipient {
  address: string;
  amount: string;
  unit: string;
  label: string;
}

interface SendValues {
  recipients: Recipient[];
  paysFee: string;
  feeRate: string;
  rbf: boolean;
  coins: string[];
  bump: string;
  /** Everything spendable to the one recipient, the fee taken from it. */
  sendMax: boolean;
  /** Miniscript wallets: the spending path's id ('' : the primary). */
  path?: string;
}

function valuesOf(body: unknown): SendValues {
  const addresses = fieldList(body, 'address');
  const amounts = fieldList(body, 'amount');
  const units = fieldList(body, 'unit');
  const labels = fieldList(body, 'rlabel');
  return {
    recipients: addresses.map((address, i) => ({ address, amount: amounts[i] ?? '', unit: units[i] ?? 'btc', label: labels[i] ?? '' })),
    paysFee: field(body, 'pays_fee'),
    feeRate: field(body, 'fee_rate'),
    rbf: field(body, 'rbf') === 'on',
    coins: fieldList(body, 'coin'),
    bump: field(body, 'bump'),
    sendMax: field(body, 'send_max') === 'on',
    path: field(body, 'spending_path'),
  };
}

/** The PSBT service's creation input from the form (amounts stay decimal text: parsed exactly there). */
function creationInput(v: SendValues, spendable: bigint): Record<string, unknown> {
  // Sending everything: the amount is every coin selection may take, the fee paid out of it (the API's
  // `subtract`), so the PSBT spends them all and has no change.
  const subtract = v.sendMax || /^\d{1,4}$/.test(v.paysFee);
  const amountOf = (r: Recipient) => (v.sendMax ? { amount: String(spendable), unit: 'sat' } : { amount: r.amount.trim().replaceAll(',', '').replaceAll('_', ''), unit: r.unit });
  return {
    recipients: v.recipients.map((r) => ({ address: r.address.trim(), ...amountOf(r), ...(r.label.trim() ? { label: r.label.trim() } : {}) })),
    ...(v.feeRate.trim() !== '' ? { fee_rate: v.feeRate.trim() } : {}),
    rbf: v.rbf,
    ...(subtract ? { subtract: true, subtract_from: v.sendMax ? 0 : Number(v.paysFee) } : {}),
    ...(v.coins.length > 0
      ? {
          inputs: v.coins.map((c) => {
            const [txid = '', vout = ''] = c.split(':');
            return { txid, vout: /^\d{1,10}$/.test(vout) ? Number(vout) : vout };
          }),
        }
      : {}),
    ...(v.bump ? { rbf_tx_id: v.bump } : {}),
    ...(v.path ? { spending_path: v.path } : {}),
  };
}

const rateText = (satPerKvb: bigint) => {
  const whole = satPerKvb / 1000n;
  const frac = (satPerKvb % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
};

function recipientRow(r: Recipient, i: number, v: SendValues, errors: Map<string, string>): Html {
  const p = `/recipients/${i}`;
  return html`<fieldset class="recipient" data-recipient-row>
  <legend>Recipient ${i + 1}</legend>
  <label for="address-${i}">Address</label>
  <input id="address-${i}" name="address" value="${r.address}" spellcheck="false" autocomplete="off" required>
  ${fieldError(errors, `${p}/address`, `address-${i}`)}
  <div class="amount-row">
    <div><label for="amount-${i}">Amount</label>
    <input id="amount-${i}" name="amount" value="${r.amount}" inputmode="decimal" class="amount-input" required></div>
    <div><label for="unit-${i}">Unit</label>
    <select id="unit-${i}" name="unit"><option value="btc"${r.unit !== 'sat' ? html` selected` : ''}>BTC</option><option value="sat"${r.unit === 'sat' ? html` selected` : ''}>sat</option></select></div>
  </div>
  ${fieldError(errors, `${p}/amount`, `amount-${i}`)}${fieldError(errors, `${p}/unit`, `unit-${i}`)}
  <label for="rlabel-${i}">Label</label>
  <input id="rlabel-${i}" name="rlabel" value="${r.label}" maxlength="256">
  ${fieldError(errors, `${p}/label`, `rlabel-${i}`)}
  <label class="check"><input type="radio" name="pays_fee" value="${i}"${v.paysFee === String(i) ? html` checked` : ''}> This recipient pays the fee</label>
  <button type="button" class="link" data-remove-row>Remove this recipient</button>
</fieldset>`;
}

function previewBox({ record: preview, changeOutputs }: Preview, v: SendValues): Html {
  const inputs = preview.tx.vin.map((vin, i) => {
    if (!('txid' in vin)) return html``;
    const input = preview.inputs[i];
    const btc = input?.witness_utxo?.amount ?? input?.non_witness_utxo?.vout[vin.vout]?.value;
    return html`<tr><td class="mono">${vin.txid}:${vin.vout}</td><td class="amount">${btc === undefined ? '' : html`${btcText(Math.round(btc * 1e8))} BTC`}</td></tr>`;
  });
  const change = new Set(changeOutputs);
  const labelOf = (address: string) => v.recipients.find((r) => r.address.trim() === address)?.label.trim() ?? '';
  const feeSats = Math.round(preview.fee * 1e8);
  let leaving = feeSats;
  const outputs = preview.tx.vout.map((o, i) => {
    const address = o.scriptPubKey.addresses?.[0] ?? o.scriptPubKey.hex;
    const sats = Math.round(o.value * 1e8);
    if (!change.has(i)) leaving += sats;
    const label = change.has(i) ? '' : labelOf(address);
    return html`<tr><td>${label ? html`<div>${label}</div>` : ''}<span class="mono">${address}</span>${change.has(i) ? html` <span class="badge">change</span>` : ''}</td><td class="amount">${btcText(sats)} BTC</td></tr>`;
  });
  return html`<section class="preview" aria-labelledby="preview-title">
<h2 id="preview-title">What will happen</h2>
<dl class="facts">
  <div><dt>Leaving the wallet</dt><dd class="amount" data-total-leaving>${btcText(leaving)} BTC (${satText(leaving)} sat, fee included)</dd></div>
  <div><dt>Fee</dt><dd class="amount">${btcText(Math.round(preview.fee * 1e8))} BTC (${satText(Math.round(preview.fee * 1e8))} sat)</dd></div>
  <div><dt>Fee rate</dt><dd>${preview.fee_rate} sat/vB</dd></div>
  <div><dt>Size once signed</dt><dd>${preview.tx_full_size} vB</dd></div>
</dl>
<h3>Inputs</h3><table class="list"><tbody>${inputs}</tbody></table>
<h3>Outputs</h3><table class="list"><tbody>${outputs}</tbody></table>
</section>`;
}

/** A miniscript wallet's choice of spending path (the primary, or a recovery once its lock is reached). */
function pathChoice(paths: readonly SpendingPathView[] | undefined, v: SendValues, errors: Map<string, string>): Html {
  if (!paths || paths.length < 2) return html``;
  const options = paths.map((p) => html`<option value="${p.id}"${(v.path || 'primary') === p.id ? html` selected` : ''}>${p.id}: ${p.threshold} of ${p.keys.map((k) => k.label || k.fingerprint).join(', ')} (${timelockText(p)})</option>`);
  return html`<label for="spending_path">Spending path</label>
  <select id="spending_path" name="spending_path" data-spending-path>${options}</select>
  ${fieldError(errors, '/spending_path', 'spending-path')}`;
}

function sendForm(alias: string, session: WebSession, v: SendValues, errors: Map<string, string>, estimates: (bigint | null)[] | undefined, preview: Preview | undefined, spendable: bigint, paths?: readonly SpendingPathView[]): Html {
  const rows = (v.recipients.length > 0 ? v.recipients : [{ address: '', amount: '', unit: 'btc', label: '' }]).map((r, i) => recipientRow(r, i, v, errors));
  const estimateButtons = estimates
    ? TARGETS.map(([name, blocks], i) => {
        const rate = estimates[i];
        return rate == null
          ? html`<span class="muted">${name}: no estimate</span>`
          : html`<button type="button" class="small secondary" data-fee-rate="${rateText(rate)}">${name} (~${blocks} blocks): ${rateText(rate)} sat/vB</button>`;
      })
    : html`<span class="muted">The node gives no estimates now.</span>`;
  return html`<form method="post" action="${walletUrl(alias, '/send')}" class="stack wide" data-send-form>
  ${csrfField(session)}
  <p data-spendable>Available to spend: <span class="amount">${btcText(spendable)} BTC</span> <span class="muted">(${satText(spendable)} sat: coins that are confirmed or the wallet's own change, not frozen, not held by a pending PSBT)</span></p>
  ${v.bump ? html`<input type="hidden" name="bump" value="${v.bump}"><p class="notice">Replacing transaction <span class="mono">${v.bump}</span> with a higher fee.</p>${fieldError(errors, '/rbf_tx_id', 'bump')}` : ''}
  ${v.coins.map((c) => html`<input type="hidden" name="coin" value="${c}">`)}
  ${v.coins.length > 0 ? html`<p class="notice">Spending only the ${v.coins.length} selected coin(s).</p>${fieldError(errors, '/inputs', 'coins')}` : fieldError(errors, '/inputs', 'coins')}
  ${pathChoice(paths, v, errors)}
  <div data-recipient-rows>${rows}</div>
  ${fieldError(errors, '/recipients', 'recipients')}${fieldError(errors, '/subtract_from', 'pays-fee')}
  <label class="check"><input type="checkbox" name="send_max"${v.sendMax ? html` checked` : ''}> Send everything available to the one recipient, the fee taken from it (its amount is then ignored)</label>
  ${fieldError(errors, '/send_max', 'send-max')}
  <button type="button" data-add-row>Add a recipient</button>
  <label for="fee_rate">Fee rate (sat/vB; empty: the node's estimate for 6 blocks)</label>
  <input id="fee_rate" name="fee_rate" value="${v.feeRate}" inputmode="decimal" class="amount-input">
  <div class="estimates">${estimateButtons}</div>
  ${fieldError(errors, '/fee_rate', 'fee_rate')}
  <label class="check"><input type="checkbox" name="rbf"${v.rbf ? html` checked` : ''}> Replaceable (the fee can be raised later)</label>
  ${preview ? previewBox(preview, v) : ''}
  <div class="actions">
    <button type="submit" name="action" value="preview" class="secondary">Preview</button>
    <button type="submit" name="action" value="create">Create the PSBT</button>
  </div>
</form>`;
}

type SendRequest = FastifyRequest<{ Params: { alias: string }; Querystring: { bump?: string; coin?: string | string[] } }>;

export function registerSendPages(app: FastifyInstance, deps: WebDeps): void {
  const { services } = deps;

  async function estimates(): Promise<(bigint | null)[] | undefined> {
    try {
      return await services.psbts.feeEstimates(TARGETS.map(([, blocks]) => blocks));
    } catch (error) {
      if (error instanceof ServiceError && error.kind === 'unavailable') return undefined;
      throw error;
    }
  }

  async function show(request: SendRequest, reply: FastifyReply, v: SendValues, errors: Map<string, string>, preview: Preview | undefined, flash?: string, status = 200) {
    const session = sessionOf(request);
    const { alias } = request.params;
    const wallet = await services.wallets.reads.details(session.principal, alias, { limit: 0 }, { utxos: false });
    const spendable = await services.psbts.spendable(session.principal, alias);
    const body = html`<p><a href="${walletUrl(alias)}">← ${wallet.name}</a></p><h1>Send</h1>
${sendForm(alias, session, v, errors, await estimates(), preview, spendable, wallet.spending_paths)}`;
    // A refusal already shown next to its field is not repeated at the top.
    const shownAtField = flash !== undefined && [...errors.values()].includes(flash);
    return respond(reply, deps, request, { title: `Send from ${wallet.name}`, body, ...(flash && !shownAtField ? { flash: { kind: 'error' as const, text: flash } } : {}) }, status);
  }

  app.get('/wallets/:alias/send', async (request: SendRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    await services.wallets.access.resolve(session.principal, alias, 'spend');
    const coins = request.query.coin === undefined ? [] : [request.query.coin].flat();
    const v: SendValues = { recipients: [], paysFee: '', feeRate: '', rbf: true, coins, bump: '', sendMax: false };
    if (request.query.bump) {
      const draft = await services.psbts.replacementDraft(session.principal, alias, request.query.bump);
      v.bump = draft.txid;
      v.recipients = draft.recipients.map((r) => ({ address: r.address, amount: btcText(r.amountSat), unit: 'btc', label: '' }));
      // At least the original rate plus the incremental relay fee is needed: suggest the original plus 1 sat/vB.
      v.feeRate = rateText((draft.feeSat * 1000n) / BigInt(draft.vsize) + 1000n);
    }
    return show(request, reply, v, new Map(), undefined);
  });

  app.post('/wallets/:alias/send', async (request: SendRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    const v = valuesOf(request.body);
    if (v.sendMax && (v.recipients.length !== 1 || v.coins.length > 0 || v.bump)) {
      const why = v.recipients.length !== 1 ? 'Sending everything goes to one recipient: remove the others' : 'Sending everything spends every available coin: give an amount to spend chosen coins or to replace a transaction';
      return show(request, reply, v, new Map([['/send_max', why]]), undefined, undefined, 400);
    }
    const input = creationInput(v, v.sendMax ? await services.psbts.spendable(session.principal, alias) : 0n);
    try {
      if (field(request.body, 'action') === 'create') {
        const created = await services.psbts.create(session.principal, alias, input);
        return reply.redirect(walletUrl(alias, `/psbts/${created.txid}`), 303);
      }
      const preview = await services.psbts.preview(session.principal, alias, input);
      return show(request, reply, v, new Map(), preview);
    } catch (error) {
      if (!(error instanceof ServiceError) || error.kind === 'not_found' || error.kind === 'forbidden' || error.kind === 'unauthenticated') throw error;
      const errors = fieldErrorMap(error.details.errors);
      const path = FIELD_OF_CODE[error.code];
      const message = WEB_WORDING[error.code] ?? error.message;
      if (path !== undefined && !errors.has(path) && (error.details.errors ?? []).length === 0) errors.set(path, message);
      const status = error.kind === 'invalid_input' ? 400 : error.kind === 'unprocessable' ? 422 : error.kind === 'conflict' ? 409 : 503;
      return show(request, reply, v, errors, undefined, message, status);
    }
  });
}
