/** The route modules served under /api/v1alpha, in registration order. Add new modules here. */
import { eventRoutes } from './events.js';
import { probeRoutes } from './probes.js';
import { psbtRoutes } from './psbt.js';
import { serviceRoutes } from './service.js';
import { tokenRoutes } from './tokens.js';
import type { RouteModule } from './types.js';
import { walletRoutes } from './wallets.js';
import { walletFileRoutes } from './wallet-files.js';
import { walletLabelRoutes } from './wallet-labels.js';
import { webhookRoutes } from './webhooks.js';

export const API_ROUTE_MODULES: readonly RouteModule[] = [tokenRoutes, serviceRoutes, probeRoutes, psbtRoutes, walletRoutes, walletFileRoutes, walletLabelRoutes, webhookRoutes, eventRoutes];

export type { RouteContext, RouteModule } from './types.js';
