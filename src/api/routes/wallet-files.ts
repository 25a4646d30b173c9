/** Wallet setup files of other tools: `GET /wallets/{alias}/export?format=...` (import is part of wallet creation). */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth.js';
import { errorResponses } from '../schemas.js';
import type { RouteModule } from './types.js';
import { WalletParams } from './wallet-schemas.js';

const ExportQuery = Type.Object({
  format: Type.Union([Type.Literal('descriptor'), Type.Literal('bsms'), Type.Literal('coldcard'), Type.Literal('specter'), Type.Literal('caravan'), Type.Literal('bip388')], {
    description:
      'descriptor (one multipath descriptor line with its checksum), bsms (BIP129 descriptor record), coldcard (multisig setup file), specter (wallet export JSON), caravan (wallet configuration JSON), bip388 (wallet policy JSON `{name, descriptor_template, keys_info}` as Ledger, Coldcard and Jade register it). A miniscript wallet exports as descriptor or bip388 only (others: 422 `export_unsupported`).',
  }),
});

const FileText = Type.String({ description: 'The file.' });

export const walletFileRoutes: RouteModule = {
  name: 'wallet-files',
  register(app, { services }) {
    app.get<{ Params: Static<typeof WalletParams>; Querystring: Static<typeof ExportQuery> }>(
      '/wallets/:wallet_alias/export',
      {
        config: { auth: 'bearer' },
        schema: {
          tags: ['wallets'],
          summary: 'Export the wallet setup as a file of another tool',
          operationId: 'exportWallet',
          description:
            'The wallet as a setup file other coordinators and signers import, with `Content-Disposition` naming the file; every export imports back into this service as the same wallet. Coldcard and Caravan describe sorted multisig wallets only; Coldcard, Caravan, Specter and BSMS need receive `/0/*` and change `/1/*` branches: otherwise 422 `export_unsupported`. Needs read access.',
          params: WalletParams,
          querystring: ExportQuery,
          response: {
            200: { description: 'The wallet setup file.', content: { 'text/plain': { schema: FileText }, 'application/json': { schema: FileText } } },
            ...errorResponses(400, 401, 404, 422, 500),
          },
        },
      },
      async (request, reply) => {
        const file = await services.wallets.files.export(principalOf(request), request.params.wallet_alias, request.query.format);
        return reply.type(file.contentType).header('Content-Disposition', `attachment; filename="${file.fileName}"`).send(file.text);
      },
    );
  },
};
