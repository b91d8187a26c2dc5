import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { AuditActor } from '../domain/audit.js';
import { permissionsOf, type Permission } from '../domain/permissions.js';
import { hashApiKey, isWellFormedApiKey, looksLikeApiKey } from '../auth/api-keys.js';
import { StorageFull, StoreUnavailable, type ApiKeyRecord, type UserRecord } from '../store/ports/index.js';
import type { ServerContext } from './context.js';
import { HttpError, forbidden, unauthorized } from './errors.js';

/**
 * Who may call a route; every `/:customer_id/...` route must declare it, and the tenant and
 * permission checks below run before anything else of the route: `{ permission }` callers whose
 * roles grant it, `{ permission, self }` also the user whose id is the path parameter `self`,
 * `'authenticated'` any user of the customer. An API key acts as its creator with its permissions.
 */
export type Access = { permission: Permission; self?: string } | 'authenticated';

/** The authenticated caller, set on the request by the guard. */
export interface Principal {
  user: UserRecord;
  permissions: Permission[];
  /** Who the audit log names for this caller's changes. */
  actor: AuditActor;
  /** For a caller with an API key: when that key expires (null: never). A key it creates may not outlive it. */
  keyExpiresAt?: number | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

const TENANT_PREFIX = '/:customer_id';

/** The caller of a guarded route; throws if the route was not guarded (a programming error). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} has no access guard`);
  return request.principal;
}

/** Installs the guard: refuses to register a tenant route without `access`, checks every call. */
export function installAccessGuard(app: FastifyInstance, ctx: ServerContext): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const tenantRoute = route.url.startsWith(`${TENANT_PREFIX}/`) || route.url === TENANT_PREFIX;
    if (!tenantRoute || route.method === 'OPTIONS') return;
    const access = (route.config as { access?: Access } | undefined)?.access;
    if (!access) throw new Error(`route ${String(route.method)} ${route.url} declares no access`);
    const guard = async (request: FastifyRequest) => {
      request.principal = await authorize(ctx, request, access);
    };
    route.onRequest = [guard, ...toArray(route.onRequest)];
    // The OpenAPI document then says the call needs the IdToken (swagger reads the schema later).
    route.schema = { ...route.schema, security: [{ IdToken: [] }] };
  });
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * Whether the caller of a guarded request may still make its call (a response that lasts, such
 * as the live event stream, asks again now and then): undefined, or why not (the refusal's
 * details: a revoked key, a deleted user, an expired IdToken).
 */
export async function refusalNow(ctx: ServerContext, request: FastifyRequest): Promise<string | undefined> {
  const access = (request.routeOptions.config as { access?: Access }).access;
  if (!access) throw new Error(`route ${request.routeOptions.url} has no access guard`);
  try {
    await authorize(ctx, request, access);
    return undefined;
  } catch (error) {
    if (error instanceof HttpError) return error.details;
    throw error;
  }
}

/** Who is calling, checked against the path's customer and the route's access. */
async function authorize(ctx: ServerContext, request: FastifyRequest, access: Access): Promise<Principal> {
  const caller = await authenticate(ctx, request.headers.authorization);
  const params = request.params as Record<string, string>;
  if (caller.apiKey) return authorizeApiKey(params, access, caller.user, caller.apiKey);
  const { user } = caller;
  if (params.customer_id !== user.customer_id) {
    throw forbidden(`Your account belongs to customer "${user.customer_id}" and has no access to customer "${params.customer_id}".`);
  }
  const permissions = permissionsOf(user.roles);
  const actor: AuditActor = { type: 'user', id: user.id, email: user.email };
  if (access === 'authenticated') return { user, permissions, actor };
  if (permissions.includes(access.permission)) return { user, permissions, actor };
  if (access.self && params[access.self] === user.id) return { user, permissions, actor };
  throw forbidden(
    `Your role${user.roles.length === 1 ? '' : 's'} ${user.roles.join(', ') || '(none)'} lack${user.roles.length === 1 ? 's' : ''} the permission "${access.permission}" this call needs; ask an administrator.`,
  );
}

/**
 * An API key acts in its customer as its creator, with its permissions as far as the creator still
 * holds them (a demoted creator's keys lose what the creator lost).
 */
