/**
 * What a log line may say of a request's URL (docs/security.md, "What is logged"): the query of a
 * signed link authorizes whoever holds it, and a few query parameters carry credentials, so both
 * are replaced before the URL reaches a log.
 */

/** Written in place of a secret. */
export const REDACTED = '[redacted]';

/** Query parameters whose values are credentials wherever they appear. */
const SECRET_PARAMETERS = new Set(['signature', 'token', 'password', 'secret', 'key', 'api_key', 'access_token', 'id_token', 'invitation_token']);

/** Paths whose whole query is a credential: the signed links of src/domain/signed-links.ts. */
const SIGNED_LINK_PREFIX = '/downloads/';

/** The URL (path and query, as a request line carries it) with its secrets replaced by REDACTED. */
export function redactedUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const path = url.slice(0, start);
  if (path.startsWith(SIGNED_LINK_PREFIX)) return `${path}?${REDACTED}`;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return SECRET_PARAMETERS.has(safeDecode(name).toLowerCase()) ? `${name}=${REDACTED}` : pair;
    });
  return `${path}?${query.join('&')}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
