import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { decodePageToken, encodePageToken, isCreatedIdKey } from '../../domain/page-token.js';
import { ROLES, permissionsOf } from '../../domain/permissions.js';
import type { UserRecord } from '../../store/ports.js';
import { hashInvitationToken, newInvitationToken } from './auth.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { customerParams, errorResponses, limitParameter, listBody, listOf } from '../schemas.js';

const INVITATION_LIFETIME_MS = 24 * 3600 * 1000;

const consentSchema = {
  type: ['object', 'null'],
  properties: { version: { type: 'string' }, timestamp: { type: 'integer' } },
} as const;

export const userSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    email: { type: 'string' },
    created: { type: 'integer' },
    last_updated: { type: 'integer' },
    language: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    permissions: { type: 'array', items: { type: 'string' } },
    consent_general_terms: consentSchema,
    consent_privacy_policy: consentSchema,
  },
  required: ['id', 'email', 'created', 'last_updated', 'roles'],
} as const;

const userParams = {
  type: 'object',
  properties: { customer_id: { type: 'string' }, user_id: { type: 'string' } },
  required: ['customer_id', 'user_id'],
} as const;

/** The user as the API shows it: no password hash, permissions derived from the roles. */
export function toApiUser(user: UserRecord) {
  return {
    id: user.id,
    ...(user.first_name !== null ? { first_name: user.first_name } : {}),
    ...(user.last_name !== null ? { last_name: user.last_name } : {}),
    email: user.email,
    created: user.created,
    last_updated: user.last_updated,
    ...(user.language !== null ? { language: user.language } : {}),
    roles: user.roles,
    permissions: permissionsOf(user.roles),
    consent_general_terms: user.consent_general_terms,
    consent_privacy_policy: user.consent_privacy_policy,
  };
}

interface NewUserBody {
  first_name: string;
  last_name: string;
  role: string;
  email: string;
}

/** Users of spec 4.6 and the invitations of DESIGN.md. */
export function registerUserRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const userOf = async (customerId: string, userId: string) => {
    const user = await ctx.store.users.byId(userId);
    if (!user || user.customer_id !== customerId) throw notFound(`User "${userId}" does not exist.`);
    return user;
  };

  app.get<{ Params: { customer_id: string } }>('/:customer_id/me', {
    config: { access: 'authenticated' },
    schema: {
      summary: 'The calling user',
      tags: ['users'],
      params: customerParams,
      response: { 200: userSchema, ...errorResponses },
    },
    // With an API key: its creator, with the permissions the key acts with.
    handler: async (request) => ({ ...toApiUser(request.principal!.user), permissions: request.principal!.permissions }),
  });

  app.post<{ Params: { customer_id: string }; Body: NewUserBody }>('/:customer_id/users', {
    config: { access: { permission: 'user.write' } },
    schema: {
      summary: 'Create a user (no password: invite them to set one)',
      tags: ['users'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          first_name: { type: 'string', minLength: 1, maxLength: 200 },
          last_name: { type: 'string', minLength: 1, maxLength: 200 },
          role: { type: 'string', enum: [...ROLES] },
          email: { type: 'string', format: 'email', maxLength: 320 },
        },
        required: ['first_name', 'last_name', 'role', 'email'],
        additionalProperties: false,
      },
      response: { 200: userSchema, ...errorResponses },
    },
    handler: async (request) => {
      const { first_name, last_name, role, email } = request.body;
      const id = randomUUID();
      const created = await ctx.store.users.create(
        { id, customer_id: request.params.customer_id, email: email.trim(), first_name, last_name, roles: [role], created: ctx.clock() },
        auditEntry(ctx, request, 'user.created', { type: 'user', id }, { email: email.trim(), roles: [role] }),
      );
      if (!created) throw conflict(`A user with the e-mail address "${email}" already exists.`);
      return toApiUser((await ctx.store.users.byId(id))!);
    },
  });

  app.get<{ Params: { customer_id: string }; Querystring: { next_token?: string; limit: number } }>('/:customer_id/users', {
    config: { access: { permission: 'user.read' } },
    schema: {
      summary: 'Users of the customer, oldest first, paginated',
      tags: ['users'],
      params: customerParams,
      querystring: {
        type: 'object',
        properties: { next_token: { type: 'string' }, limit: limitParameter },
      },
      response: { 200: listOf(userSchema, 'List of users'), ...errorResponses },
    },
    handler: async (request) => {
      const customerId = request.params.customer_id;
      const { next_token, limit } = request.query;
      let after = null;
      if (next_token !== undefined) {
        const token = decodePageToken(next_token, 'users', customerId, isCreatedIdKey);
        if (!token) throw badRequest('Query parameter "next_token" is not a token of this user list.');
        after = token.after;
      }
      const users = await ctx.store.users.page(customerId, after, limit + 1);
      const page = users.slice(0, limit);
      const last = page[page.length - 1];
      const next =
        users.length > limit && last
          ? `/${encodeURIComponent(customerId)}/users?next_token=${encodePageToken({
              kind: 'users',
              customer: customerId,
              after: { created: last.created, id: last.id },
            })}&limit=${limit}`
          : undefined;
      return listBody(page.map(toApiUser), 'Users of the customer', next);
    },
  });

  app.get<{ Params: { customer_id: string; user_id: string } }>('/:customer_id/users/:user_id', {
    config: { access: { permission: 'user.read', self: 'user_id' } },
    schema: {
      summary: 'One user',
      tags: ['users'],
      params: userParams,
      response: { 200: userSchema, ...errorResponses },
    },
    handler: async (request) => toApiUser(await userOf(request.params.customer_id, request.params.user_id)),
  });

  app.delete<{ Params: { customer_id: string; user_id: string } }>('/:customer_id/users/:user_id', {
    config: { access: { permission: 'user.write' } },
    schema: {
      summary: 'Delete a user; the last administrator of a customer cannot be deleted',
      tags: ['users'],
      params: userParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
    },
    handler: async (request, reply) => {
      const { customer_id, user_id } = request.params;
      const outcome = await ctx.store.users.delete(customer_id, user_id, auditEntry(ctx, request, 'user.deleted', { type: 'user', id: user_id }));
      if (outcome === 'missing') throw notFound(`User "${user_id}" does not exist.`);
      if (outcome === 'last-admin') {
        throw conflict(`User "${user_id}" is the last administrator of customer "${customer_id}": make another user an administrator first.`);
      }
      return reply.code(204).send();
    },
  });

  app.post<{ Params: { customer_id: string; user_id: string } }>('/:customer_id/users/:user_id/invitation', {
    config: { access: { permission: 'user.write' } },
    schema: {
      summary: 'Create a single-use invitation (24 h) with which the user sets a password',
      tags: ['users'],
      params: userParams,
      response: {
        201: {
          type: 'object',
          properties: {
            invitation_token: { type: 'string' },
            expires_at: { type: 'integer', description: 'Milliseconds since the epoch.' },
          },
          required: ['invitation_token', 'expires_at'],
        },
        ...errorResponses,
      },
    },
    handler: async (request, reply) => {
      const user = await userOf(request.params.customer_id, request.params.user_id);
      const token = newInvitationToken();
      const now = ctx.clock();
      const expiresAt = now + INVITATION_LIFETIME_MS;
      await ctx.store.users.createInvitation(
        hashInvitationToken(token),
        user.id,
        now,
        expiresAt,
        auditEntry(ctx, request, 'user.invited', { type: 'user', id: user.id }, { email: user.email, expires_at: expiresAt }),
      );
      return reply.code(201).send({ invitation_token: token, expires_at: expiresAt });
    },
  });
}
