/**
 * Webhook signatures (docs/webhooks.md): HMAC-SHA256 with the webhook's secret over
 * `<timestamp>.<body>`, sent as `X-WCS-Signature: v1=<hex>` with `X-WCS-Timestamp: <unix seconds>`.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-wcs-signature';
export const TIMESTAMP_HEADER = 'x-wcs-timestamp';
export const EVENT_ID_HEADER = 'x-wcs-event-id';
export const EVENT_TYPE_HEADER = 'x-wcs-event-type';
export const DELIVERY_ID_HEADER = 'x-wcs-delivery-id';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function signPayload(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
