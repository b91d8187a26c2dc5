/** What every response allows a browser (DESIGN.md: CORS on every response, error or success). */
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
