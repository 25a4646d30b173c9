/**
 * Typed failures of the use cases. `kind` says what went wrong in general (api/ maps it to an
 * HTTP status), `code` is the stable snake_case name clients see, `message` is safe to show.
 */

export type ServiceErrorKind =
  | 'invalid_input' // 400
  | 'unauthenticated' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'unprocessable' // 422
  | 'rate_limited' // 429
  | 'unavailable'; // 503

export interface FieldError {
  /** JSON pointer into the request body, e.g. `/jwt_token_life`. */
  path: string;
  message: string;
}

export interface ServiceErrorDetails {
  errors?: FieldError[];
  retryAfterSeconds?: number;
  /** The scheme an unauthenticated caller should use. */
  scheme?: 'Basic' | 'Bearer';
  /** The permission a narrowed token lacks (403 `permission_missing`). */
  permission?: string;
}

export class ServiceError extends Error {
  constructor(
    readonly kind: ServiceErrorKind,
    readonly code: string,
    message: string,
    readonly details: ServiceErrorDetails = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const UNAUTHENTICATED_MESSAGE = 'Missing or invalid credentials';

export function unauthenticated(scheme: 'Basic' | 'Bearer'): ServiceError {
  return new ServiceError('unauthenticated', 'unauthorized', UNAUTHENTICATED_MESSAGE, { scheme });
}

export function invalidField(path: string, message: string, code = 'invalid_request'): ServiceError {
  return new ServiceError('invalid_input', code, `${path.slice(1)} ${message}`, { errors: [{ path, message }] });
}
