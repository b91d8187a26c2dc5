import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { ServerContext } from './context.js';
import { BODY_METHODS } from './conventions.js';
import { OPERATIONS, TAGS, type OperationDoc } from './operations.js';

/** The route's key in OPERATIONS: method and fastify URL, e.g. `GET /:customer_id/events`. */
const operationKey = (method: string, url: string) => `${method} ${url}`;

/**
 * Refuses to register a route that OPERATIONS does not name, so that no operation reaches the
 * document without its operationId, description and refusals (like the access guard's check).
 */
export function requireOperationDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url === '*') return; // the CORS plugin's OPTIONS catch-all, not an operation
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      if (!OPERATIONS[operationKey(method, route.url)]) {
        throw new Error(`route ${method} ${route.url} has no entry in OPERATIONS (src/server/operations.ts)`);
      }
    }
  });
}

/** The options of @fastify/swagger: the document's header and the per-operation additions. */
export function openApiOptions(ctx: ServerContext): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'scanhub API',
        version: '1.0.1',
        description: 'Events, gateways, provisioning, job analysis, features, assets and users (spec v1.0.1).',
        // Self-hosted: whoever runs the deployment answers for it; there is no central address to name.
        contact: { name: 'The operator of this scanhub deployment' },
      },
      tags: TAGS,
      components: {
        securitySchemes: {
          IdToken: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The id_token of POST /auth/login, or an API key of POST /{customer_id}/api-keys, bare or as "Bearer <token>".',
          },
          MetricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'GET /metrics only: the SCANHUB_METRICS_TOKEN the server runs with. Without it set, /metrics takes no token and answers clients on its own machine only.',
          },
        },
      },
    },
    // Shared schemas keep their $id as their name (components/schemas/Error, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    // Hidden routes (the CORS plugin's OPTIONS catch-all) stay out of the document as they are.
    transform: ({ schema, url, route }) =>
      (schema as { hide?: boolean } | undefined)?.hide ? { schema, url } : documentOperation(schema, url, route.method),
    // Read when the document is first built (first request): `serve` settles the public URL after listening.
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      const servers = ctx.config.publicUrl ? [{ url: ctx.config.publicUrl, description: 'This deployment (serve --public-url)' }] : [];
      return { ...document, ...(servers.length ? { servers } : {}) };
    },
  };
}

/** Every response that is not a success carries the Error body; the ranges were for the serializer. */
const RANGES = ['4xx', '5xx', '4XX', '5XX', 'default'];

/** The route schema as the document shows it: operationId, description, security, each refusal by status. */
function documentOperation(schema: FastifySchema | undefined, url: string, method: string | string[]) {
  const key = operationKey([method].flat()[0]!, url);
  const doc = OPERATIONS[key];
  if (!doc) throw new Error(`route ${key} has no entry in OPERATIONS (src/server/operations.ts)`);
  const routeSchema = (schema ?? {}) as FastifySchema & { description?: string; security?: unknown[]; response?: Record<string, unknown> };
  const description = routeSchema.description ?? doc.description;
  if (!description) throw new Error(`route ${key} has no description, neither in its schema nor in OPERATIONS`);
  const successes = Object.entries(routeSchema.response ?? {}).filter(([status]) => !RANGES.includes(status));
  const refusals = Object.entries(refusalsOf(doc, routeSchema, url, [method].flat())).map(([status, when]) => [
    status,
    { $ref: 'Error#', description: when },
  ]);
  const wildcard = url.endsWith('/*') ? doc.wildcard : undefined;
  if (url.includes('*') && !wildcard) throw new Error(`route ${key} has a wildcard but OPERATIONS names no parameter for it`);
  return {
    url: wildcard ? `${url.slice(0, -1)}:${wildcard.name}` : url,
    schema: {
      ...routeSchema,
      operationId: doc.operationId,
      description,
      // Stated on every operation, none included: a client generator need not guess.
      security: routeSchema.security ?? [],
      ...(wildcard
        ? { params: { type: 'object', properties: { [wildcard.name]: { type: 'string', description: wildcard.description } }, required: [wildcard.name] } }
        : {}),
      response: Object.fromEntries([...successes, ...refusals]),
    },
  };
}

/**
 * The statuses an operation can refuse with: those every route of its kind gives (conventions.ts,
 * access.ts, the validators), then its own from OPERATIONS, which may also reword a shared one.
 */
function refusalsOf(doc: OperationDoc, schema: FastifySchema & { security?: unknown[] }, url: string, methods: string[]): Record<string, string> {
  const takesBody = methods.some((method) => BODY_METHODS.has(method));
  // Path parameters are checked too (length, and the numeric ones by the validators).
  const hasInput = takesBody || /[:*]/.test(url) || Boolean(schema.params ?? schema.querystring ?? schema.headers ?? schema.body);
  const guarded = Boolean(schema.security?.length);
  const refusals: Record<string, string> = {
    ...(hasInput ? { 400: 'A parameter, header or body field is missing, malformed or out of range; details names it.' } : {}),
    ...(guarded ? { 401: 'No IdToken in the Authorization header, or an invalid or expired one, or a malformed, unknown, revoked or expired API key.' } : {}),
    ...(guarded ? { 403: "The IdToken's user belongs to another customer, or lacks the permission this call needs." } : {}),
    ...(takesBody ? { 413: 'The request body is larger than 1 MiB.' } : {}),
    ...(takesBody ? { 415: 'The request body is not application/json.' } : {}),
    500: 'The server failed to handle the request; the cause is in its log.',
    503: 'The server is shutting down: retry in a moment.',
    ...(takesBody && !doc.readOnly ? { 507: 'The database has no space left for the write; details names the disk. Reads still work, and the call succeeds again once space is freed.' } : {}),
    ...doc.errors,
  };
  return Object.fromEntries(Object.entries(refusals).sort(([a], [b]) => Number(a) - Number(b)));
}
