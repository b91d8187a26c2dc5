import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { ServerContext } from './context.js';
import { BODY_METHODS } from './conventions.js';
import { SCANHUB_VERSION } from '../version.js';

/**
 * What the OpenAPI document says of an operation beyond the usual schema, written in the route's
 * schema beside its summary. operationIds are a contract: generated clients name their methods
 * after them, and test/server/openapi.test.ts pins the full list, so a rename is a deliberate change.
 */
declare module 'fastify' {
  interface FastifySchema {
    /** Refusals particular to the operation, status -> when; rewords a shared one (refusalsOf) of the same status. */
    refusals?: Record<number, string>;
    /** The name and meaning of the route's `*` (OpenAPI has no wildcard parameter). */
    wildcard?: { name: string; description: string };
    /** A POST that only reads: no 507 (every other POST, PUT, PATCH and DELETE writes). */
    readOnly?: true;
  }
}

/** The tags the routes use, in the order a reader meets them. */
const TAGS = [
  { name: 'auth', description: 'Log in for an IdToken, accept an invitation, and the keys that verify IdTokens.' },
  { name: 'users', description: 'Users of a customer, their roles, invitations and password resets.' },
  { name: 'api keys', description: 'Long-lived keys for scripts and CI, used in the Authorization header like an IdToken.' },
  { name: 'events', description: 'Scan and telemetry events the gateways sent, listed or exported as CSV.' },
  { name: 'devices', description: 'Scanners (the wearables) of a customer, as their events name them: battery, firmware, status.' },
  { name: 'gateways', description: 'Gateways (the wearables\' base stations) of a customer.' },
  { name: 'commands', description: 'Commands to gateways and their scanners, queued until delivered over MQTT, and their outcome.' },
  { name: 'provisioning', description: 'Certificates and single-use tokens that bring a gateway onto the MQTT broker.' },
  { name: 'job configurations', description: 'Job configurations (start and end barcodes over some gateways) and the job analysis over them.' },
  { name: 'assets', description: 'Apps and firmware to download after agreeing to their EULA.' },
  { name: 'features', description: 'Feature flags of a customer.' },
  { name: 'downloads', description: 'Files handed out through signed, expiring links: exports, assets, provisioning packages.' },
  { name: 'audit', description: 'Who did what: the audit log of security-relevant actions.' },
  { name: 'retention', description: 'How long events are kept before they are deleted.' },
  { name: 'webhooks', description: 'Messages POSTed to your URLs, signed the Standard Webhooks way: events, alerts, job completions.' },
  { name: 'operations', description: 'Health, metrics and this document, for operators and tools.' },
  { name: 'console', description: 'The web console served on the API\'s own origin: its page and the files the page loads.' },
];

/**
 * Refuses to register a route whose schema lacks an operationId or a description (or, for a `*`
 * route, the name of its wildcard), so that no operation reaches the document without them (like
 * the access guard's check).
 */
export function requireOperationDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url === '*') return; // the CORS plugin's OPTIONS catch-all, not an operation
    const methods = [route.method].flat().filter((method) => method !== 'HEAD' && method !== 'OPTIONS');
    if (methods.length === 0) return;
    const schema = route.schema ?? {};
    const key = `${methods.join(',')} ${route.url}`;
    if (!schema.operationId) throw new Error(`route ${key} has no operationId in its schema`);
    if (!schema.description) throw new Error(`route ${key} has no description in its schema`);
    if (route.url.includes('*') && !schema.wildcard) throw new Error(`route ${key} has a wildcard but its schema names no parameter for it`);
  });
}

/** The options of @fastify/swagger: the document's header and the per-operation additions. */
export function openApiOptions(ctx: ServerContext): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'scanhub API',
        // The document describes this server: its version is the package's (the spec's is in the description).
        version: SCANHUB_VERSION,
        description: 'Events, gateways, provisioning, job analysis, features, assets and users (spec v1.0.1).',
        // Self-hosted: whoever runs the deployment answers for it; there is no central address to name.
        contact: { name: 'The operator of this scanhub deployment' },
      },
      tags: TAGS,
      components: {
        securitySchemes: {
          IdToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The id_token of POST /auth/login, or an API key of POST /{customer_id}/api-keys, as "Bearer <token>" (the bare token is taken too).',
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

/** The route schema as the document shows it: security, each refusal by status, the wildcard named. */
function documentOperation(schema: FastifySchema | undefined, url: string, method: string | string[]) {
  const { refusals: own, wildcard: named, readOnly, ...routeSchema } = (schema ?? {}) as FastifySchema & { response?: Record<string, unknown> };
  const successes = Object.entries(routeSchema.response ?? {}).filter(([status]) => !RANGES.includes(status));
  const refusals = Object.entries(refusalsOf({ refusals: own, readOnly }, routeSchema, url, [method].flat())).map(([status, when]) => [
    status,
    { $ref: 'Error#', description: when },
  ]);
  const wildcard = url.endsWith('/*') ? named : undefined;
  return {
    url: wildcard ? `${url.slice(0, -1)}:${wildcard.name}` : url,
    schema: {
      ...routeSchema,
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
 * access.ts, the validators), then its own (`refusals`), which may also reword a shared one.
 */
function refusalsOf(doc: Pick<FastifySchema, 'refusals' | 'readOnly'>, schema: FastifySchema, url: string, methods: string[]): Record<string, string> {
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
    ...doc.refusals,
  };
  return Object.fromEntries(Object.entries(refusals).sort(([a], [b]) => Number(a) - Number(b)));
}
