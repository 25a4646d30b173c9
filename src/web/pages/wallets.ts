/** The wallet list (balances, scan progress) and adding a wallet by descriptor or by a guided policy form. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceError } from '../../services/errors.js';
import type { Principal } from '../../services/principal.js';
import { field, fieldList, respond, sessionOf, walletUrl, type WebDeps } from '../context.js';
import { btcText, satText } from '../format.js';
import { html, type Html } from '../html.js';
import { csrfField, fieldError, fieldErrorMap } from '../layout.js';
import type { WebSession } from '../../services/web-sessions.js';

const POLICY_TYPES = [
  ['wsh-sortedmulti', 'Multisig, native SegWit (P2WSH, sorted keys)'],
  ['sh-wsh-sortedmulti', 'Multisig, nested SegWit (P2SH-P2WSH, sorted keys)'],
  ['sh-sortedmulti', 'Multisig, legacy (P2SH, sorted keys)'],
  ['wsh-multi', 'Multisig, native SegWit, keys in the given order'],
  ['wpkh', 'Single key, native SegWit (P2WPKH)'],
  ['sh-wpkh', 'Single key, nested SegWit (P2SH-P2WPKH)'],
  ['tr', 'Single key, Taproot (P2TR)'],
  ['pkh', 'Single key, legacy (P2PKH)'],
] as const;

export function amountCell(sats: number): Html {
  return html`<td class="amount"><span class="btc">${btcText(sats)} BTC</span><span class="sat">${satText(sats)} sat</span></td>`;
}

/** Wallets per page of the list: a page's balances are read wallet by wallet. */
const WALLET_PAGE = 50;

function pageNumber(text: string | undefined): number {
  return text !== undefined && /^[1-9]\d{0,5}$/.test(text) ? Number(text) : 1;
}

function pageOf(n: number): { limit: number; offset: number } {
  return { limit: WALLET_PAGE, offset: (n - 1) * WALLET_PAGE };
}

/** Changes when any wallet of the page would show something new, or the list gains or loses one. */
async function listFingerprint(deps: WebDeps, principal: Principal, n: number): Promise<string> {
  const { wallets, total } = await deps.services.wallets.reads.listPage(principal, pageOf(n));
  const parts = await Promise.all(wallets.map((w) => deps.services.wallets.reads.fingerprint(principal, w.alias)));
  return [String(total), ...parts].join('.');
}

function listPager(n: number, total: number): Html {
  const pages = Math.max(Math.ceil(total / WALLET_PAGE), 1);
  if (pages === 1) return html``;
  return html`<nav class="pager" aria-label="Pages">${n > 1 ? html`<a href="/?page=${n - 1}" rel="prev">Previous</a>` : ''}<span>Page ${n} of ${pages}</span>${n < pages ? html`<a href="/?page=${n + 1}" rel="next">Next</a>` : ''}</nav>`;
}

async function listPage(deps: WebDeps, principal: Principal, n: number): Promise<Html> {
  const { wallets, total } = await deps.services.wallets.reads.listPage(principal, pageOf(n));
  if (total === 0) {
    return html`<h1>Wallets</h1><p class="empty">No wallets yet: <a href="/wallets/new">add one</a>.</p>`;
  }
  const rows: Html[] = [];
  for (const w of wallets) {
    const scan = await deps.services.wallets.reads.scan(principal, w.alias);
    rows.push(html`<tr>
  <td><a href="${walletUrl(w.alias)}">${w.name}</a><div class="muted">${w.description}</div></td>
  <td>${w.sigs_required} of ${w.sigs_total} · ${w.address_type}${scan ? html` <progress max="1" value="${scan.progress.toFixed(3)}" aria-label="Scan progress">${Math.floor(scan.progress * 100)}%</progress> scanning` : ''}</td>
  ${w.balance ? amountCell(w.balance.total_sat) : html`<td class="amount"><span class="error-text">Stored data damaged: rescan</span></td>`}
</tr>`);
  }
  const shown = wallets.length === 0 ? html`<p class="empty">No wallets on this page: <a href="/">the first page</a>.</p>` : html``;
  return html`<div class="title-row"><h1>Wallets</h1><a class="button" href="/wallets/new">Add a wallet</a></div>
<p class="muted">${total === 1 ? '1 wallet' : `${total} wallets`}</p>
${shown}<table class="list"><thead><tr><th scope="col">Wallet</th><th scope="col">Keys</th><th scope="col" class="amount">Balance</th></tr></thead>
<tbody>${rows}</tbody></table>${listPager(n, total)}`;
}

