/**
 * A PSBT collecting signatures: per cosigner whether their key signed every input, how many
 * signatures are still needed; the PSBT as a file, as base64 text and as an animated QR code; signed
 * copies back by file, pasted text or camera; then broadcast or delete. Once sent (by this page or any
 * other way the sync sees), the page says in which transaction, with its confirmations.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../services/errors.js';
import { field, respond, sessionOf, walletUrl, type WebDeps } from '../context.js';
import { btcText, satText, shortId } from '../format.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../layout.js';
import { cosignerStatus, type CosignerStatus } from './psbt-status.js';

type PsbtRequest = FastifyRequest<{ Params: { alias: string; txid: string }; Querystring: { sent?: string; added?: string } }>;

/** PSBTs in pasted text: whitespace separates copies; a line that does not start a PSBT continues the one before (wrapped text). */
export function splitPsbtCopies(text: string): string[] {
  const copies: string[] = [];
  for (const token of text.split(/\s+/).filter((t) => t !== '')) {
    if (copies.length === 0 || token.startsWith('cHNidP8')) copies.push(token);
    else copies[copies.length - 1] += token;
  }
  return copies;
}

/** Transactions read for a sent payment's confirmations: a payment just sent is among the newest. */
const RECENT_TRANSACTIONS = 50;

const signersOf = (statuses: readonly CosignerStatus[]) => statuses.filter((s) => s.signedInputs > 0).map((s) => s.fingerprint);

function sentLine(alias: string, sentTxid: string, confirmations: number | undefined): Html {
  const seen = confirmations === undefined ? 'waiting for the wallet to see it' : confirmations === 0 ? 'unconfirmed' : `${confirmations} confirmation${confirmations === 1 ? '' : 's'}`;
  return html`<p class="status-line" role="status" data-psbt-state="sent" data-sent-txid="${sentTxid}">Sent in transaction <a class="mono" href="${walletUrl(alias, `?view=transactions#tx-${sentTxid}`)}">${sentTxid}</a> (${seen}).</p>`;
}

/** The notice after an upload: whose signatures it added, or that it added none. */
function addedNotice(added: string | undefined, statuses: readonly CosignerStatus[]): { kind: 'notice'; text: string } | undefined {
  if (added === undefined) return undefined;
  if (added === 'none') return { kind: 'notice', text: 'The upload added no signature: its copies carry only signatures already collected.' };
  const names = added
    .split(',')
    .map((f) => statuses.find((s) => s.fingerprint === f))
    .filter((s) => s !== undefined)
    .map((s) => (s.label ? `${s.label} (${s.fingerprint})` : s.fingerprint));
  if (names.length === 0) return undefined;
  return { kind: 'notice', text: `Added the signature${names.length === 1 ? '' : 's'} of ${names.join(', ')}.` };
}

