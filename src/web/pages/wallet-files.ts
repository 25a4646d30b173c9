/**
 * The wallet's files: its setup as other tools read it (descriptor, BSMS, Coldcard, Specter, Caravan), its
 * labels as BIP329 JSON Lines, and importing a label file. The same use cases as the API's export and labels.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../services/errors.js';
import type { WebSession } from '../../services/web-sessions.js';
import { field, respond, sessionOf, walletUrl, type WebDeps } from '../context.js';
import { html } from '../html.js';
import { csrfField } from '../layout.js';

type FilesRequest = FastifyRequest<{ Params: { alias: string; format?: string } }>;

const SETUP_FORMATS = [
  ['descriptor', 'Output descriptor', 'Bitcoin Core, Sparrow, and most wallets'],
  ['bsms', 'BSMS record (BIP129)', 'Coordinators and signers that speak BSMS'],
  ['coldcard', 'Coldcard multisig file', 'Coldcard, Passport, Keystone, SeedSigner and other signers that read it'],
  ['specter', 'Specter wallet file', 'Specter Desktop'],
  ['caravan', 'Caravan configuration', 'Caravan'],
] as const;

function filesPage(alias: string, name: string, session: WebSession, canLabel: boolean, labelText = '') {
  const links = SETUP_FORMATS.map(
    ([format, title, readers]) => html`<li><a href="${walletUrl(alias, `/files/setup/${format}`)}" download>${title}</a> <span class="muted">${readers}</span></li>`,
  );
  const importForm = canLabel
    ? html`<section><h2>Import labels</h2>
<form method="post" action="${walletUrl(alias, '/files/labels')}" class="stack wide">
  ${csrfField(session)}
  <label for="labels-file">A BIP329 label file (JSON Lines), from Sparrow or another wallet</label>
  <input id="labels-file" type="file" accept=".jsonl,.json,.txt,application/jsonl" data-text-file="labels-text">
  <label for="labels-text">Or paste its lines</label>
  <textarea id="labels-text" name="labels" rows="6" spellcheck="false">${labelText}</textarea>
  <p class="muted">The newer label wins; lines naming what this wallet does not have are skipped and counted. <code>"spendable": false</code> freezes a coin.</p>
  <button type="submit">Import the labels</button>
</form></section>`
    : '';
  return html`<div class="title-row"><h1>Files of ${name}</h1><a class="button secondary" href="${walletUrl(alias)}">Back to the wallet</a></div>
<section><h2>Wallet setup</h2>
<p>The wallet's keys and policy, to set it up in another coordinator or on a signer. It holds public keys only.</p>
<ul class="files">${links}</ul></section>
<section><h2>Labels</h2>
<p><a href="${walletUrl(alias, '/files/labels.jsonl')}" download>Every label of the wallet (BIP329)</a> <span class="muted">transactions, addresses, coins and keys</span></p></section>
${importForm}`;
}

function sendFile(reply: FastifyReply, file: { text: string; fileName: string; contentType?: string }, contentType = file.contentType ?? 'text/plain') {
  return reply.type(`${contentType}; charset=utf-8`).header('Content-Disposition', `attachment; filename="${file.fileName}"`).send(file.text);
}

export function registerWalletFilePages(app: FastifyInstance, deps: WebDeps): void {
  const { services } = deps;

  app.get('/wallets/:alias/files', async (request: FilesRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    const { wallet, access } = await services.wallets.access.resolveWithAccess(session.principal, alias);
    return respond(reply, deps, request, { title: `Files of ${wallet.name}`, body: filesPage(alias, wallet.name, session, access !== 'read') });
  });

  app.get('/wallets/:alias/files/setup/:format', async (request: FilesRequest, reply) => {
    const session = sessionOf(request);
    const file = await services.wallets.files.export(session.principal, request.params.alias, request.params.format);
    return sendFile(reply, file);
  });

  app.get('/wallets/:alias/files/labels.jsonl', async (request: FilesRequest, reply) => {
    const session = sessionOf(request);
    return sendFile(reply, await services.wallets.labels.export(session.principal, request.params.alias), 'application/jsonl');
  });

  app.post('/wallets/:alias/files/labels', async (request: FilesRequest, reply) => {
    const session = sessionOf(request);
    const { alias } = request.params;
    const { wallet, access } = await services.wallets.access.resolveWithAccess(session.principal, alias);
    const text = field(request.body, 'labels');
    try {
      const result = await services.wallets.labels.import(session.principal, alias, text);
      const { unknown_reference, unsupported_type, older, owner_only } = result.skipped;
      const skipped = unknown_reference + unsupported_type + older + owner_only;
      const ownerOnly = owner_only > 0 ? `, ${owner_only} key label${owner_only === 1 ? '' : 's'} only the owner may change` : '';
      const notice = `Imported ${result.imported} label${result.imported === 1 ? '' : 's'}${skipped > 0 ? `; skipped ${unknown_reference} naming what this wallet does not have, ${unsupported_type} of types it keeps no labels for, ${older} older than the wallet's${ownerOnly}` : ''}.`;
      return respond(reply, deps, request, { title: `Files of ${wallet.name}`, body: filesPage(alias, wallet.name, session, access !== 'read'), flash: { kind: 'notice', text: notice } });
    } catch (error) {
      if (!(error instanceof ServiceError) || error.kind === 'unavailable' || error.kind === 'rate_limited' || error.kind === 'not_found') throw error;
      const lines = (error.details.errors ?? []).map((e) => e.message).slice(0, 10);
      const text = [error.message, ...lines].join(' ');
      return respond(reply, deps, request, { title: `Files of ${wallet.name}`, body: filesPage(alias, wallet.name, session, access !== 'read', field(request.body, 'labels')), flash: { kind: 'error', text } }, 400);
    }
  });
}
