import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ROLES, permissionsOf, sameRoles } from '../../domain/permissions.js';
import type { UserChanges, UserRecord, UserUpdate } from '../../store/ports/index.js';
import { principalOf } from '../access.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { createdIdPage, type CreatedIdList } from '../created-id-pages.js';
import { conflict, notFound } from '../errors.js';
import { customerParams, errorResponses, limitParameter, listBody, listOf } from '../schemas.js';
import { checkHandOut } from '../user-admin.js';

const USER_LIST: CreatedIdList = { segment: 'users', noun: 'user' };

/** The 404 of a user id that names none, in the OpenAPI document. */
export const NO_USER = 'No user with this id in the customer.';

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

export const userParams = {
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

const nameSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** The audit details of a change: the fields whose value changed, and the roles before and after when they did. */
function changeDetails({ before, after }: UserUpdate): Record<string, unknown> {
  const fields = ['first_name', 'last_name', 'language'] as const;
  const changed: string[] = fields.filter((field) => before[field] !== after[field]);
  if (sameRoles(before.roles, after.roles)) return { changed };
  return { changed: [...changed, 'roles'], roles: after.roles, previous_roles: before.roles };
}

/** The 409 of a change that would leave the customer without an administrator. */
const lastAdministrator = (customerId: string, userId: string) =>
  conflict(`User "${userId}" is the last administrator of customer "${customerId}": make another user an administrator first.`);

/** The customer's user, or 404. */
export async function userOf(ctx: ServerContext, customerId: string, userId: string): Promise<UserRecord> {
  const user = await ctx.store.users.byId(userId);
  if (!user || user.customer_id !== customerId) throw notFound(`User "${userId}" does not exist.`);
  return user;
}

/** Users (docs/users.md); invitations and password resets are in user-passwords.ts. */
export function registerUserRoutes(app: FastifyInstance, ctx: ServerContext): void {
  getCurrentUser(app, ctx);
  createUser(app, ctx);
  listUsers(app, ctx);
  getUser(app, ctx);
  updateUser(app, ctx);
  deleteUser(app, ctx);
}

function getCurrentUser(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string } }>('/:customer_id/me', {
    config: { access: 'authenticated' },
    schema: {
      operationId: 'getCurrentUser',
      summary: 'The calling user',
      description: 'The user the IdToken belongs to, with their roles; any user of the customer may call it.',
      tags: ['users'],
      params: customerParams,
      response: { 200: userSchema, ...errorResponses },
      refusals: { 403: 'The IdToken\'s user belongs to another customer.' },
    },
    // With an API key: its creator, with the permissions the key acts with.
    handler: async (request) => ({ ...toApiUser(request.principal!.user), permissions: request.principal!.permissions }),
  });
}

function createUser(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: NewUserBody }>('/:customer_id/users', {
    config: { access: { permission: 'user.write' } },
    schema: {
      operationId: 'createUser',
      summary: 'Create a user (no password: invite them to set one)',
      description:
        'The user has one role and no password: create an invitation next, with which they set one. Answers 200, as the spec says. The caller must hold every permission of the role (no one hands out more than it holds), and only an administrator signed in with an IdToken creates an ADMIN_ROLE user.',
      tags: ['users'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          first_name: nameSchema,
          last_name: nameSchema,
          role: { type: 'string', enum: [...ROLES] },
          email: { type: 'string', format: 'email', maxLength: 320 },
        },
        required: ['first_name', 'last_name', 'role', 'email'],
        additionalProperties: false,
      },
      response: { 200: userSchema, ...errorResponses },
      refusals: {
        403: "The caller lacks user.write, or a permission of the role (details names it), or is an API key creating an ADMIN_ROLE user, or the IdToken's user belongs to another customer.",
        409: 'A user with this e-mail address already exists.',
      },
    },
    handler: async (request) => {
      const { first_name, last_name, role, email } = request.body;
      checkHandOut(principalOf(request), [role], `create a user with the role ${role}`);
      const id = randomUUID();
      const created = await ctx.store.users.create(
        { id, customer_id: request.params.customer_id, email: email.trim(), first_name, last_name, roles: [role], created: ctx.clock() },
        auditEntry(ctx, request, 'user.created', { type: 'user', id }, { email: email.trim(), roles: [role] }),
      );
      if (!created) throw conflict(`A user with the e-mail address "${email}" already exists.`);
      return toApiUser((await ctx.store.users.byId(id))!);
    },
  });
}

