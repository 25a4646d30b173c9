/** The parts of the wallet page: balances, receive, transactions, coins, addresses, pending PSBTs. */
import QRCode from 'qrcode';
import type { AddressEntry, TxListEntry, UtxoView, WalletDetails } from '../../services/wallet-format.js';
import type { WebSession } from '../../services/web-sessions.js';
import { walletUrl } from '../context.js';
import { btcText, dateText, satText, shortId } from '../format.js';
import { html, trusted, type Html } from '../html.js';
import { csrfField } from '../layout.js';
import { amountCell } from './wallets.js';

export type Access = 'owner' | 'spend' | 'read';
export const canSpend = (access: Access) => access !== 'read';

/** `trustedUnconfirmed`: the wallet's own unconfirmed change, which the API counts as confirmed (as Core does); shown as unconfirmed here. */
export function balances(d: WalletDetails, trustedUnconfirmed: number): Html {
  const b = d.balance;
  const change = Math.min(trustedUnconfirmed, b.confirmed_sat); // read a moment apart: never a negative confirmed balance
  const item = (name: string, sats: number) => html`<div><dt>${name}</dt><dd class="amount"><span class="btc">${btcText(sats)} BTC</span><span class="sat">${satText(sats)} sat</span></dd></div>`;
  return html`<dl class="balances">${item('Total', b.total_sat)}${item('Confirmed', b.confirmed_sat - change)}${item('Unconfirmed', b.unconfirmed_sat + change)}${item('Immature', b.immature_sat)}</dl>`;
}