const FILE_FORMATS = [
  ['', 'Recognise it'],
  ['descriptor', 'Output descriptors'],
  ['bsms', 'BSMS record (BIP129)'],
  ['coldcard', 'Coldcard multisig file'],
  ['specter', 'Specter wallet file'],
  ['caravan', 'Caravan configuration'],
] as const;

interface NewWalletValues {
  mode: string;
  importText: string;
  importFormat: string;
  name: string;
  description: string;
  descriptor: string;
  type: string;
  threshold: string;
  keys: { key: string; label: string }[];
  birthday: string;
  shares: string;
  /** Timelocked recovery (miniscript): template, script, primary and recovery keys (a key a line, a label after it), thresholds and delay in days. */
  recovery?: RecoveryValues;
}

interface RecoveryValues {
  template: string;
  script: string;
  primaryKeys: string;
  primaryThreshold: string;
  recoveryKeys: string;
  recoveryThreshold: string;
  days: string;
}

/** Blocks a day at the ten-minute target: the delay in days is turned into a relative lock in blocks. */
const BLOCKS_PER_DAY = 144;
const RECOVERY_TEMPLATES = [
  ['inheritance', 'Inheritance: the primary keys, or the heirs\' keys after a delay'],
  ['expanding', 'Expanding multisig: after a delay, further keys count with the primary ones'],
  ['decaying', 'Decaying multisig: after a delay, fewer of the same keys are needed'],
] as const;

const keyLines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [key = '', ...label] = line.split(/\s+/);
      return { key, ...(label.length > 0 ? { label: label.join(' ') } : {}) };
    });

const numberOr = (text: string) => (/^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : text);

/** The `paths` policy of the recovery form: the primary path, and the template's recovery path after the delay. */
function recoveryPolicy(r: RecoveryValues): Record<string, unknown> {
  const primary = keyLines(r.primaryKeys);
  const extra = keyLines(r.recoveryKeys);
  const days = numberOr(r.days);
  const recoveryKeys = r.template === 'decaying' ? primary : r.template === 'expanding' ? [...primary, ...extra] : extra;
  return {
    type: 'paths',
    script: r.script,
    paths: [
      { threshold: numberOr(r.primaryThreshold), keys: primary },
      { threshold: numberOr(r.recoveryThreshold), keys: recoveryKeys, after_blocks: typeof days === 'number' ? days * BLOCKS_PER_DAY : days },
    ],
  };
}

function recoveryFields(r: RecoveryValues, errors: Map<string, string>): Html {
  const days = /^\d{1,9}$/.test(r.days.trim()) ? Number(r.days.trim()) : undefined;
  return html`<div data-mode="recovery" class="stack">
    <label for="template">Template</label>
    <select id="template" name="template">${RECOVERY_TEMPLATES.map(([value, text]) => html`<option value="${value}"${r.template === value ? html` selected` : ''}>${text}</option>`)}</select>
    <label for="script">Script</label>
    <select id="script" name="script"><option value="wsh"${r.script !== 'tr' ? html` selected` : ''}>wsh (segwit v0)</option><option value="tr"${r.script === 'tr' ? html` selected` : ''}>tr (taproot)</option></select>
    <label for="primary_keys">Primary keys, one a line: [fingerprint/path]xpub, then a label</label>
    <textarea id="primary_keys" name="primary_keys" rows="3" spellcheck="false">${r.primaryKeys}</textarea>
    <label for="primary_threshold">Signatures required on the primary path</label>
    <input id="primary_threshold" name="primary_threshold" inputmode="numeric" value="${r.primaryThreshold}">
    <label for="recovery_keys">Recovery keys (heirs; for an expanding multisig the further keys; unused when decaying)</label>
    <textarea id="recovery_keys" name="recovery_keys" rows="2" spellcheck="false">${r.recoveryKeys}</textarea>
    <label for="recovery_threshold">Signatures required on the recovery path</label>
    <input id="recovery_threshold" name="recovery_threshold" inputmode="numeric" value="${r.recoveryThreshold}">
    <label for="delay_days">Delay in days after a coin is received (at most 455)</label>
    <input id="delay_days" name="delay_days" inputmode="numeric" value="${r.days}" data-delay-days>
    <p class="muted" data-delay-blocks>${days !== undefined ? `${days} days = ${days * BLOCKS_PER_DAY} blocks` : `A day is ${BLOCKS_PER_DAY} blocks`}; spend (refresh) coins before their delay ends to keep the recovery closed.</p>
    ${fieldError(errors, '/policy', 'policy-recovery')}
  </div>`;
}

/** An example key of the service's network: xpub and coin type 0 on mainnet, tpub and coin type 1 on test networks. */
function keyPlaceholder(network: string): string {
  return network === 'mainnet' ? '[73c5da0a/48h/0h/0h/2h]xpub6E…' : '[73c5da0a/48h/1h/0h/2h]tpubDF…';
}

