import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { AuditActor } from '../domain/audit.js';
import { permissionsOf, type Permission } from '../domain/permissions.js';
import type { UserRecord } from '../store/ports.js';
import type { ServerContext } from './context.js';
import { forbidden, unauthorized } from './errors.js';

/**
 * Who may call a route. Every `/:customer_id/...` route must declare it: the tenant check and
 * the permission check below then run before anything else of the route.
 * - `{ permission }`: callers whose roles grant it;
 * - `{ permission, self }`: also the caller whose user id is the path parameter `self`;
 * - `'authenticated'`: any user of the customer.
 */
export type Access = { permission: Permission; self?: string } | 'authenticated';

/** The authenticated caller, set on the request by the guard. */
export interface Principal {
  user: UserRecord;
  permissions: Permission[];
  /** Who the audit log names for this caller's changes. */
  actor: AuditActor;
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

/** Who is calling, checked against the path's customer and the route's access. */
async function authorize(ctx: ServerContext, request: FastifyRequest, access: Access): Promise<Principal> {
  const user = await authenticate(ctx, request.headers.authorization);
  const params = request.params as Record<string, string>;
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

/** The user an Authorization header (bare IdToken or `Bearer <token>`) belongs to. */
export async function authenticate(ctx: ServerContext, header: string | undefined): Promise<UserRecord> {
  if (!header || header.trim() === '') throw unauthorized('No authentication header found: send the IdToken in the Authorization header.');
  const token = header.replace(/^Bearer\s+/i, '').trim();
  let sub: string;
  try {
    ({ sub } = await ctx.idTokens.verify(token));
  } catch {
    throw unauthorized('The token in the Authorization header is invalid or expired: log in again for a new one.');
  }
  const user = await ctx.store.users.byId(sub);
  if (!user) throw unauthorized('The user of this token no longer exists.');
  return user;
}
