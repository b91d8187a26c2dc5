import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, docs/webhooks.md "Verifying"): the
 * secret is `whsec_` and the base64 of its key bytes; a signature is `v1,` and the base64 of
 * HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`.
 */

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new webhook secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key a secret stands for (the bytes after `whsec_`). */
function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** A message's body: text (signed and sent as its UTF-8 bytes), bytes, or bytes in pieces sent one after the other. */
export type WebhookBody = string | Buffer | readonly Buffer[];

/** The body's pieces, in the order they are signed and sent. */
export function bodyPieces(body: WebhookBody): readonly (string | Buffer)[] {
  return typeof body === 'string' || Buffer.isBuffer(body) ? [body] : body;
}

/** One `v1,<base64>` signature of a message. */
export function signWebhookMessage(secret: string, messageId: string, timestampSeconds: number, body: WebhookBody): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${messageId}.${timestampSeconds}.`);
  for (const piece of bodyPieces(body)) mac.update(piece);
  return `v1,${mac.digest('base64')}`;
}

/**
 * The `webhook-signature` header: one signature per secret, separated by spaces (during a
 * rotation both the new and the previous secret sign, so a receiver holding either verifies).
 */
export function webhookSignatureHeader(secrets: readonly string[], messageId: string, timestampSeconds: number, body: WebhookBody): string {
  return secrets.map((secret) => signWebhookMessage(secret, messageId, timestampSeconds, body)).join(' ');
}
