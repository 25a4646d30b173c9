/**
 * The PSBT endpoints of a wallet: list and create (the contract), and the lifecycle beyond it:
 * read one (JSON, base64 text or the binary PSBT), merge a cosigner's signatures, delete, broadcast.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../auth.js';
import { errorResponses, success } from '../schemas.js';
import { sendInParts } from '../reply-in-parts.js';
import {
  BinaryPsbtBody,
  BroadcastBody,
  CreatePsbtBody,
  DeletedPsbtBody,
  PsbtList,
  PsbtParams,
  PsbtQuery,
  PsbtResult,
  UpdatePsbtBody,
  WalletParams,
} from './psbt-schemas.js';
import type { RouteModule } from './types.js';

type WalletRoute = { Params: Static<typeof WalletParams> };
type PsbtRoute = { Params: Static<typeof PsbtParams>; Querystring: Static<typeof PsbtQuery> };

/** A PSBT's decoded inputs serialised between two turns: each carries its scripts, keys and signatures. */
const INPUTS_PER_PART = 200;

const wantsBinary = (request: FastifyRequest<PsbtRoute>): boolean => {
  if (request.query.format === 'binary') return true;
  if (request.query.format) return false;
  const accept = request.headers.accept ?? '';
  return /application\/octet-stream/i.test(accept) && !/application\/json/i.test(accept);
};

export const psbtRoutes: RouteModule = {
  name: 'psbt',
  register(app, { services }) {
    const tags = ['psbt'];
    const base = '/wallets/:wallet_alias/psbt';

    app.get<WalletRoute>(
      base,
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: "List the wallet's pending PSBTs",
          operationId: 'listPsbts',
          description: 'Pending PSBTs keyed by txid, newest first. Needs read access to the wallet.',
          params: WalletParams,
          response: { 200: success('Pending PSBTs keyed by txid.', PsbtList), ...errorResponses(401, 403, 404, 500, 503) },
        },
      },
      async (request) => {
        const pending = await services.psbts.list(principalOf(request), request.params.wallet_alias);
        return { result: Object.fromEntries(pending.map((p) => [p.txid, p.record])) };
      },
    );

    app.post<WalletRoute & { Body: Static<typeof CreatePsbtBody> }>(
      base,
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Create a PSBT',
          operationId: 'createPsbt',
          description:
            'Selects coins (never frozen ones or ones held by another pending PSBT; confirmed ones first), adds change to the next unused change address (or `change_address`, which must be an address of this wallet: 422 `change_address_not_owned`) and stores the PSBT as pending, its coins reserved. A wallet holds at most `max_pending_psbts` pending PSBTs (422 `too_many_pending_psbts`). A creation that keeps losing races to others answers 409 `coins_reserved` or `wallet_changed`. Needs spend access.',
          params: WalletParams,
          body: CreatePsbtBody,
          response: { 201: success('The created PSBT, stored as pending with its coins reserved.', PsbtResult), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 500, 503) },
        },
      },
      async (request, reply) => {
        const created = await services.psbts.create(principalOf(request), request.params.wallet_alias, request.body);
        return reply.status(201).send({ result: created.record });
      },
    );

    app.get<PsbtRoute>(
      `${base}/:txid`,
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Read one pending PSBT',
          operationId: 'getPsbt',
          description:
            'The record as JSON; with `?format=base64` the PSBT as base64 text; with `Accept: application/octet-stream` (or `?format=binary`) the binary PSBT file signers import. `?version=2` gives the PSBT as version 2 (BIP370) in each form; both versions have the same unsigned txid.',
          params: PsbtParams,
          querystring: PsbtQuery,
          response: { 200: success('The PSBT record (or, as asked, the base64 text or the binary PSBT).', PsbtResult), ...errorResponses(400, 401, 403, 404, 500, 503) },
        },
      },
      async (request, reply) => {
        const found = await services.psbts.get(principalOf(request), request.params.wallet_alias, request.params.txid, request.query.version === '2' ? 2 : 0);
        if (wantsBinary(request)) {
          return reply
            .type('application/octet-stream')
            .header('Content-Disposition', `attachment; filename="${found.record.tx.txid}.psbt"`)
            .send(Buffer.from(found.psbt));
        }
        if (request.query.format === 'base64') return reply.type('text/plain; charset=utf-8').send(found.base64);
        return { result: found.record };
      },
    );

    // In a scope of its own: the binary body parser serves this route only, every other one keeps to JSON.
    void app.register(async (scope) => {
      // Handed on as base64 text, the form the JSON body carries, so both take the same path.
      scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => done(null, body.toString('base64')));
      scope.put<PsbtRoute & { Body: Static<typeof UpdatePsbtBody> | string }>(
        `${base}/:txid`,
        {
          config: { auth: 'bearer' },
          schema: {
            tags,
            summary: "Add a cosigner's signatures",
            operationId: 'updatePsbt',
            description:
              'A copy (PSBT version 0 or 2) of the same unsigned transaction carrying one or more signatures, as JSON `{"psbt": base64}` or as the binary PSBT file (`Content-Type: application/octet-stream`): they are checked and merged; only signatures and finalized inputs are kept from the copy. Cosigners may send their copies at once, to any instance: every signature is kept. Another transaction: 409 `different_transaction`; an invalid signature: 422; a PSBT deleted, broadcast or invalidated meanwhile: 404. Needs spend access.',
            params: PsbtParams,
            body: { content: { 'application/json': { schema: UpdatePsbtBody }, 'application/octet-stream': { schema: BinaryPsbtBody } } },
            response: { 200: success('The PSBT record with the signatures merged.', PsbtResult), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 500, 503) },
          },
        },
        async (request, reply) => {
          const copy = typeof request.body === 'string' ? request.body : request.body.psbt;
          const record = await services.psbts.update(principalOf(request), request.params.wallet_alias, request.params.txid, copy);
          // A record of 940 inputs (ADR 0010).
          return sendInParts(reply, { result: record }, [['result', 'tx', 'vin'], ['result', 'inputs']], INPUTS_PER_PART);
        },
      );
    });

    app.delete<PsbtRoute>(
      `${base}/:txid`,
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Delete a pending PSBT',
          operationId: 'deletePsbt',
          description: 'Removes it and frees its reserved coins. Needs spend access.',
          params: PsbtParams,
          response: { 200: success('Deleted; its coins are free again.', DeletedPsbtBody), ...errorResponses(401, 403, 404, 409, 500, 503) },
        },
      },
      async (request) => {
        await services.psbts.delete(principalOf(request), request.params.wallet_alias, request.params.txid);
        return { message: 'PSBT deleted' as const };
      },
    );

    app.post<PsbtRoute>(
      `${base}/:txid/broadcast`,
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Finalize, verify and broadcast',
          operationId: 'broadcastPsbt',
          description:
            'Finalizes every input, verifies every signature against the coins spent and sends the transaction to the node. Not enough signatures: 422 `not_enough_signatures`; rejected by the node: 422 `broadcast_rejected` with the node’s reason. The PSBT leaves the pending list once the wallet sees its transaction. Needs spend access.',
          params: PsbtParams,
          response: { 200: success('The transaction the node accepted.', BroadcastBody), ...errorResponses(401, 403, 404, 409, 422, 500, 503) },
        },
      },
      async (request) => services.psbts.broadcast(principalOf(request), request.params.wallet_alias, request.params.txid),
    );
  },
};
