import { describe, expect, it } from 'vitest';
import { call } from './helpers/http.js';
import { startTestServer } from './helpers/server.js';

interface Operation {
  summary?: string;
  tags?: string[];
}

/** fastify's `/:customer_id/users/*` as the OpenAPI document writes it: `/{customer_id}/users/{*}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}').replace(/\*/g, '{*}');

describe('GET /openapi.json', () => {
  it('documents every registered route (enumerated at run time), each with a summary and a tag', async () => {
    const t = await startTestServer();
    try {
      const answer = await call(t.url, 'GET', '/openapi.json');
      expect(answer.status).toBe(200);
      const doc = answer.body as { openapi: string; info: { version: string }; paths: Record<string, Record<string, Operation>> };
      expect(doc.openapi).toBe('3.0.3');
      expect(doc.info.version).toBe('1.0.1');

      const routes = t.server.app.registeredRoutes.filter((route) => route.method !== 'HEAD');
      // The foundation's own routes are among them (the enumeration works at all).
      expect(routes.map((route) => `${route.method} ${route.url}`)).toEqual(
        expect.arrayContaining([
          'POST /auth/login',
          'POST /auth/accept-invitation',
          'GET /.well-known/jwks.json',
          'GET /healthz',
          'GET /openapi.json',
          'GET /:customer_id/me',
          'GET /:customer_id/users',
          'POST /:customer_id/users',
          'GET /:customer_id/users/:user_id',
          'DELETE /:customer_id/users/:user_id',
          'POST /:customer_id/users/:user_id/invitation',
          'GET /:customer_id/features',
          'GET /downloads/*',
        ]),
      );
      const undocumented = routes
        .filter((route) => {
          const operation = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
          return !operation?.summary || !operation.tags?.length;
        })
        .map((route) => `${route.method} ${route.url}`);
      expect(undocumented).toEqual([]);
      // Customer-scoped calls say they need the IdToken; the public ones do not.
      for (const route of routes) {
        const operation = doc.paths[openApiPath(route.url)]![route.method.toLowerCase()] as Operation & { security?: unknown };
        expect({ route: `${route.method} ${route.url}`, security: operation.security }).toEqual({
          route: `${route.method} ${route.url}`,
          security: route.url.startsWith('/:customer_id/') ? [{ IdToken: [] }] : undefined,
        });
      }
    } finally {
      await t.close();
    }
  });

  it('declares the IdToken security scheme and the error body', async () => {
    const t = await startTestServer();
    try {
      const doc = (await call(t.url, 'GET', '/openapi.json')).body as {
        components: { securitySchemes: unknown; schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
      };
      expect(doc.components.securitySchemes).toEqual({ IdToken: { type: 'apiKey', in: 'header', name: 'Authorization' } });
      const errorSchema = Object.values(doc.components.schemas).find((schema) => schema.required?.join() === 'title,details');
      expect(errorSchema?.properties).toEqual({ title: { type: 'string' }, details: { type: 'string' } });
    } finally {
      await t.close();
    }
  });
});