export function registerPsbtPages(app: FastifyInstance, deps: WebDeps): void {
  const { services } = deps;

  async function renderPsbtPage(request: PsbtRequest, reply: FastifyReply, refusal?: ServiceError) {
    const session = sessionOf(request);
    const { alias, txid } = request.params;
    const { access } = await services.wallets.access.resolveWithAccess(session.principal, alias);
    const fingerprint = await services.wallets.reads.fingerprint(session.principal, alias); // before the data it stands for
    const wallet = await services.wallets.reads.details(session.principal, alias, { limit: RECENT_TRANSACTIONS }, { utxos: false });
    const { status: stored, record, base64, sentTxid, finalSigners } = await services.psbts.outcome(session.principal, alias, txid);
    // Sent: the sync saw its transaction, or this browser's broadcast was just accepted (the sync follows).
    const sent = sentTxid !== null && (stored === 'broadcast' || request.query.sent === sentTxid);
    const statuses = cosignerStatus(record, wallet.keys, finalSigners);
    const needed = Math.max(0, wallet.sigs_required - record.sigs_count);
    const canSign = access !== 'read' && stored === 'pending' && !sent;
    const cosigners = statuses.map(
      (s) => html`<tr><td>${s.label || html`<span class="muted">no label</span>`}</td><td class="mono">${s.fingerprint}</td>
<td>${s.signedInputs === s.inputs ? html`<span class="badge ok">signed</span>` : s.signedInputs === 0 ? html`<span class="badge">not signed</span>` : html`<span class="badge">${s.signedInputs} of ${s.inputs} inputs</span>`}</td></tr>`,
    );
    const statusLine = sent
      ? sentLine(alias, sentTxid!, wallet.txlist.find((t) => t.txid === sentTxid)?.confirmations)
      : stored === 'invalid'
        ? html`<p class="status-line" role="status" data-psbt-state="invalid">This payment can no longer be sent: a coin it spends was spent by another transaction.</p>`
        : stored === 'broadcast'
          ? html`<p class="status-line" role="status" data-psbt-state="sent">Sent: the wallet holds its transaction (<a href="${walletUrl(alias, '?view=transactions')}">transactions</a>).</p>`
          : html`<p class="status-line" role="status" data-psbt-state="pending" data-signatures-needed="${needed}">${needed === 0 ? 'Signed enough to broadcast.' : `${needed} more signature${needed === 1 ? '' : 's'} needed (${record.sigs_count} of ${wallet.sigs_required}).`}</p>`;
    const notice = refusal ? undefined : addedNotice(request.query.added, statuses);
    const outputs = record.tx.vout.map((o) => {
      const isRecipient = record.address.includes(o.scriptPubKey.addresses?.[0] ?? '\u0000');
      const sats = Math.round(o.value * 1e8);
      return html`<tr><td class="mono">${o.scriptPubKey.addresses?.[0] ?? o.scriptPubKey.hex}${isRecipient ? '' : html` <span class="badge">change</span>`}</td><td class="amount">${btcText(sats)} BTC<span class="sat">${satText(sats)} sat</span></td></tr>`;
    });
    const fileName = `${txid.slice(0, 16)}.psbt`;
    const body = html`<p><a href="${walletUrl(alias)}">← ${wallet.name}</a></p>
<h1>Payment <span class="mono">${shortId(record.tx.txid)}</span></h1>
${statusLine}
<section><h2>Cosigners</h2>
<table class="list" data-cosigners><thead><tr><th scope="col">Key</th><th scope="col">Fingerprint</th><th scope="col">Signed</th></tr></thead><tbody>${cosigners}</tbody></table></section>
<section><h2>Outputs</h2><table class="list"><tbody>${outputs}</tbody></table>
<p>Fee ${btcText(Math.round(record.fee * 1e8))} BTC · ${record.fee_rate} sat/vB · about ${record.tx_full_size} vB signed</p></section>
<section><h2>Sign on a device</h2>
<p><a class="button" href="${walletUrl(alias, `/psbts/${txid}/file`)}" download="${fileName}">Download ${fileName}</a>
<button type="button" data-copy="#psbt-base64" class="secondary">Copy as base64</button></p>
<textarea id="psbt-base64" readonly rows="4" class="mono" aria-label="The PSBT as base64">${base64}</textarea>
<div data-animated-qr data-psbt-base64="${base64}"></div>
</section>
${canSign
  ? html`<section id="add-signatures"><h2>Add signatures</h2>
<form method="post" action="${walletUrl(alias, `/psbts/${txid}/sign`)}" class="stack wide" data-sign-form>
  ${csrfField(session)}
  <label for="psbt-files">Signed PSBT files</label>
  <input id="psbt-files" type="file" accept=".psbt,.txt,application/octet-stream" multiple data-psbt-files>
  <label for="signed">Or paste signed PSBTs (base64, one per line)</label>
  <textarea id="signed" name="psbt" rows="4" class="mono" spellcheck="false"${refusal ? html` aria-describedby="signed-error"` : ''}></textarea>
  ${refusal ? html`<span class="field-error" id="signed-error" role="alert">${refusal.message}</span>` : ''}
  <div data-qr-scanner></div>
  <button type="submit">Add the signatures</button>
</form></section>
<section class="actions">
  <form method="post" action="${walletUrl(alias, `/psbts/${txid}/broadcast`)}" class="inline">${csrfField(session)}<button type="submit"${needed > 0 ? html` disabled` : ''}>Broadcast</button></form>
  <form method="post" action="${walletUrl(alias, `/psbts/${txid}/delete`)}" class="inline" data-confirm="Delete this PSBT and the signatures collected?">${csrfField(session)}<button type="submit" class="danger">Delete</button></form>
</section>`
  : ''}`;
    const status = refusal ? (refusal.kind === 'invalid_input' ? 400 : refusal.kind === 'conflict' ? 409 : 422) : 200;
    const flash = refusal ? { kind: 'error' as const, text: `The signatures were not added: ${refusal.message}` } : notice;
    return respond(reply, deps, request, { title: 'Payment', body, flash, live: { url: walletUrl(alias, '/live'), fingerprint } }, status);
  }

  app.get('/wallets/:alias/psbts/:txid', (request: PsbtRequest, reply) => renderPsbtPage(request, reply));

  app.get('/wallets/:alias/psbts/:txid/file', async (request: PsbtRequest, reply) => {
    const session = sessionOf(request);
    const { psbt } = await services.psbts.get(session.principal, request.params.alias, request.params.txid);
    return reply
      .type('application/octet-stream')
      .header('Content-Disposition', `attachment; filename="${request.params.txid.toLowerCase().slice(0, 16)}.psbt"`)
      .send(Buffer.from(psbt));
  });

  app.post('/wallets/:alias/psbts/:txid/sign', async (request: PsbtRequest, reply) => {
    const session = sessionOf(request);
    const { alias, txid } = request.params;
    const copies = splitPsbtCopies(field(request.body, 'psbt'));
    let added: string[] = [];
    try {
      if (copies.length === 0) throw new ServiceError('invalid_input', 'invalid_psbt', 'No signed PSBT was given: choose the files or paste the text');
      const { keys } = await services.wallets.reads.details(session.principal, alias, { limit: 0 }, { utxos: false });
      const signers = async () => {
        const { record, finalSigners } = await services.psbts.outcome(session.principal, alias, txid);
        return signersOf(cosignerStatus(record, keys, finalSigners));
      };
      const before = await signers();
      // Each copy is merged on its own: copies merged before a refused one keep their signatures.
      let after = before;
      for (const copy of copies) {
        await services.psbts.update(session.principal, alias, txid, copy);
        after = await signers();
      }
      added = after.filter((f) => !before.includes(f));
    } catch (error) {
      const shownNextToTheField = error instanceof ServiceError && (error.kind === 'invalid_input' || error.kind === 'unprocessable' || (error.kind === 'conflict' && error.code !== 'psbt_busy'));
      if (!shownNextToTheField) throw error;
      return renderPsbtPage(request, reply, error);
    }
    return reply.redirect(walletUrl(alias, `/psbts/${txid}?added=${added.length === 0 ? 'none' : added.join(',')}`), 303);
  });

  app.post('/wallets/:alias/psbts/:txid/broadcast', async (request: PsbtRequest, reply) => {
    const session = sessionOf(request);
    const { alias, txid } = request.params;
    const sent = await services.psbts.broadcast(session.principal, alias, txid);
    return reply.redirect(walletUrl(alias, `/psbts/${txid}?sent=${sent.txid}`), 303);
  });

  app.post('/wallets/:alias/psbts/:txid/delete', async (request: PsbtRequest, reply) => {
    const session = sessionOf(request);
    await services.psbts.delete(session.principal, request.params.alias, request.params.txid);
    return reply.redirect(walletUrl(request.params.alias), 303);
  });
}
