/** Webhooks (`/webhooks`): registration, change, removal, delivery log and redelivery. */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../services/events/types.js';
import { principalOf } from '../auth.js';
import { errorResponses, Nullable, StringEnum, success } from '../schemas.js';
import type { RouteModule } from './types.js';

const EventTypes = Type.Array(Type.String({ enum: [...EVENT_TYPES] }), { minItems: 1, description: 'The event types delivered.' });
const WalletAliases = Type.Array(Type.String(), { minItems: 1, description: 'Aliases of wallets you can read; their events are delivered.' });

const CreateWebhookBody = Type.Object({
  url: Type.String({ description: 'http:// or https:// address the events are POSTed to.' }),
  events: Type.Array(Type.String(), { description: EventTypes.description }),
  wallets: Type.Array(Type.String(), { description: WalletAliases.description }),
});

const UpdateWebhookBody = Type.Object({
  url: Type.Optional(CreateWebhookBody.properties.url),
  events: Type.Optional(CreateWebhookBody.properties.events),
  wallets: Type.Optional(CreateWebhookBody.properties.wallets),
});

const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: EventTypes,
  wallets: WalletAliases,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const CreatedWebhookSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({ description: 'Key of the HMAC-SHA256 signature of every delivery (docs/webhooks.md); shown only in this response.' }),
});

const DeliverySchema = Type.Object({
  id: Type.String(),
  event_id: Nullable(Type.String()),
  event_type: Nullable(Type.String()),
  wallet: Nullable(Type.String()),
  status: StringEnum(['pending', 'delivered', 'failed'], { description: '`failed`: given up after the last retry.' }),
  attempts: Type.Integer(),
  response_code: Nullable(Type.Integer(), { description: 'HTTP status of the last attempt; null when no answer came.' }),
  error: Nullable(Type.String(), { description: 'Why the last attempt got no answer (refused address, timeout, connection).' }),
  next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const WebhookParams = Type.Object({ webhook_id: Type.String({ maxLength: 64 }) });
const DeliveryParams = Type.Object({ webhook_id: Type.String({ maxLength: 64 }), delivery_id: Type.String({ maxLength: 64 }) });

export const webhookRoutes: RouteModule = {
  name: 'webhooks',
  register(app, { services }) {
    const tags = ['webhooks'];
    const { webhooks } = services;

    app.post<{ Body: Static<typeof CreateWebhookBody> }>(
      '/webhooks',
      {
        config: { auth: 'bearer' },
        schema: {
          tags,
          summary: 'Register a webhook',
          operationId: 'createWebhook',
          description: 'Events of the given wallets and types are POSTed to the URL, signed with the secret returned here (once). Needs `webhooks:manage`.',
          body: CreateWebhookBody,
          response: { 201: success('The webhook with its secret.', CreatedWebhookSchema), ...errorResponses(400, 401, 403, 404, 413, 415, 422, 500) },
        },
      },
      async (request, reply) => reply.status(201).send(await webhooks.create(principalOf(request), request.body)),
    );

    app.get(
      '/webhooks',
      { config: { auth: 'bearer' }, schema: { tags, summary: 'Your webhooks', operationId: 'listWebhooks', response: { 200: success('Your webhooks, oldest first, without secrets.', Type.Object({ webhooks: Type.Array(WebhookSchema) })), ...errorResponses(401, 403, 500) } } },
      async (request) => ({ webhooks: await webhooks.list(principalOf(request)) }),
    );

    app.get<{ Params: Static<typeof WebhookParams> }>(
      '/webhooks/:webhook_id',
      { config: { auth: 'bearer' }, schema: { tags, summary: 'One of your webhooks', operationId: 'getWebhook', description: 'A webhook of another user, or none with this id: 404 `webhook_not_found`.', params: WebhookParams, response: { 200: success('The webhook, without its secret.', WebhookSchema), ...errorResponses(401, 403, 404, 500) } } },
      (request) => webhooks.get(principalOf(request), request.params.webhook_id),
    );

    app.patch<{ Params: Static<typeof WebhookParams>; Body: Static<typeof UpdateWebhookBody> }>(
      '/webhooks/:webhook_id',
      {
        config: { auth: 'bearer' },
        schema: { tags, summary: 'Change the URL, event types or wallets of a webhook', operationId: 'updateWebhook', description: 'A webhook of another user, or none with this id: 404 `webhook_not_found`.', params: WebhookParams, body: UpdateWebhookBody, response: { 200: success('The changed webhook.', WebhookSchema), ...errorResponses(400, 401, 403, 404, 413, 415, 422, 500) } },
      },
      (request) => webhooks.update(principalOf(request), request.params.webhook_id, request.body),
    );

    app.delete<{ Params: Static<typeof WebhookParams> }>(
      '/webhooks/:webhook_id',
      { config: { auth: 'bearer' }, schema: { tags, summary: 'Remove a webhook and its delivery log', operationId: 'deleteWebhook', description: 'A webhook of another user, or none with this id: 404 `webhook_not_found`.', params: WebhookParams, response: { 200: success('Removed; nothing more is delivered.', Type.Object({ message: Type.Literal('Webhook deleted') })), ...errorResponses(401, 403, 404, 500) } } },
      async (request) => {
        await webhooks.delete(principalOf(request), request.params.webhook_id);
        return { message: 'Webhook deleted' as const };
      },
    );

    app.get<{ Params: Static<typeof WebhookParams> }>(
      '/webhooks/:webhook_id/deliveries',
      { config: { auth: 'bearer' }, schema: { tags, summary: 'The delivery log of a webhook', operationId: 'listWebhookDeliveries', description: 'A webhook of another user, or none with this id: 404 `webhook_not_found`.', params: WebhookParams, response: { 200: success('The latest 100 deliveries, newest first.', Type.Object({ deliveries: Type.Array(DeliverySchema) })), ...errorResponses(401, 403, 404, 500) } } },
      async (request) => ({ deliveries: await webhooks.deliveries(principalOf(request), request.params.webhook_id) }),
    );

    app.post<{ Params: Static<typeof DeliveryParams> }>(
      '/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
      { config: { auth: 'bearer' }, schema: { tags, summary: 'Deliver the event of one delivery again', operationId: 'redeliverWebhookEvent', description: 'Queues a new delivery of the same event, due now; the original stays in the log. An unknown webhook: 404 `webhook_not_found`; a delivery not of this webhook: 404 `delivery_not_found`.', params: DeliveryParams, response: { 202: success('The new delivery, queued.', DeliverySchema), ...errorResponses(401, 403, 404, 500) } } },
      async (request, reply) => reply.status(202).send(await webhooks.redeliver(principalOf(request), request.params.webhook_id, request.params.delivery_id)),
    );
  },
};