function listUsers(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: { next_token?: string; limit: number } }>('/:customer_id/users', {
    config: { access: { permission: 'user.read' } },
    schema: {
      operationId: 'listUsers',
      summary: 'Users of the customer, oldest first, paginated',
      description: 'Up to limit users per page; links.next continues the list.',
      tags: ['users'],
      params: customerParams,
      querystring: {
        type: 'object',
        properties: { next_token: { type: 'string' }, limit: limitParameter },
      },
      response: { 200: listOf(userSchema, 'List of users'), ...errorResponses },
    },
    handler: async (request) => {
      const { page, next } = await createdIdPage(USER_LIST, request.params.customer_id, request.query, (after, limit) =>
        ctx.store.users.page(request.params.customer_id, after, limit),
      );
      return listBody(page.map(toApiUser), 'Users of the customer', next);
    },
  });
}

function getUser(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string; user_id: string } }>('/:customer_id/users/:user_id', {
    config: { access: { permission: 'user.read', self: 'user_id' } },
    schema: {
      operationId: 'getUser',
      summary: 'One user',
      description: 'Needs user.read, except for the caller\'s own user.',
      tags: ['users'],
      params: userParams,
      response: { 200: userSchema, ...errorResponses },
      refusals: { 404: NO_USER },
    },
    handler: async (request) => toApiUser(await userOf(ctx, request.params.customer_id, request.params.user_id)),
  });
}

function updateUser(app: FastifyInstance, ctx: ServerContext): void {
  app.patch<{ Params: { customer_id: string; user_id: string }; Body: UserChanges }>('/:customer_id/users/:user_id', {
    config: { access: { permission: 'user.write' } },
    schema: {
      operationId: 'updateUser',
      summary: "Change a user's roles, names or language",
      description:
        "Send any of roles, first_name, last_name, language. A change of roles needs every permission of the user's roles before and after (no one hands out more than it holds); an API key never changes the roles of an administrator or makes one. The user's IdTokens issued before a change of roles are refused (401) from the next request on.",
      tags: ['users'],
      params: userParams,
      body: {
        type: 'object',
        properties: {
          roles: { type: 'array', items: { type: 'string', enum: [...ROLES] }, minItems: 1, uniqueItems: true },
          first_name: nameSchema,
          last_name: nameSchema,
          language: { type: 'string', minLength: 1, maxLength: 35 },
        },
        minProperties: 1,
        additionalProperties: false,
      },
      response: { 200: userSchema, ...errorResponses },
      refusals: {
        403: "The caller lacks user.write, or a permission of the roles involved (details names it), or is an API key and ADMIN_ROLE is involved, or the IdToken's user belongs to another customer.",
        404: NO_USER,
        409: 'The change would leave the customer without an administrator (ADMIN_ROLE).',
      },
    },
    handler: async (request) => {
      const { customer_id, user_id } = request.params;
      const changes: UserChanges = { ...request.body };
      const before = await userOf(ctx, customer_id, user_id);
      const roles = changes.roles && ROLES.filter((role) => changes.roles!.includes(role));
      if (roles && !sameRoles(before.roles, roles)) checkHandOut(principalOf(request), [...before.roles, ...roles], `change the roles of user "${user_id}"`);
      // Whoever may not hand out a user's roles may not change that user at all (an API key an administrator).
      else checkHandOut(principalOf(request), before.roles, `change user "${user_id}"`);
      if (roles) changes.roles = roles;
      const outcome = await ctx.store.users.update(customer_id, user_id, changes, ctx.clock(), (update) =>
        auditEntry(ctx, request, 'user.updated', { type: 'user', id: user_id }, changeDetails(update)),
      );
      if (outcome === 'missing') throw notFound(`User "${user_id}" does not exist.`);
      if (outcome === 'last-admin') throw lastAdministrator(customer_id, user_id);
      return toApiUser(outcome);
    },
  });
}

function deleteUser(app: FastifyInstance, ctx: ServerContext): void {
  app.delete<{ Params: { customer_id: string; user_id: string } }>('/:customer_id/users/:user_id', {
    config: { access: { permission: 'user.write' } },
    schema: {
      operationId: 'deleteUser',
      summary: 'Delete a user; the last administrator of a customer cannot be deleted',
      description: 'The user\'s IdTokens stop working at once.',
      tags: ['users'],
      params: userParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      refusals: { 404: NO_USER, 409: 'The user is the last administrator of the customer.' },
    },
    handler: async (request, reply) => {
      const { customer_id, user_id } = request.params;
      checkHandOut(principalOf(request), (await userOf(ctx, customer_id, user_id)).roles, `delete user "${user_id}"`);
      const outcome = await ctx.store.users.delete(customer_id, user_id, auditEntry(ctx, request, 'user.deleted', { type: 'user', id: user_id }));
      if (outcome === 'missing') throw notFound(`User "${user_id}" does not exist.`);
      if (outcome === 'last-admin') throw lastAdministrator(customer_id, user_id);
      return reply.code(204).send();
    },
  });
}
