/** The wallet page (overview with receive, transactions, coins, addresses) and its small actions. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { singleSignaturePathWarning } from '../../core/descriptor/index.js';
import { ServiceError } from '../../services/errors.js';
import { isInconsistentRows } from '../../services/wallet-state.js';
import { field, respond, sessionOf, walletUrl, type WebDeps } from '../context.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../layout.js';
import { localPath } from '../local-path.js';
import { spendingPathsSection } from './wallet-paths.js';
import { addressesTable, balances, canSpend, coinsTable, pager, pendingPsbts, receiveBox, transactionsTable } from './wallet-views.js';

type WalletRequest = FastifyRequest<{ Params: { alias: string }; Querystring: { view?: string; page?: string; receive?: string; branch?: string; broadcast?: string } }>;

const TX_PAGE = 50;
const COIN_PAGE = 100;
const ADDRESS_PAGE = 50;
/** Coins read for the recovery notice of a miniscript wallet. */
const PATH_COINS = 500;
const VIEWS = ['overview', 'transactions', 'coins', 'addresses'] as const;

/** Why the page shows the wallet's receive address rather than the one a link asked for. */
const RECEIVE_NOTICES = {
  notHandedOut: 'That address was not handed out by this wallet, so a payment to it might not be seen: showing the wallet\'s receive address instead.',
  used: 'That address has already received a payment: showing the wallet\'s receive address instead.',
} as const;

function pageNumber(text: string | undefined): number {
  return text !== undefined && /^[1-9]\d{0,5}$/.test(text) ? Number(text) : 1;
}

/** Only a path of this wallet's pages may be gone back to after a small action. */
function backTo(alias: string, value: string): string {
  const path = localPath(value);
  return path !== undefined && path.startsWith(walletUrl(alias)) ? path : walletUrl(alias);
}