function authorizeApiKey(params: Record<string, string>, access: Access, user: UserRecord, key: ApiKeyRecord): Principal {
  if (params.customer_id !== key.customer_id) {
    throw forbidden(`This API key belongs to customer "${key.customer_id}" and has no access to customer "${params.customer_id}".`);
  }
  const held = permissionsOf(user.roles);
  const permissions = held.filter((p) => key.permissions.includes(p));
  const principal: Principal = { user, permissions, actor: { type: 'api_key', id: key.id }, keyExpiresAt: key.expires_at };
  if (access === 'authenticated' || permissions.includes(access.permission)) return principal;
  if (access.self && params[access.self] === user.id) return principal;
  const why = key.permissions.includes(access.permission) ? ': the user who created it no longer has it' : '; create a key with it';
  throw forbidden(`The API key "${key.name}" lacks the permission "${access.permission}" this call needs${why}.`);
}

/** The caller of an Authorization header: a user by IdToken, or an API key and the user who created it. */
export interface Caller {
  user: UserRecord;
  apiKey?: ApiKeyRecord;
}

/** A key's last_used is written when it is older than this: steady use costs one write a minute. */
export const LAST_USED_PRECISION_MS = 60_000;

/** The credential of an Authorization header, bare or `Bearer <credential>` (any case of Bearer); undefined when there is none. */
export function credentialOf(header: string | undefined): string | undefined {
  if (!header || header.trim() === '') return undefined;
  return header.replace(/^Bearer\s+/i, '').trim();
}

/** Who an Authorization header (IdToken or API key, bare or `Bearer <credential>`) belongs to. */
export async function authenticate(ctx: ServerContext, header: string | undefined): Promise<Caller> {
  const credential = credentialOf(header);
  if (credential === undefined) throw unauthorized('No authentication header found: send the IdToken in the Authorization header.');
  if (looksLikeApiKey(credential)) return authenticateApiKey(ctx, credential);
  let claims: Awaited<ReturnType<typeof ctx.idTokens.verify>>;
  try {
    claims = await ctx.idTokens.verify(credential);
  } catch (error) {
    // An unknown kid reads the keys from the store: its outage is a 503, not a bad token.
    if (error instanceof StoreUnavailable) throw error;
    throw unauthorized('The token in the Authorization header is invalid or expired: log in again for a new one.');
  }
  const user = await ctx.store.users.byId(claims.sub);
  if (!user) throw unauthorized('The user of this token no longer exists.');
  // A password set or a change of roles raised the version: every token issued before is void.
  if (user.session_version !== claims.session_version) {
    throw unauthorized("The token was issued before its user's password or roles changed: log in again for a new one.");
  }
  return { user };
}

/**
 * Looks the key up by its hash on every request (no cache: a revocation on any instance holds
 * from the next request on), refuses it as malformed, unknown, revoked, expired or orphaned, and
 * keeps last_used to the minute.
 */
async function authenticateApiKey(ctx: ServerContext, key: string): Promise<Caller> {
  if (!isWellFormedApiKey(key)) {
    throw unauthorized('The API key in the Authorization header is malformed: a key is "shk_" and 43 more characters, as POST /{customer_id}/api-keys made it.');
  }
  const found = await ctx.store.apiKeys.withCreator(hashApiKey(key));
  if (!found) throw unauthorized('The API key in the Authorization header is unknown: create one with `scanhub api-keys create`.');
  const { key: record, creator: user } = found;
  if (record.revoked !== null) {
    throw unauthorized(`The API key "${record.name}" was revoked at ${new Date(record.revoked).toISOString()}: create a new one.`);
  }
  const now = ctx.clock();
  if (record.expires_at !== null && record.expires_at <= now) {
    throw unauthorized(`The API key "${record.name}" expired at ${new Date(record.expires_at).toISOString()}: create a new one.`);
  }
  if (!user || user.customer_id !== record.customer_id) {
    throw unauthorized(`The user who created the API key "${record.name}" no longer exists: create a new key.`);
  }
  if (record.last_used === null || record.last_used <= now - LAST_USED_PRECISION_MS) {
    try {
      await ctx.store.apiKeys.touch(record.id, now, now - LAST_USED_PRECISION_MS);
    } catch (error) {
      // A full disk must not refuse reads: `last_used` stays older until a later call can write it.
      if (!(error instanceof StorageFull)) throw error;
      return { user, apiKey: record };
    }
    return { user, apiKey: { ...record, last_used: now } };
  }
  return { user, apiKey: record };
}
