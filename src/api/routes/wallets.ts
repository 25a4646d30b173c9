/** Wallet management and details (`/wallets`), and the full transaction list of the caller's wallets. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth.js';
import { errorResponses, success } from '../schemas.js';
import { sendInParts } from '../reply-in-parts.js';
import { UNPAGED_WALLET_LIST_MAX } from '../../services/wallets/reads.js';
import type { RouteModule } from './types.js';
import {
  AddressListSchema,
  addressesQuery,
  CreateWalletBody,
  DetailsQuery,
  PageQuery,
  RescanBody,
  RevealedAddressSchema,
  TxEntrySchema,
  UpdateWalletBody,
  UtxoPatchBody,
  UtxoWithFlagsSchema,
  WalletDetailsSchema,
  WalletListQuery,
  WalletListSchema,
  WalletParams,
} from './wallet-schemas.js';

type Params = Static<typeof WalletParams>;

export const walletRoutes: RouteModule = {
  name: 'wallets',
  register(app, { services, config }) {
    const tags = ['wallets'];
    const { reads, admin, coins } = services.wallets;

    app.post<{ Body: Static<typeof CreateWalletBody> }>(
      '/wallets',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Create (import) a wallet from descriptors, a policy or a wallet setup file',
          operationId: 'createWallet',
          body: CreateWalletBody,
          response: { 201: success('The created wallet.', WalletDetailsSchema), ...errorResponses(400, 401, 403, 409, 413, 415, 422, 429, 500, 503) },
        },
      },
      async (request, reply) => reply.status(201).send(await admin.create(principalOf(request), request.body)),
    );

    app.get<{ Querystring: Static<typeof WalletListQuery> }>(
      '/wallets',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Your wallets and the ones shared with you',
          description: `Oldest first, then by alias. \`total\` counts every wallet you can access; only the page's wallets are read for their balances. Without \`limit\` every wallet is listed, as before, up to ${UNPAGED_WALLET_LIST_MAX}; past that 422 \`page_required\`: page with \`limit\` and \`offset\`.`,
          operationId: 'listWallets',
          querystring: WalletListQuery,
          response: { 200: success('One page (default: all) of the wallets you can access, with balances, and their total.', WalletListSchema), ...errorResponses(400, 401, 403, 422, 500, 503) },
        },
      },
      (request) => reads.listPage(principalOf(request), request.query),
    );

    app.get<{ Params: Params; Querystring: Static<typeof DetailsQuery> }>(
      '/wallets/:wallet_alias',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Wallet details: balance, UTXOs, transactions, scan progress',
          operationId: 'getWallet',
          params: WalletParams,
          querystring: DetailsQuery,
          response: { 200: success('The wallet details.', WalletDetailsSchema), ...errorResponses(400, 401, 403, 404, 500, 503) },
        },
      },
      async (request, reply) => {
        const { limit, offset, utxo_limit: utxoLimit, utxo_offset: utxoOffset } = request.query;
        const details = await reads.details(principalOf(request), request.params.wallet_alias, { limit, offset }, { utxoPage: { limit: utxoLimit, offset: utxoOffset } });
        return sendInParts(reply, details, [['utxo'], ['txlist']]); // unpaged, 30,000 coins and transactions (ADR 0010)
      },
    );

    app.patch<{ Params: Params; Body: Static<typeof UpdateWalletBody> }>(
      '/wallets/:wallet_alias',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Rename, describe, label keys, change the gap limit, share (owner only)',
          operationId: 'updateWallet',
          params: WalletParams,
          body: UpdateWalletBody,
          response: { 200: success('The updated wallet details.', WalletDetailsSchema), ...errorResponses(400, 401, 403, 404, 413, 415, 422, 500, 503) },
        },
      },
      (request) => admin.update(principalOf(request), request.params.wallet_alias, request.body),
    );

    app.delete<{ Params: Params }>(
      '/wallets/:wallet_alias',
      {
        config: { auth: 'bearer' },
        schema: { tags, summary: 'Delete a wallet with its PSBTs (owner only)', operationId: 'deleteWallet', params: WalletParams, response: { 200: success('Deleted with its PSBTs and reservations.', Type.Object({ message: Type.Literal('Wallet deleted') })), ...errorResponses(401, 403, 404, 500) } },
      },
      async (request) => {
        await admin.delete(principalOf(request), request.params.wallet_alias);
        return { message: 'Wallet deleted' as const };
      },
    );

    app.post<{ Params: Params; Body: Static<typeof RescanBody> }>(
      '/wallets/:wallet_alias/rescan',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Forget what the wallet learnt from the chain and scan again (owner only)',
          operationId: 'rescanWallet',
          params: WalletParams,
          body: Type.Optional(RescanBody),
          response: { 202: success('The rescan is accepted and runs from this height.', Type.Object({ alias: Type.String(), from: Type.Integer() })), ...errorResponses(400, 401, 403, 404, 422, 500, 503) },
        },
      },
      async (request, reply) => reply.status(202).send(await admin.rescan(principalOf(request), request.params.wallet_alias, request.body?.from)),
    );

    app.get<{ Params: Params; Querystring: Static<ReturnType<typeof addressesQuery>> }>(
      '/wallets/:wallet_alias/addresses',
      {
        config: { auth: 'bearer' },
        schema: { tags, summary: 'Derived addresses with label and use', operationId: 'listAddresses', params: WalletParams, querystring: addressesQuery(config.limits.addressPageMax), response: { 200: success('One page of derived addresses.', AddressListSchema), ...errorResponses(400, 401, 403, 404, 500, 503) } },
      },
      async (request) => {
        const { branch = 'receive', from = 0, count = 20 } = request.query;
        return { addresses: await reads.addresses(principalOf(request), request.params.wallet_alias, branch === 'change' ? 1 : 0, from, count) };
      },
    );

    app.post<{ Params: Params }>(
      '/wallets/:wallet_alias/addresses/next',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Reveal a new receive address: each call hands out the next one, never one handed out before',
          operationId: 'revealNextAddress',
          description:
            'Like Bitcoin Core\'s getnewaddress: the address after the last one revealed, used on chain or shown in the wallet details, whichever is higher. ' +
            'Concurrent calls, on any instance of the service, get distinct addresses. The address is watched from the next ' +
            'sync pass on. Never more than the wallet\'s gap limit past the last used address (409 `gap_limit_reached`: use one of the ' +
            'unused addresses handed out, or have the owner raise `gap_limit`). "read" access suffices: receiving risks no funds. ' +
            'Never the address the wallet details show (`address`, `address_index`): that one stays for whoever reads it there, ' +
            'and revealing hands out the addresses after it.',
          params: WalletParams,
          response: { 200: success('The receive address handed out and its index.', RevealedAddressSchema), ...errorResponses(401, 403, 404, 409, 500) },
        },
      },
      (request) => coins.revealNextAddress(principalOf(request), request.params.wallet_alias),
    );

    app.get<{ Params: Params; Querystring: Static<typeof PageQuery> }>(
      '/wallets/:wallet_alias/utxo',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Unspent outputs, most confirmations first; `limit`/`offset` page them (default: all)',
          operationId: 'listUtxos',
          params: WalletParams,
          querystring: PageQuery,
          response: { 200: success('The wallet\'s unspent outputs.', Type.Object({ utxo: Type.Array(UtxoWithFlagsSchema) })), ...errorResponses(400, 401, 403, 404, 500, 503) },
        },
      },
      async (request) => ({ utxo: await reads.utxos(principalOf(request), request.params.wallet_alias, request.query) }),
    );

    app.patch<{ Params: Params; Body: Static<typeof UtxoPatchBody> }>(
      '/wallets/:wallet_alias/utxo',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Freeze, unfreeze or label one unspent output',
          operationId: 'updateUtxo',
          params: WalletParams,
          body: UtxoPatchBody,
          response: { 200: success('The wallet\'s unspent outputs after the change.', Type.Object({ utxo: Type.Array(UtxoWithFlagsSchema) })), ...errorResponses(400, 401, 403, 404, 500, 503) },
        },
      },
      async (request) => {
        const { txid, vout, frozen, label } = request.body;
        const principal = principalOf(request);
        await coins.updateUtxo(principal, request.params.wallet_alias, { txid: txid.toLowerCase(), vout }, {
          ...(frozen !== undefined ? { frozen } : {}),
          ...(label !== undefined ? { label } : {}),
        });
        return { utxo: await reads.utxos(principal, request.params.wallet_alias) };
      },
    );

    app.get<{ Querystring: Static<typeof PageQuery> }>(
      '/service/full_txlist',
      {
        config: { auth: 'bearer' },
        schema: {
          tags: ['service'],
          summary: 'Every transaction of every wallet you can access, newest first',
          operationId: 'listAllTransactions',
          querystring: PageQuery,
          response: { 200: success('Transactions, newest first.', Type.Array(TxEntrySchema)), ...errorResponses(400, 401, 403, 500, 503) },
        },
      },
      (request) => reads.fullTxList(principalOf(request), request.query),
    );
  },
};
