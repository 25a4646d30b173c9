/** A miniscript wallet's spending paths on its page: each path, when each coin's recovery opens, and the refresh action. */
import type { WalletDetails, UtxoView } from '../../services/wallet-format.js';
import { DEFAULT_TIMELOCK_WARNING_BLOCKS, expiringCoins, type SpendingPathView } from '../../services/miniscript-wallet.js';
import { walletUrl } from '../context.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../layout.js';
import type { WebSession } from '../../services/web-sessions.js';

/** Blocks a day, at the ten-minute target. */
const BLOCKS_PER_DAY = 144;

export function timelockText(path: SpendingPathView): string {
  const t = path.timelock;
  if (t === null) return 'no lock';
  if (t.type === 'relative_blocks') return `${t.blocks} blocks (about ${Math.round(t.blocks / BLOCKS_PER_DAY)} days) after a coin is received`;
  if (t.type === 'absolute_height') return `from block ${t.height + 1}`;
  if (t.type === 'relative_time') return `${t.seconds} seconds after a coin is received`;
  return `from ${new Date(t.time * 1000).toISOString().slice(0, 10)}`;
}

const keysText = (path: SpendingPathView) => path.keys.map((k) => k.label || k.fingerprint).join(', ');

/** The paths, the coins whose recovery opens within the warning window, and (for spenders) the refresh form. */
export function spendingPathsSection(d: WalletDetails, coins: readonly UtxoView[], session: WebSession, spender: boolean): Html {
  const paths = d.spending_paths;
  if (!paths) return html``;
  // A confirmed coin's primary height is its block: with its confirmations, the tip its list was read at.
  const confirmed = coins.find((c) => c.confirmations > 0 && c.spendable_from?.primary !== undefined);
  const tipHeight = confirmed ? confirmed.spendable_from!.primary! + confirmed.confirmations - 1 : 0;
  const expiring = expiringCoins(coins, tipHeight, DEFAULT_TIMELOCK_WARNING_BLOCKS);
  const rows = paths.map((p) => html`<tr data-path="${p.id}"><td>${p.id}</td><td>${p.threshold} of ${keysText(p)}</td><td>${timelockText(p)}</td></tr>`);
  const coinRows = expiring.map((c) => html`<tr data-expiring="${c.txid}:${c.vout}"><td><code>${c.txid.slice(0, 12)}…:${c.vout}</code></td><td>${c.spending_path}</td><td>block ${c.from_height} (${Math.max(0, c.from_height - tipHeight - 1)} blocks, about ${Math.round(Math.max(0, c.from_height - tipHeight - 1) / BLOCKS_PER_DAY)} days)</td></tr>`);
  const refresh = spender
    ? html`<form method="post" action="${walletUrl(d.alias, '/refresh')}" class="inline">${csrfField(session)}<label>Fee rate (sat/vB, empty: estimated) <input name="fee_rate" inputmode="decimal" size="6"></label> <button type="submit">Refresh these coins</button></form>`
    : '';
  return html`<section data-spending-paths><h2>Spending paths</h2>
<table><thead><tr><th>Path</th><th>Signers</th><th>Timelock</th></tr></thead><tbody>${rows}</tbody></table>
${expiring.length > 0
    ? html`<p class="notice" role="note" data-timelock-notice>${expiring.length} coin(s) can soon be spent by a recovery path. Spending them back to the wallet by the primary path (a refresh) starts their locks again.</p>
<table><thead><tr><th>Coin</th><th>Path</th><th>Recovery opens at</th></tr></thead><tbody>${coinRows}</tbody></table>${refresh}`
    : ''}</section>`;
}
