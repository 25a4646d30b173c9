/** BIP329 labels of a wallet: `GET` exports them, `POST` imports a file (JSON Lines body). */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth.js';
import { ErrorBody, errorResponses, success } from '../schemas.js';
import type { RouteModule } from './types.js';
import { WalletParams } from './wallet-schemas.js';

const JSONL = 'application/jsonl';
/** A label file may be larger than a JSON request: up to about 100,000 labels. */
const LABELS_BODY_LIMIT = 32 * 1024 * 1024;

const LabelFile = Type.String({ description: 'BIP329 JSON Lines: one {type, ref, label, spendable?, modified?} object per line.' });

const ImportResult = Type.Object({
  imported: Type.Integer({ description: 'Records applied.' }),
  skipped: Type.Object({
    unknown_reference: Type.Integer({ description: 'Transactions, addresses, outputs or xpubs this wallet does not have.' }),
    unsupported_type: Type.Integer({ description: 'Types the service keeps no labels for: input, pubkey, spscan, later types.' }),
    older: Type.Integer({ description: 'Lines whose `modified` time is older than the label the wallet has.' }),
    owner_only: Type.Integer({ description: 'Key (`xpub`) lines of this wallet’s keys sent by a user who is not its owner, or by a token without `wallets:manage`: key labels are the owner’s to change, as with PATCH.' }),
  }),
});

export const walletLabelRoutes: RouteModule = {
  name: 'wallet-labels',
  register(app, { services }) {
    const tags = ['wallets'];
    const path = '/wallets/:wallet_alias/labels';
    // Label files arrive as text; every other route keeps to JSON bodies.
    for (const type of [JSONL, 'application/x-ndjson']) {
      app.addContentTypeParser(type, { parseAs: 'string', bodyLimit: LABELS_BODY_LIMIT }, (_request, body, done) => done(null, body));
    }

    app.get<{ Params: Static<typeof WalletParams> }>(
      path,
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Export the wallet’s labels (BIP329)',
          operationId: 'exportLabels',
          description:
            'Every label of the wallet as BIP329 JSON Lines (`application/jsonl`): transactions (`tx`), addresses (`addr`), coins (`output`, with `spendable: false` when frozen) and keys (`xpub`). Each line carries `modified`, the label’s last change (ISO-8601), which an import uses to keep the newer label. Needs read access.',
          params: WalletParams,
          response: { 200: { description: 'The labels.', content: { [JSONL]: { schema: LabelFile } } }, ...errorResponses(401, 404, 500) },
        },
      },
      async (request, reply) => {
        const file = await services.wallets.labels.export(principalOf(request), request.params.wallet_alias);
        return reply.type(`${JSONL}; charset=utf-8`).header('Content-Disposition', `attachment; filename="${file.fileName}"`).send(file.text);
      },
    );

    app.post<{ Params: Static<typeof WalletParams> }>(
      path,
      {
        config: { auth: 'bearer' },
        bodyLimit: LABELS_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Import labels (BIP329)',
          operationId: 'importLabels',
          description:
            'A BIP329 file as the body (`Content-Type: application/jsonl`), applied in one transaction. The newer label wins: a line’s `modified` time, or the import’s time without one, against the label’s last change. References the wallet does not have, and types it keeps no labels for, are skipped and counted. Key labels (`xpub` lines) are the owner’s, as with PATCH: from anyone else (a user the wallet is shared with, or a token without `wallets:manage`) they are skipped and counted in `skipped.owner_only`, and the rest of the file is imported. `spendable: false` freezes the coin, `true` unfreezes it. Any faulty line: 400 `invalid_labels` listing every faulty line by number, and nothing is imported. At most 100,000 lines (a final newline ends the last line) and 32 MiB. Needs spend access.',
          params: WalletParams,
          body: LabelFile,
          response: { 200: success('What was imported and what was skipped.', ImportResult), ...errorResponses(400, 401, 404, 415, 500, 503), 413: { ...ErrorBody, description: 'Request body over 32 MiB.' } },
        },
      },
      async (request) => services.wallets.labels.import(principalOf(request), request.params.wallet_alias, request.body),
    );
  },
};
