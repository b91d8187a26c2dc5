/** What every response, error or success, allows a browser (docs/http.md "CORS and what every answer carries"). */
export const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
export const ALLOW_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID';
export const EXPOSE_HEADERS = 'ETag, Content-Disposition, Location';

/** The CORS headers of answers written outside @fastify/cors (framework errors, parser refusals). */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': ALLOW_METHODS,
  'access-control-allow-headers': ALLOW_HEADERS,
  'access-control-expose-headers': EXPOSE_HEADERS,
};

/**
 * Headers every answer carries besides CORS (docs/security.md): no MIME sniffing, and nothing kept
 * by a cache, since answers hold tokens, keys and tenants' data; a route that may be cached says
 * so itself.
 */
export const PROTECTION_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** HSTS under HTTPS: browsers keep to HTTPS for a year (RFC 6797). */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000';

/** What answers written outside the hooks carry (framework errors, parser refusals). */
export const EVERY_ANSWER_HEADERS: Readonly<Record<string, string>> = { ...CORS_HEADERS, ...PROTECTION_HEADERS };