export async function receiveBox(d: WalletDetails, address: string, index: number, session: WebSession): Promise<Html> {
  const svg = await QRCode.toString(`bitcoin:${address}`, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  const paths = d.keys.map((k) => html`<li><code>[${k.fingerprint}${k.derivation.replace(/^m/, '')}]/0/${index}</code>${k.label ? html` · ${k.label}` : ''}</li>`);
  return html`<section class="receive" aria-labelledby="receive-title">
<h2 id="receive-title">Receive</h2>
<div class="receive-body">
  <div class="qr" role="img" aria-label="QR code of the address">${trusted(svg)}</div>
  <div>
    <p class="address" id="receive-address" data-receive-address>${address}</p>
    <p><button type="button" data-copy="#receive-address">Copy address</button></p>
    <p class="muted">Receive address #${index}; derivation:</p>
    <ul class="paths">${paths}</ul>
    <form method="post" action="${walletUrl(d.alias, '/receive/next')}">${csrfField(session)}<button type="submit" class="secondary">Another new address</button></form>
  </div>
</div>
</section>`;
}

function labelForm(d: WalletDetails, address: string | null, label: string, session: WebSession, access: Access, back: string): Html {
  if (!canSpend(access) || address === null) return html`${label}`;
  return html`<form method="post" action="${walletUrl(d.alias, '/labels')}" class="inline-edit">${csrfField(session)}
<input type="hidden" name="address" value="${address}"><input type="hidden" name="back" value="${back}">
<input name="label" value="${label}" placeholder="Label" aria-label="Label of ${address}" maxlength="256"><button type="submit" class="small">Save</button></form>`;
}

export function transactionsTable(d: WalletDetails, txs: readonly TxListEntry[], session: WebSession, access: Access, back: string): Html {
  if (txs.length === 0) return html`<p class="empty">No transactions yet: share the receive address to get paid.</p>`;
  const rows = txs.map((t) => {
    const bumpable = canSpend(access) && t.confirmations === 0 && t.category !== 'receive' && t['bip125-replaceable'] === 'yes';
    return html`<tr data-txid="${t.txid}" id="tx-${t.txid}">
  <td>${t.confirmations === 0 ? html`<span class="badge">unconfirmed</span>` : html`${t.confirmations} conf.`}<div class="muted">${dateText(t.time)}</div></td>
  <td>${t.category}<div class="muted mono" title="${t.txid}">${shortId(t.txid)}</div></td>
  <td class="label-cell">${labelForm(d, t.address, t.label, session, access, back)}<div class="muted mono">${t.address ?? ''}</div></td>
  ${amountCell(t.amount_sat)}
  <td>${bumpable ? html`<a class="button small" href="${walletUrl(d.alias, `/send?bump=${t.txid}`)}">Bump fee</a>` : ''}</td>
</tr>`;
  });
  return html`<table class="list"><thead><tr><th scope="col">Status</th><th scope="col">Kind</th><th scope="col">Label</th><th scope="col" class="amount">Amount</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function coinsTable(d: WalletDetails, coins: readonly (UtxoView & { frozen: boolean })[], session: WebSession, access: Access, back: string): Html {
  if (coins.length === 0) return html`<p class="empty">No coins yet.</p>`;
  const spend = canSpend(access);
  const rows = coins.map((c) => {
    const outpoint = `${c.txid}:${c.vout}`;
    return html`<tr>
  ${spend ? html`<td><input type="checkbox" name="coin" value="${outpoint}" form="coin-control" aria-label="Spend ${outpoint}"${c.frozen || c.reserved_by ? html` disabled` : ''}></td>` : ''}
  <td class="mono" title="${outpoint}">${shortId(c.txid)}:${c.vout}<div class="muted">${c.confirmations} conf.${c.reserved_by ? html` · held by <a href="${walletUrl(d.alias, `/psbts/${c.reserved_by}`)}">a PSBT</a>` : ''}${c.frozen ? ' · frozen' : ''}</div></td>
  <td class="label-cell">${spend ? html`<form method="post" action="${walletUrl(d.alias, '/coins')}" class="inline-edit">${csrfField(session)}
    <input type="hidden" name="outpoint" value="${outpoint}"><input type="hidden" name="back" value="${back}">
    <input name="label" value="${c.label}" placeholder="Label" aria-label="Label of coin ${outpoint}" maxlength="256"><button type="submit" class="small">Save</button>
    <button type="submit" class="small secondary" name="frozen" value="${c.frozen ? 'false' : 'true'}">${c.frozen ? 'Unfreeze' : 'Freeze'}</button></form>` : c.label}
    <div class="muted mono">${c.address}</div></td>
  ${amountCell(c.amount_sat)}
</tr>`;
  });
  return html`${spend ? html`<form id="coin-control" method="get" action="${walletUrl(d.alias, '/send')}"><button type="submit">Send from the selected coins</button></form>` : ''}
<table class="list"><thead><tr>${spend ? html`<th scope="col"><span class="visually-hidden">Select</span></th>` : ''}<th scope="col">Coin</th><th scope="col">Label</th><th scope="col" class="amount">Amount</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function addressesTable(d: WalletDetails, entries: readonly AddressEntry[], session: WebSession, access: Access, back: string): Html {
  const rows = entries.map(
    (a) => html`<tr><td>${a.index}</td><td class="mono">${a.address}</td><td class="label-cell">${labelForm(d, a.address, a.label, session, access, back)}</td><td>${a.used ? 'used' : 'unused'}</td></tr>`,
  );
  return html`<table class="list"><thead><tr><th scope="col">#</th><th scope="col">Address</th><th scope="col">Label</th><th scope="col">Use</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function pager(base: string, pageNumber: number, hasMore: boolean): Html {
  const sep = base.includes('?') ? '&' : '?';
  return html`<nav class="pager" aria-label="Pages">${pageNumber > 1 ? html`<a href="${base}${sep}page=${pageNumber - 1}">Newer</a>` : ''}<span>Page ${pageNumber}</span>${hasMore ? html`<a href="${base}${sep}page=${pageNumber + 1}">Older</a>` : ''}</nav>`;
}

export function pendingPsbts(d: WalletDetails, psbts: readonly { txid: string; record: { amount: number[]; sigs_count: number; fee: number } }[]): Html {
  if (psbts.length === 0) return html``;
  const rows = psbts.map(
    (p) => html`<li><a href="${walletUrl(d.alias, `/psbts/${p.txid}`)}" class="mono">${shortId(p.txid)}</a> · ${p.record.sigs_count} of ${d.sigs_required} signatures · pays ${btcText(p.record.amount.reduce((a, b) => a + Math.round(b * 1e8), 0))} BTC</li>`,
  );
  return html`<section><h2>Waiting for signatures</h2><ul>${rows}</ul></section>`;
}
