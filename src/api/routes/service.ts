/** `GET /v1alpha/service`: the service details object (admin only). */
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth.js';
import { errorResponses, Nullable, success } from '../schemas.js';
import type { RouteModule } from './types.js';

// Property order is the member order of the response (the serialiser follows the schema).
export const ServiceDetailsBody = Type.Object({
  data_folder: Type.String(),
  config: Type.Object(
    {
      auth: Type.Object({
        method: Type.String(),
        password_min_chars: Type.Integer(),
        rate_limit: Type.String({ description: 'Failed BasicAuth attempts allowed per minute.' }),
        registration_link_timeout: Type.String({ description: 'Hours an invitation link stays valid.' }),
      }),
      host: Type.String(),
      port: Type.Integer(),
      api_active: Type.Boolean(),
      database: Type.String({ description: '`sqlite` or `postgres`.' }),
      network: Type.String(),
      bitcoind_url: Nullable(Type.String()),
      bitcoind_auth: Type.String({ description: '`cookie`, `userpass` or `none`.' }),
      bitcoind_blocks_folder: Nullable(Type.String(), { description: 'The node\'s `blocks` folder scans read from while the node keeps no block filters (set, or found beside the node\'s cookie); null: none.' }),
      electrum_url: Nullable(Type.String(), { description: 'The Electrum server the chain is followed through instead of Bitcoin Core (`tcp://` or `ssl://host:port`); null: none, `bitcoind_url` is the chain source.' }),
      electrum_tls_fingerprint: Nullable(Type.String(), { description: 'SHA-256 fingerprint (hex) of the Electrum server\'s certificate, trusted instead of the system\'s certificate authorities; null: none pinned.' }),
      electrum_proxy: Nullable(Type.String(), { description: 'The SOCKS5 proxy the Electrum server is reached through; null: direct.' }),
      max_fee_rate: Type.Integer({ description: 'sat/vB.' }),
      token_max_life: Type.Integer({ description: 'Seconds.' }),
      log_level: Type.String(),
      cors_origins: Type.Array(Type.String()),
      limits: Type.Object(
        {
          user_requests_in_flight: Type.Integer({ description: 'Requests of one user each instance serves at once; more wait in line.' }),
          user_request_queue: Type.Integer({ description: 'Requests of one user that may wait in line per instance; one more answers 429.' }),
          user_request_queue_timeout: Type.Integer({ description: 'Seconds a request may wait in line before it answers 429.' }),
          user_event_streams: Type.Integer({ description: 'Event streams one user may hold open per instance.' }),
          user_request_rate: Type.Integer({ description: 'Optional hard cap: requests per second per user and instance; 0: off.' }),
          user_request_burst: Type.Integer({ description: 'Bucket size of the `user_request_rate` cap.' }),
          max_wallets_per_user: Type.Integer(),
          max_gap_limit: Type.Integer(),
          address_page_max: Type.Integer(),
          request_timeout: Type.Integer({ description: 'Seconds.' }),
        },
        { description: 'What one user may cost the service (docs/operations.md, "Cost limits").' },
      ),
      wallet_states_kept: Type.Integer({ description: 'Wallet states each instance keeps loaded for reads at most.' }),
      wallet_states_budget: Type.Integer({ description: 'Transactions plus coins the wallet states kept for reads may hold together per instance.' }),
      wallet_states_idle: Type.Number({ description: 'Seconds a wallet state kept for reads stays loaded unread; 0: no such limit.' }),
    },
    { description: 'Configuration without secrets.' },
  ),
  version: Type.String(),
  network: Type.String(),
  chain: Nullable(
    Type.Object({
      backend: Type.String({ description: 'The chain source in use: `bitcoind` (Bitcoin Core, `config.bitcoind_url`) or `electrum` (an Electrum server, `config.electrum_url`).' }),
      network: Nullable(Type.String(), {
        description: 'The network the node follows; when it is not the service\'s `network`, `sync_state` is `unavailable: wrong_network` and no block is applied.',
      }),
      tip_height: Nullable(Type.Integer()),
      tip_hash: Nullable(Type.String()),
      sync_state: Type.String(),
    }),
    { description: 'The chain backend; null while none is configured.' },
  ),
  wallets_names: Type.Array(Type.String(), {
    description: 'Names of the wallets the caller reaches; empty for a token narrowed without `wallets:read` (as are `alias_name`, `name_alias` and `wallets_alias`).',
  }),
  last_update: Type.String({ description: 'Response time, UTC, `MM/DD/YYYY, HH:MM:SS`.' }),
  alias_name: Type.Record(Type.String(), Type.String()),
  name_alias: Type.Record(Type.String(), Type.String()),
  wallets_alias: Type.Array(Type.String()),
});

export const serviceRoutes: RouteModule = {
  name: 'service',
  register(app, { services }) {
    app.get(
      '/service',
      {
        config: { auth: 'bearer' },
        schema: { tags: ['service'], summary: 'Service details (admin only)', operationId: 'getServiceDetails', response: { 200: success('The service details object.', ServiceDetailsBody), ...errorResponses(401, 403, 500) } },
      },
      (request) => services.serviceDetails.details(principalOf(request)),
    );
  },
};
