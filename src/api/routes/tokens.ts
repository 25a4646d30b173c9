/** The four token endpoints (BasicAuth only). */
import { Type, type Static } from '@sinclair/typebox';
import { principalOf } from '../auth.js';
import { errorResponses, StringEnum, success } from '../schemas.js';
import { PERMISSIONS } from '../../services/permissions.js';
import type { TokenLimits } from '../../services/tokens.js';
import type { RouteModule } from './types.js';

const PermissionList = Type.Array(Type.String({ enum: [...PERMISSIONS] }), {
  description: `Beyond the contract: the token may do only this (${PERMISSIONS.join(', ')}). Absent: all of its user's rights.`,
});
const WalletAliasList = Type.Array(Type.String(), {
  description: 'Beyond the contract: the wallets (aliases) the token is limited to; others answer 404 as unknown wallets. Absent: every wallet of the user.',
});
const limitFields = {
  permissions: Type.Optional(PermissionList),
  wallets: Type.Optional(WalletAliasList),
};

function limitsBody(limits: TokenLimits): { permissions?: string[]; wallets?: string[] } {
  return { ...(limits.permissions ? { permissions: limits.permissions } : {}), ...(limits.wallets ? { wallets: limits.wallets } : {}) };
}

const CreateTokenBody = Type.Object({
  jwt_token_description: Type.String({ description: 'What the token is for; 1 to 256 characters after trimming, unique among your tokens.' }),
  jwt_token_life: Type.Union([Type.String(), Type.Number()], {
    description:
      'Lifetime: `<n> <unit>` (seconds, minutes, hours, days, weeks; short forms s, sec, m, min, h, hr, d, w; decimals allowed), or a whole number of seconds as text or as a JSON number.',
    examples: ['30 days', '12 hours', 3600],
  }),
  permissions: Type.Optional(Type.Array(Type.String(), { description: PermissionList.description })),
  wallets: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: WalletAliasList.description })),
});

const TokenIdParams = Type.Object({ jwt_token_id: Type.String({ description: 'The token id (UUID).' }) });

const CreatedTokenBody = Type.Object({
  message: Type.Literal('Token generated'),
  jwt_token_id: Type.String(),
  jwt_token: Type.String({ description: 'The token; shown only in this response.' }),
  jwt_token_description: Type.String(),
  jwt_token_life: Type.Integer({ description: 'Seconds.' }),
  ...limitFields,
});

const TokenListBody = Type.Object({
  message: Type.Literal('Tokens exists'),
  jwt_tokens: Type.Record(
    Type.String(),
    Type.Object({
      jwt_token_description: Type.String(),
      jwt_token_life: Type.Integer({ description: 'Seconds.' }),
      jwt_token_remaining_life: Type.Number({ description: 'Seconds, computed at request time; 0 once expired.' }),
      expiry_status: StringEnum(['Valid', 'Expired']),
      ...limitFields,
    }),
    { description: 'Keyed by jwt_token_id.' },
  ),
});

const TokenBody = Type.Object({
  message: Type.Literal('Token exists'),
  jwt_token_description: Type.String(),
  jwt_token_life: Type.Integer({ description: 'Seconds.' }),
  jwt_token_life_remaining: Type.Number({ description: 'Seconds, computed at request time; 0 once expired.' }),
  expiry_status: StringEnum(['Valid', 'Expired']),
  ...limitFields,
});

const DeletedBody = Type.Object({ message: Type.Literal('Token deleted') });

export const tokenRoutes: RouteModule = {
  name: 'tokens',
  register(app, { services }) {
    const tags = ['tokens'];
    app.post<{ Body: Static<typeof CreateTokenBody> }>(
      '/token',
      {
        config: { auth: 'basic' },
        schema: {
          tags,
          summary: 'Create a token',
          operationId: 'createToken',
          body: CreateTokenBody,
          response: { 201: success('The new token; its value is shown only here.', CreatedTokenBody), ...errorResponses(400, 401, 409, 413, 415, 429, 500) },
        },
      },
      async (request, reply) => {
        const created = await services.tokens.createToken(principalOf(request), {
          description: request.body.jwt_token_description,
          life: request.body.jwt_token_life,
          permissions: request.body.permissions,
          wallets: request.body.wallets,
        });
        return reply.status(201).send({
          message: 'Token generated',
          jwt_token_id: created.id,
          jwt_token: created.token,
          jwt_token_description: created.description,
          jwt_token_life: created.lifeSeconds,
          ...limitsBody(created.limits),
        });
      },
    );

    app.get(
      '/token',
      {
        config: { auth: 'basic' },
        schema: { tags, summary: 'List your tokens', operationId: 'listTokens', response: { 200: success('Your tokens, without their values.', TokenListBody), ...errorResponses(401, 429, 500) } },
      },
      async (request) => {
        const tokens = await services.tokens.listTokens(principalOf(request));
        const jwt_tokens: Static<typeof TokenListBody>['jwt_tokens'] = {};
        for (const t of tokens) {
          jwt_tokens[t.id] = {
            jwt_token_description: t.description,
            jwt_token_life: t.lifeSeconds,
            jwt_token_remaining_life: t.remainingSeconds,
            expiry_status: t.expiryStatus,
            ...limitsBody(t.limits),
          };
        }
        return { message: 'Tokens exists', jwt_tokens };
      },
    );

    app.get<{ Params: Static<typeof TokenIdParams> }>(
      '/token/:jwt_token_id',
      {
        config: { auth: 'basic' },
        schema: { tags, summary: 'Read one of your tokens', operationId: 'getToken', params: TokenIdParams, response: { 200: success('The token details.', TokenBody), ...errorResponses(401, 404, 429, 500) } },
      },
      async (request) => {
        const t = await services.tokens.getToken(principalOf(request), request.params.jwt_token_id);
        return {
          message: 'Token exists',
          jwt_token_description: t.description,
          jwt_token_life: t.lifeSeconds,
          jwt_token_life_remaining: t.remainingSeconds,
          expiry_status: t.expiryStatus,
          ...limitsBody(t.limits),
        };
      },
    );

    app.delete<{ Params: Static<typeof TokenIdParams> }>(
      '/token/:jwt_token_id',
      {
        config: { auth: 'basic' },
        schema: { tags, summary: 'Delete (revoke) one of your tokens', operationId: 'deleteToken', params: TokenIdParams, response: { 200: success('Deleted; the token is refused from now on.', DeletedBody), ...errorResponses(401, 404, 429, 500) } },
      },
      async (request) => {
        await services.tokens.deleteToken(principalOf(request), request.params.jwt_token_id);
        return { message: 'Token deleted' };
      },
    );
  },
};
