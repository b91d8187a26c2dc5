import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { hashApiKey, newApiKey } from '../../auth/api-keys.js';
import { PERMISSIONS, isPermission, type Permission } from '../../domain/permissions.js';
import { MAX_TIME_MILLIS } from '../../domain/event-listing.js';
import type { ApiKeyRecord } from '../../store/ports/index.js';
import { authenticate, principalOf } from '../access.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { createdIdPage, type CreatedIdList } from '../created-id-pages.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { customerParams, errorResponses, limitParameter, listBody, listOf } from '../schemas.js';

const API_KEY_LIST: CreatedIdList = { segment: 'api-keys', noun: 'API key' };

const apiKeyProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  permissions: { type: 'array', items: { type: 'string' } },
  created: { type: 'integer', description: 'Milliseconds since the epoch.' },
  expires_at: { type: ['integer', 'null'], description: 'Milliseconds since the epoch; null: the key does not expire.' },
  last_used: { type: ['integer', 'null'], description: 'When the key last authenticated a request, to the minute; null: never.' },
} as const;
const API_KEY_FIELDS = ['id', 'name', 'permissions', 'created', 'expires_at', 'last_used'] as const;

/** A key as lists show it: everything but the key itself, which only its creation answers. */
export const apiKeySchema = { type: 'object', properties: apiKeyProperties, required: [...API_KEY_FIELDS] } as const;

const { id: idProperty, name: nameProperty, ...laterProperties } = apiKeyProperties;
const createdKeySchema = {
  type: 'object',
  properties: {
    id: idProperty,
    name: nameProperty,
    key: { type: 'string', description: 'The key: shown only in this answer, stored only as a hash.' },
    ...laterProperties,
  },
  required: ['id', 'name', 'key', 'permissions', 'created', 'expires_at', 'last_used'],
} as const;

/** The key as the API shows it: no hash, no creator, no revocation (revoked keys are not shown). */
function toApiKey(key: ApiKeyRecord) {
  return {
    id: key.id,
    name: key.name,
    permissions: key.permissions,
    created: key.created,
    expires_at: key.expires_at,
    last_used: key.last_used,
  };
}

interface NewKeyBody {
  name: string;
  permissions?: string[];
  expires_at?: number;
}

/** The requested permissions in PERMISSIONS order, each known and held by the creator; 400 naming the first that is not. */
function grantedPermissions(requested: string[] | undefined, held: Permission[]): Permission[] {
  if (requested === undefined) return held;
  for (const permission of requested) {
    if (!isPermission(permission)) {
      throw badRequest(`Body field "permissions" names an unknown permission "${permission}": use some of ${PERMISSIONS.join(', ')}.`);
    }
    if (!held.includes(permission)) {
      throw badRequest(`Body field "permissions" names "${permission}", which you do not have: a key's permissions may not exceed its creator's.`);
    }
  }
  return PERMISSIONS.filter((p) => requested.includes(p));
}

const currentKeySchema = {
  type: 'object',
  properties: { ...apiKeyProperties, customer_id: { type: 'string' } },
  required: [...API_KEY_FIELDS, 'customer_id'],
} as const;

/** API keys for scripts and CI (docs/api-keys.md). */
export function registerApiKeyRoutes(app: FastifyInstance, ctx: ServerContext): void {
  getCurrentApiKey(app, ctx);
  createApiKey(app, ctx);
  listApiKeys(app, ctx);
  revokeApiKey(app, ctx);
}

function getCurrentApiKey(app: FastifyInstance, ctx: ServerContext): void {
  // Outside the customer's paths: a client holding only a key learns its customer here (an IdToken
  // carries it in a claim). Authenticated as every call is, so it also checks a key in CI.
  app.get('/api-keys/current', {
    schema: {
      operationId: 'getCurrentApiKey',
      summary: 'The API key in the Authorization header, with its customer',
      description:
        'For clients that hold only a key (CI): the key in the Authorization header, bare or as "Bearer <key>", and the customer it belongs to. Not for IdTokens, which name their customer in the claim customer_id.',
      tags: ['api keys'],
      response: { 200: currentKeySchema, ...errorResponses },
      refusals: {
        400: 'The Authorization header holds an IdToken, not an API key.',
        401: 'No Authorization header, or a malformed, unknown, revoked or expired API key.',
      },
    },
    handler: async (request) => {
      const caller = await authenticate(ctx, request.headers.authorization);
      if (!caller.apiKey) {
        throw badRequest('The Authorization header holds an IdToken, not an API key: an IdToken names its customer in its claim "customer_id".');
      }
      return { ...toApiKey(caller.apiKey), customer_id: caller.apiKey.customer_id };
    },
  });
}