function newWalletForm(session: WebSession, v: NewWalletValues, errors: Map<string, string>, network: string): Html {
  const keyRows = (v.keys.length > 0 ? v.keys : [{ key: '', label: '' }, { key: '', label: '' }, { key: '', label: '' }]).map(
    (k, i) => html`<fieldset class="key-row" data-key-row>
  <legend>Key ${i + 1}</legend>
  <label for="key-${i}">Key as the hardware wallet exports it: [fingerprint/path]xpub</label>
  <textarea id="key-${i}" name="key" rows="2" spellcheck="false" placeholder="${keyPlaceholder(network)}">${k.key}</textarea>
  ${fieldError(errors, `/policy/keys/${i}/key`, `key-${i}`)}
  <label for="key-label-${i}">Label (who holds it, which device)</label>
  <input id="key-label-${i}" name="key_label" value="${k.label}" maxlength="256">
  <button type="button" class="link" data-remove-row>Remove this key</button>
</fieldset>`,
  );
  return html`<h1>Add a wallet</h1>
<form method="post" action="/wallets/new" class="stack wide" data-wallet-form>
  ${csrfField(session)}
  ${fieldError(errors, '', 'form')}
  <label for="name">Name (from the file when it has one and this is empty)</label>
  <input id="name" name="name" maxlength="128" value="${v.name}">
  ${fieldError(errors, '/name', 'name')}${fieldError(errors, '/alias', 'name')}
  <label for="description">Description</label>
  <input id="description" name="description" maxlength="1024" value="${v.description}">
  <fieldset>
    <legend>Keys</legend>
    <label><input type="radio" name="mode" value="policy"${v.mode !== 'descriptor' ? html` checked` : ''}> Guided: type, threshold and keys</label>
    <label><input type="radio" name="mode" value="recovery"${v.mode === 'recovery' ? html` checked` : ''}> Timelocked recovery: inheritance, expanding or decaying multisig</label>
    <label><input type="radio" name="mode" value="descriptor"${v.mode === 'descriptor' ? html` checked` : ''}> A descriptor</label>
    <label><input type="radio" name="mode" value="file"${v.mode === 'file' ? html` checked` : ''}> A wallet setup file (Coldcard, Sparrow, Specter, Caravan, BSMS)</label>
  </fieldset>
  <div data-mode="file" class="stack">
    <label for="import-file">The file another coordinator or a hardware wallet exported</label>
    <input id="import-file" type="file" accept=".txt,.json,.bsms,.conf,text/plain,application/json" data-text-file="import_text">
    <label for="import_text">Or paste its text</label>
    <textarea id="import_text" name="import_text" rows="8" spellcheck="false">${v.importText}</textarea>
    ${fieldError(errors, '/import', 'import_text')}
    <label for="import_format">Format</label>
    <select id="import_format" name="import_format">${FILE_FORMATS.map(([value, text]) => html`<option value="${value}"${v.importFormat === value ? html` selected` : ''}>${text}</option>`)}</select>
    ${fieldError(errors, '/import_format', 'import_format')}
  </div>
  <div data-mode="policy" class="stack">
    <label for="type">Type</label>
    <select id="type" name="type">${POLICY_TYPES.map(([value, text]) => html`<option value="${value}"${v.type === value ? html` selected` : ''}>${text}</option>`)}</select>
    ${fieldError(errors, '/policy/type', 'type')}
    <label for="threshold">Signatures required</label>
    <input id="threshold" name="threshold" inputmode="numeric" pattern="[0-9]*" value="${v.threshold}">
    ${fieldError(errors, '/policy/threshold', 'threshold')}${fieldError(errors, '/policy', 'policy')}${fieldError(errors, '/policy/keys', 'keys')}
    <div data-key-rows>${keyRows}</div>
    <button type="button" data-add-row>Add a key</button>
  </div>
  ${recoveryFields(v.recovery ?? { template: 'inheritance', script: 'wsh', primaryKeys: '', primaryThreshold: '2', recoveryKeys: '', recoveryThreshold: '1', days: '365' }, errors)}
  <div data-mode="descriptor" class="stack">
    <label for="descriptor">Descriptor (multipath <code>&lt;0;1&gt;</code>)</label>
    <textarea id="descriptor" name="descriptor" rows="4" spellcheck="false">${v.descriptor}</textarea>
    ${fieldError(errors, '/descriptor', 'descriptor')}
  </div>
  <label for="birthday">Birthday: block height or date (YYYY-MM-DD) of the wallet's first transaction; empty: now</label>
  <input id="birthday" name="birthday" value="${v.birthday}">
  ${fieldError(errors, '/birthday', 'birthday')}
  <label for="shares">Share with (one per line: <code>user read</code> or <code>user spend</code>)</label>
  <textarea id="shares" name="shares" rows="2">${v.shares}</textarea>
  ${fieldError(errors, '/shared_with', 'shares')}
  <button type="submit">Add the wallet</button>
</form>`;
}

