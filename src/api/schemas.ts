/** Schemas shared by every route: error bodies and the error responses a route may give. */
import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox';

export const FieldErrorSchema = Type.Object({
  path: Type.String({ description: 'JSON pointer into the request body, e.g. `/jwt_token_life`.' }),
  message: Type.String(),
});

const errorBody = (description: string) =>
  Type.Object(
    {
      message: Type.String({ description: 'Human-readable text.' }),
      code: Type.String({ description: 'Stable snake_case code.' }),
      errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'Present on validation errors (400).' })),
      permission: Type.Optional(Type.String({ description: 'The permission the token lacks (403 `permission_missing`).' })),
    },
    { description },
  );

export const ErrorBody = errorBody('Error.');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed JSON, or a body or parameter that fails validation (`errors` names each field).',
  401: 'Missing or invalid credentials (`WWW-Authenticate` names the scheme).',
  403: 'Authenticated, but not allowed.',
  404: 'Not found.',
  405: 'Known path, other method (`Allow` lists the methods).',
  409: 'Conflict with existing data or with a concurrent change (`psbt_busy`, `gap_limit_reached`, ...); the `code` says which.',
  413: 'Request body over 1 MiB.',
  415: 'A request body without `Content-Type: application/json`.',
  422: 'Well-formed but impossible, or over a configured limit (`too_many_wallets`, `gap_limit_too_high`, `too_many_pending_psbts`).',
  429: 'Too many failed login attempts (`rate_limited`; right passwords are never refused, they wait their turn), or more requests of one user at once than it serves and lets wait in line, or more open event streams than `user_event_streams` (`too_many_requests`); `Retry-After` in seconds.',
  500: 'Internal error; the body says nothing internal.',
  503: 'A dependency is down, the service is still starting (`starting`, with `Retry-After`), or the wallet\'s stored chain data is inconsistent (`wallet_rows_inconsistent`: a rescan of the wallet rebuilds it).',
};

/** Error responses for a route's `response` schema. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, errorBody(ERROR_DESCRIPTIONS[s] ?? 'Error.')]));
}

/**
 * A success response's schema with the text the API description shows for it (without one the
 * OpenAPI generator writes "Default Response").
 */
export function success<T extends TSchema>(description: string, schema: T): T {
  return { ...schema, description };
}

/*
 * Response schemas say "this or null" and "one of these strings" with a type list and an enum, not with
 * anyOf: the response serialiser checks each anyOf branch with a schema validator, compiled at the route's
 * first response (50-100 ms for the wallet details) and run for every field of every entry after.
 */

/** A response value that may be null (`type: [T, 'null']`). */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  return Type.Unsafe<Static<T> | null>({ ...schema, ...options, type: [schema.type, 'null'] });
}

/** A response string from a fixed list (`enum`). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}
