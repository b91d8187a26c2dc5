import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The `id:` of a live event (docs/events.md "Live events"): its position in commit order, signed
 * with the customer (HMAC-SHA256), so that the server can trust a `Last-Event-ID` sent back and a
 * cursor of another customer or deployment does not verify.
 */

/**
 * A position in the commit order of events: SQLite `[seq]`, PostgreSQL `[tx, seq]` (the store
 * says which, src/store/ports/event-log.ts). Compared element by element.
 */
export type StreamPosition = readonly number[];

/** Negative, zero or positive as `a` comes before, at or after `b`. */
export function comparePositions(a: StreamPosition, b: StreamPosition): number {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** The later of two positions. */
export function laterPosition(a: StreamPosition, b: StreamPosition): StreamPosition {
  return comparePositions(a, b) >= 0 ? a : b;
}

/** The key that signs cursors, derived from the deployment's link-signing key (one secret, two uses kept apart). */
export function cursorKey(linkKey: Buffer): Buffer {
  return createHmac('sha256', linkKey).update('scanhub live event stream cursor').digest();
}

const SIGNATURE_BYTES = 16;

function sign(key: Buffer, customer: string, body: string): Buffer {
  return createHmac('sha256', key).update(customer).update('\n').update(body).digest().subarray(0, SIGNATURE_BYTES);
}

/** The cursor of a position in the customer's stream. */
export function encodeCursor(key: Buffer, customer: string, position: StreamPosition): string {
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${body}.${sign(key, customer, body).toString('base64url')}`;
}

/**
 * The position a cursor names, when the server made it for this customer; undefined when it is
 * malformed, altered, or another customer's. Its shape is the store's to check (a cursor made by
 * another kind of store verifies, but is not a position of this one).
 */
export function decodeCursor(key: Buffer, customer: string, text: string): unknown[] | undefined {
  const match = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{22})$/.exec(text);
  if (!match) return undefined;
  const [, body, signature] = match;
  const given = Buffer.from(signature!, 'base64url');
  if (given.length !== SIGNATURE_BYTES || !timingSafeEqual(given, sign(key, customer, body!))) return undefined;
  try {
    const position: unknown = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
    return Array.isArray(position) ? position : undefined;
  } catch {
    return undefined;
  }
}
