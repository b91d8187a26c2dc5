import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed download links: `/downloads/{path}?expires={ms}&signature={hmac}` where the HMAC-SHA256
 * covers the path and the expiry. Anyone holding the link may download until it expires.
 */
export function signPath(key: Buffer, path: string, expires: number): string {
  return createHmac('sha256', key).update(`${path}\n${expires}`).digest('base64url');
}

/** `/downloads/...` with query, relative to the public URL. */
export function signedLinkPath(key: Buffer, path: string, expires: number): string {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return `/downloads/${encoded}?expires=${expires}&signature=${signPath(key, path, expires)}`;
}

export type LinkCheck = 'valid' | 'expired' | 'invalid';

/** Whether the signature matches the path and expiry, and the link has not expired at `now`. */
export function checkLink(key: Buffer, path: string, expires: string | undefined, signature: string | undefined, now: number): LinkCheck {
  if (!expires || !signature || !/^\d{1,16}$/.test(expires)) return 'invalid';
  const expected = Buffer.from(signPath(key, path, Number(expires)));
  const actual = Buffer.from(signature);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return 'invalid';
  return Number(expires) <= now ? 'expired' : 'valid';
}