export function registerWalletPages(app: FastifyInstance, deps: WebDeps): void {
  const { services } = deps;

  app.get('/wallets/:alias', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    const { principal } = session;
    const { alias } = request.params;
    const fingerprint = await services.wallets.reads.fingerprint(principal, alias); // before the data it stands for
    const view = VIEWS.find((v) => v === request.query.view) ?? 'overview';
    const n = pageNumber(request.query.page);
    const { wallet, access } = await services.wallets.access.resolveWithAccess(principal, alias);
    const limit = view === 'transactions' ? TX_PAGE + 1 : 10;
    let details;
    try {
      details = await services.wallets.reads.details(principal, alias, { limit, offset: view === 'transactions' ? (n - 1) * TX_PAGE : 0 }, { utxos: false });
    } catch (error) {
      if (!isInconsistentRows(error)) throw error;
      // Its stored rows are damaged: the page says so and offers the way out, the rescan, to the owner.
      const rescan = access === 'owner'
        ? html`<form method="post" action="${walletUrl(alias, '/rescan')}">${csrfField(session)}<button type="submit">Rescan the wallet</button></form>`
        : html`<p>Ask the wallet's owner to rescan it.</p>`;
      const body = html`<h1>${wallet.name}</h1>
<p class="scan error" role="alert" data-wallet-error="${error.code}">${error.message}.</p>
${rescan}
<p><a href="/">Back to the wallets</a></p>`;
      return respond(reply, deps, request, { title: wallet.name, body }, 503);
    }
    const trustedUnconfirmed = await services.wallets.coins.trustedUnconfirmed(principal, alias);
    const here = walletUrl(alias, view === 'overview' ? '' : `?view=${view}${n > 1 ? `&page=${n}` : ''}`);
    let content: Html;
    let receiveNotice: string | undefined;
    if (view === 'overview') {
      let address = details.address;
      let index = details.address_index;
      const asked = request.query.receive;
      if (asked !== undefined) {
        // Only an address no one else is handed out and the sync watches is shown as one to pay.
        const entry = /^\d{1,10}$/.test(asked) ? await services.wallets.reads.shownAgainReceive(principal, alias, Number(asked)) : undefined;
        if (entry && !entry.used) ({ address, index } = entry);
        else receiveNotice = entry ? RECEIVE_NOTICES.used : RECEIVE_NOTICES.notHandedOut;
      }
      const psbts = await services.psbts.list(principal, alias);
      const coins = details.spending_paths ? (await services.wallets.reads.utxoPage(principal, alias, { offset: 0, limit: PATH_COINS })).coins : [];
      content = html`${await receiveBox(details, address, index, session)}
${spendingPathsSection(details, coins, session, canSpend(access))}
${pendingPsbts(details, psbts)}
<section><h2>Latest transactions</h2>${transactionsTable(details, details.txlist.slice(0, 10), session, access, here)}
${details.txlist.length > 0 ? html`<p><a href="${walletUrl(alias, '?view=transactions')}">All transactions</a></p>` : ''}</section>`;
    } else if (view === 'transactions') {
      content = html`${transactionsTable(details, details.txlist.slice(0, TX_PAGE), session, access, here)}${pager(walletUrl(alias, '?view=transactions'), n, details.txlist.length > TX_PAGE)}`;
    } else if (view === 'coins') {
      const { total, coins } = await services.wallets.reads.utxoPage(principal, alias, { offset: (n - 1) * COIN_PAGE, limit: COIN_PAGE });
      content = html`${coinsTable(details, coins, session, access, here)}${pager(walletUrl(alias, '?view=coins'), n, total > n * COIN_PAGE)}`;
    } else {
      const branch = request.query.branch === 'change' ? 1 : 0;
      const entries = await services.wallets.reads.addresses(principal, alias, branch, (n - 1) * ADDRESS_PAGE, ADDRESS_PAGE);
      const base = walletUrl(alias, `?view=addresses&branch=${branch === 1 ? 'change' : 'receive'}`);
      content = html`<p class="tabs"><a href="${walletUrl(alias, '?view=addresses')}"${branch === 0 ? html` aria-current="page"` : ''}>Receive</a> <a href="${walletUrl(alias, '?view=addresses&branch=change')}"${branch === 1 ? html` aria-current="page"` : ''}>Change</a></p>
${addressesTable(details, entries, session, access, base)}${pager(base, n, true)}`;
    }
    const scan = details.scan?.error
      ? html`<p class="scan error" role="alert" data-scan-error="${details.scan.error.code}">${details.scan.error.message}. The wallet stays at block ${details.scan.height} until the server sends it.</p>`
      : details.scan
      ? html`<p class="scan" role="status"><progress max="1" value="${details.scan.progress.toFixed(3)}"></progress> Scanning the chain: ${Math.floor(details.scan.progress * 100)}% (block ${details.scan.height})</p>`
      : '';
    const tabs = VIEWS.map((v) => html`<a href="${walletUrl(alias, v === 'overview' ? '' : `?view=${v}`)}"${v === view ? html` aria-current="page"` : ''}>${v[0]!.toUpperCase() + v.slice(1)}</a>`);
    const actions = html`${canSpend(access) ? html`<a class="button" href="${walletUrl(alias, '/send')}">Send</a>` : ''}
<a class="button secondary" href="${walletUrl(alias, '/files')}">Files and labels</a>
${access === 'owner' ? html`<form method="post" action="${walletUrl(alias, '/rescan')}" class="inline">${csrfField(session)}<button type="submit" class="secondary">Rescan</button></form>
<form method="post" action="${walletUrl(alias, '/delete')}" class="inline" data-confirm="Delete this wallet with its PSBTs and labels? The coins stay on the chain.">${csrfField(session)}<button type="submit" class="danger">Delete wallet</button></form>` : ''}`;
    const pathWarning = singleSignaturePathWarning(details.keys);
    const body = html`<div class="title-row"><h1>${details.name}</h1><div class="actions">${actions}</div></div>
<p class="muted">${details.description} ${details.sigs_required} of ${details.sigs_total} · ${details.address_type} · ${details.network} · your access: ${access}</p>
${pathWarning ? html`<p class="notice" role="note" data-key-path-warning>${pathWarning}</p>` : ''}
${scan}
${balances(details, trustedUnconfirmed)}
<nav class="tabs" aria-label="Wallet views">${tabs}</nav>
${content}`;
    const sent = request.query.broadcast;
    const flash = receiveNotice !== undefined
      ? { kind: 'error' as const, text: receiveNotice }
      : sent !== undefined && /^[0-9a-f]{64}$/.test(sent) ? { kind: 'notice' as const, text: `Broadcast transaction ${sent}` } : undefined;
    return respond(reply, deps, request, { title: details.name, body, live: { url: walletUrl(alias, '/live'), fingerprint }, flash });
  });

  app.get('/wallets/:alias/live', async (request: WalletRequest) => {
    const session = sessionOf(request);
    return { fingerprint: await services.wallets.reads.fingerprint(session.principal, request.params.alias) };
  });

  app.post('/wallets/:alias/receive/next', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    const next = await services.wallets.coins.revealNextAddress(session.principal, request.params.alias);
    return reply.redirect(walletUrl(request.params.alias, `?receive=${next.index}`), 303);
  });

  app.post('/wallets/:alias/labels', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    await services.wallets.coins.setAddressLabel(session.principal, alias, field(request.body, 'address'), field(request.body, 'label'));
    return reply.redirect(backTo(alias, field(request.body, 'back')), 303);
  });

  app.post('/wallets/:alias/coins', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    const match = /^([0-9a-f]{64}):(\d{1,9})$/.exec(field(request.body, 'outpoint'));
    if (!match) throw new ServiceError('invalid_input', 'invalid_outpoint', 'The coin is not named as txid:vout');
    const frozen = field(request.body, 'frozen');
    await services.wallets.coins.updateUtxo(session.principal, alias, { txid: match[1]!, vout: Number(match[2]) }, {
      label: field(request.body, 'label'),
      ...(frozen === 'true' ? { frozen: true } : frozen === 'false' ? { frozen: false } : {}),
    });
    return reply.redirect(backTo(alias, field(request.body, 'back')), 303);
  });

  app.post('/wallets/:alias/refresh', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    const feeRate = field(request.body, 'fee_rate').trim();
    const { txid } = await services.psbts.create(session.principal, alias, { refresh: true, ...(feeRate !== '' && { fee_rate: feeRate }) });
    return reply.redirect(walletUrl(alias, `/psbts/${txid}`), 303);
  });

  app.post('/wallets/:alias/delete', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    await services.wallets.admin.delete(session.principal, request.params.alias);
    return reply.redirect('/', 303);
  });

  app.post('/wallets/:alias/rescan', async (request: WalletRequest, reply) => {
    const session = sessionOf(request);
    await services.wallets.admin.rescan(session.principal, request.params.alias);
    return reply.redirect(walletUrl(request.params.alias), 303);
  });
}
