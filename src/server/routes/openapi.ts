import type { FastifyInstance } from 'fastify';

/** `GET /openapi.json`: the document @fastify/swagger builds from every route registered (src/server/openapi.ts). */
export function registerOpenApiRoutes(app: FastifyInstance): void {
  app.get('/openapi.json', {
    schema: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      description: 'OpenAPI 3.0, generated from the routes\' schemas; each operation has a stable operationId for client generators.',
      tags: ['operations'],
      response: { 200: { type: 'object', additionalProperties: true, description: 'The document' } },
    },
    handler: async () => app.swagger(),
  });
}
