/**
 * Opaque keyset pagination tokens: base64url of a small JSON document that names the listing
 * (`kind`), the customer and the last key returned. Decoding checks all three, so a token from
 * another listing or customer, or a damaged one, is refused rather than misread.
 */
export interface PageToken<K> {
  kind: string;
  customer: string;
  /** The last key of the previous page. */
  after: K;
  /** Listing-specific query state (filters, time range) that the next page must repeat. */
  query?: Record<string, unknown>;
}

export function encodePageToken<K>(token: PageToken<K>): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** The token's content, or undefined when it is malformed or belongs to another listing or customer. */
export function decodePageToken<K>(
  text: string,
  kind: string,
  customer: string,
  isKey: (after: unknown) => after is K,
): PageToken<K> | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const token = parsed as Partial<PageToken<unknown>>;
  if (token.kind !== kind || token.customer !== customer || !isKey(token.after)) return undefined;
  if (token.query !== undefined && (typeof token.query !== 'object' || token.query === null)) return undefined;
  return token as PageToken<K>;
}

/** A `(created, id)` key, the usual keyset position. */
export interface CreatedIdKey {
  created: number;
  id: string;
}

export function isCreatedIdKey(value: unknown): value is CreatedIdKey {
  const key = value as CreatedIdKey;
  return typeof value === 'object' && value !== null && Number.isSafeInteger(key.created) && typeof key.id === 'string';
}