function createApiKey(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: NewKeyBody }>('/:customer_id/api-keys', {
    config: { access: { permission: 'apikey.write' } },
    schema: {
      operationId: 'createApiKey',
      summary: 'Create an API key (shown once)',
      description:
        'The key ("shk_" and 43 characters) is in this answer only; the deployment keeps its hash. Send it in the Authorization header like an IdToken, bare or as "Bearer <key>": it acts in this customer as its creator, with its permissions (by default the creator\'s; never more).',
      tags: ['api keys'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 100 },
          permissions: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 50 },
          expires_at: {
            type: 'integer',
            minimum: 0,
            maximum: MAX_TIME_MILLIS,
            description: 'Milliseconds since the epoch; without it the key does not expire (or, created with an API key, expires with that key).',
          },
        },
        required: ['name'],
        additionalProperties: false,
      },
      response: { 201: createdKeySchema, ...errorResponses },
      refusals: {
        400: 'An unknown permission, a permission the caller does not have, or expires_at not in the future.',
        409: 'A key of this name exists and is not revoked.',
      },
    },
    handler: async (request, reply) => {
      const { name } = request.body;
      if (name.trim() === '') throw badRequest('Body field "name" is blank: name the key after what uses it, e.g. the pipeline.');
      const principal = principalOf(request);
      const permissions = grantedPermissions(request.body.permissions, principal.permissions);
      const now = ctx.clock();
      if (request.body.expires_at !== undefined && request.body.expires_at <= now) {
        const given = request.body.expires_at;
        throw badRequest(`Body field "expires_at" (${given}, ${new Date(given).toISOString()}) is not in the future: give a later time in milliseconds since the epoch.`);
      }
      // A key that makes keys cannot outlive itself through them: a leaked short-lived key must not
      // become a lasting one.
      const ceiling = principal.keyExpiresAt ?? null;
      if (ceiling !== null && request.body.expires_at !== undefined && request.body.expires_at > ceiling) {
        throw badRequest(
          `Body field "expires_at" (${new Date(request.body.expires_at).toISOString()}) is after ${new Date(ceiling).toISOString()}, when the API key making this call expires: a key may not outlive the key that creates it.`,
        );
      }
      const expires_at = request.body.expires_at ?? ceiling ?? undefined;
      const key = newApiKey();
      const record: ApiKeyRecord = {
        id: randomUUID(),
        customer_id: request.params.customer_id,
        name,
        key_hash: hashApiKey(key),
        permissions,
        created: now,
        created_by: principal.user.id,
        expires_at: expires_at ?? null,
        last_used: null,
        revoked: null,
      };
      const audit = auditEntry(ctx, request, 'apikey.created', { type: 'api_key', id: record.id }, { name, permissions, expires_at: record.expires_at });
      if (!(await ctx.store.apiKeys.create(record, audit))) {
        throw conflict(`An API key named "${name}" already exists: revoke it first or choose another name.`);
      }
      return reply.code(201).send({ ...toApiKey(record), key });
    },
  });
}

function listApiKeys(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: { next_token?: string; limit: number } }>('/:customer_id/api-keys', {
    config: { access: { permission: 'apikey.write' } },
    schema: {
      operationId: 'listApiKeys',
      summary: 'API keys of the customer that are not revoked, oldest first, paginated',
      description: 'The keys that are not revoked (expired ones included), without the keys themselves; up to limit per page, links.next continues the list.',
      tags: ['api keys'],
      params: customerParams,
      querystring: { type: 'object', properties: { next_token: { type: 'string' }, limit: limitParameter } },
      response: { 200: listOf(apiKeySchema, 'List of API keys'), ...errorResponses },
    },
    handler: async (request) => {
      const { page, next } = await createdIdPage(API_KEY_LIST, request.params.customer_id, request.query, (after, limit) =>
        ctx.store.apiKeys.page(request.params.customer_id, after, limit),
      );
      return listBody(page.map(toApiKey), 'API keys of the customer', next);
    },
  });
}

function revokeApiKey(app: FastifyInstance, ctx: ServerContext): void {
  app.delete<{ Params: { customer_id: string; api_key_id: string } }>('/:customer_id/api-keys/:api_key_id', {
    config: { access: { permission: 'apikey.write' } },
    schema: {
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key: refused from the next request on',
      description: 'The key is refused (401) from the next request on, on every instance. A revoked key is no longer listed; revoking it again answers 404.',
      tags: ['api keys'],
      params: {
        type: 'object',
        properties: { customer_id: { type: 'string' }, api_key_id: { type: 'string' } },
        required: ['customer_id', 'api_key_id'],
      },
      response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses },
      refusals: { 404: 'No key with this id in the customer, or it was revoked already.' },
    },
    handler: async (request, reply) => {
      const { customer_id, api_key_id } = request.params;
      const audit = (key: ApiKeyRecord) => auditEntry(ctx, request, 'apikey.revoked', { type: 'api_key', id: key.id }, { name: key.name });
      if ((await ctx.store.apiKeys.revoke(customer_id, api_key_id, ctx.clock(), audit)) === 'missing') {
        throw notFound(`API key "${api_key_id}" does not exist or was revoked already.`);
      }
      return reply.code(204).send();
    },
  });
}
