import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import type { Services } from '../../services/index.js';

export interface RouteContext {
  services: Services;
  config: Config;
}

/**
 * A group of routes under `/api/v1alpha`. Each route declares `config: { auth: 'basic' | 'bearer' }`
 * and a TypeBox `schema` (body, params, every response including errors): validation, serialisation
 * and the OpenAPI document all come from it.
 */
export interface RouteModule {
  name: string;
  register(app: FastifyInstance, context: RouteContext): void | Promise<void>;
}