function valuesOf(body: unknown): NewWalletValues {
  const keys = fieldList(body, 'key');
  const labels = fieldList(body, 'key_label');
  return {
    mode: field(body, 'mode'),
    importText: field(body, 'import_text'),
    importFormat: field(body, 'import_format'),
    name: field(body, 'name'),
    description: field(body, 'description'),
    descriptor: field(body, 'descriptor'),
    type: field(body, 'type'),
    threshold: field(body, 'threshold'),
    keys: keys.map((key, i) => ({ key, label: labels[i] ?? '' })),
    birthday: field(body, 'birthday'),
    shares: field(body, 'shares'),
    recovery: {
      template: field(body, 'template'),
      script: field(body, 'script'),
      primaryKeys: field(body, 'primary_keys'),
      primaryThreshold: field(body, 'primary_threshold'),
      recoveryKeys: field(body, 'recovery_keys'),
      recoveryThreshold: field(body, 'recovery_threshold'),
      days: field(body, 'delay_days'),
    },
  };
}

/** The API's creation input from the form. */
function creationInput(v: NewWalletValues): Record<string, unknown> {
  const shares = v.shares
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [user = '', access = 'read'] = line.split(/[\s:,]+/);
      return { user, access };
    });
  const keys = v.keys.filter((k) => k.key.trim() !== '' || k.label.trim() !== '').map((k) => ({ key: k.key.trim(), label: k.label.trim() }));
  const keysInput =
    v.mode === 'file'
      ? { import: v.importText, ...(v.importFormat !== '' ? { import_format: v.importFormat } : {}) }
      : v.mode === 'recovery' && v.recovery
        ? { policy: recoveryPolicy(v.recovery) }
      : v.mode === 'descriptor'
        ? { descriptor: v.descriptor.trim() }
        : { policy: { type: v.type, threshold: /^\d{1,3}$/.test(v.threshold.trim()) ? Number(v.threshold.trim()) : v.threshold, keys } };
  return {
    // A file may name the wallet: an empty name leaves it to the file.
    ...(v.name.trim() !== '' || v.mode !== 'file' ? { name: v.name } : {}),
    description: v.description,
    ...keysInput,
    ...(v.birthday.trim() !== '' ? { birthday: v.birthday.trim() } : {}),
    ...(shares.length > 0 ? { shared_with: shares } : {}),
  };
}

export function registerWalletListPages(app: FastifyInstance, deps: WebDeps): void {
  app.get('/', async (request: FastifyRequest<{ Querystring: { page?: string } }>, reply) => {
    const session = sessionOf(request);
    const n = pageNumber(request.query.page);
    const fingerprint = await listFingerprint(deps, session.principal, n);
    return respond(reply, deps, request, { title: 'Wallets', body: await listPage(deps, session.principal, n), live: { url: n > 1 ? `/live?page=${n}` : '/live', fingerprint } });
  });

  app.get('/live', async (request: FastifyRequest<{ Querystring: { page?: string } }>) => ({ fingerprint: await listFingerprint(deps, sessionOf(request).principal, pageNumber(request.query.page)) }));

  app.get('/wallets/new', async (request, reply) => {
    const session = sessionOf(request);
    const empty: NewWalletValues = { mode: 'policy', importText: '', importFormat: '', name: '', description: '', descriptor: '', type: 'wsh-sortedmulti', threshold: '2', keys: [], birthday: '', shares: '' };
    return respond(reply, deps, request, { title: 'Add a wallet', body: newWalletForm(session, empty, new Map(), deps.config.network) });
  });

  app.post('/wallets/new', async (request, reply) => {
    const session = sessionOf(request);
    const values = valuesOf(request.body);
    try {
      const created = await deps.services.wallets.admin.create(session.principal, creationInput(values));
      return reply.redirect(walletUrl(created.alias), 303);
    } catch (error) {
      if (!(error instanceof ServiceError) || error.kind === 'unavailable' || error.kind === 'rate_limited') throw error;
      const errors = fieldErrorMap(error.details.errors);
      return respond(reply, deps, request, { title: 'Add a wallet', body: newWalletForm(session, values, errors, deps.config.network), flash: { kind: 'error', text: error.message } }, 400);
    }
  });
}
