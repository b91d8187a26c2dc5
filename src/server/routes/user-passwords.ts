import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InvitationKind, UserRecord } from '../../store/ports/index.js';
import { principalOf } from '../access.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { checkHandOut, checkSignedInAdmin } from '../user-admin.js';
import { hashInvitationToken, newInvitationToken } from './auth.js';
import { NO_USER, userOf, userParams } from './users.js';

const INVITATION_LIFETIME_MS = 24 * 3600 * 1000;

type Params = { customer_id: string; user_id: string };

const tokenResponse = {
  201: {
    type: 'object',
    properties: {
      invitation_token: { type: 'string' },
      expires_at: { type: 'integer', description: 'Milliseconds since the epoch.' },
    },
    required: ['invitation_token', 'expires_at'],
  },
  ...errorResponses,
} as const;

/** Issues a token of the kind for the user and answers 201 with it (never cached: it sets a password). */
async function issue(ctx: ServerContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, user: UserRecord, kind: InvitationKind) {
  const { customer_id } = request.params;
  const token = newInvitationToken();
  const now = ctx.clock();
  const expiresAt = now + INVITATION_LIFETIME_MS;
  const action = kind === 'invitation' ? 'user.invited' : 'user.password_reset';
  const outcome = await ctx.store.users.issueInvitation(
    { tokenHash: hashInvitationToken(token), userId: user.id, customerId: customer_id, kind, created: now, expiresAt },
    auditEntry(ctx, request, action, { type: 'user', id: user.id }, { email: user.email, expires_at: expiresAt }),
  );
  if (outcome === 'missing') throw notFound(`User "${user.id}" does not exist.`);
  if (outcome === 'has-password') {
    throw conflict(
      `User "${user.id}" has a password already: an invitation is for a user without one; an administrator resets it with POST /${customer_id}/users/${user.id}/password-reset.`,
    );
  }
  if (outcome === 'no-password') {
    throw conflict(`User "${user.id}" has no password to reset: invite them with POST /${customer_id}/users/${user.id}/invitation.`);
  }
  return reply.code(201).header('cache-control', 'no-store').send({ invitation_token: token, expires_at: expiresAt });
}

/**
 * The single-use tokens with which a user sets a password (docs/users.md "Invitations and
 * password resets"): an invitation for a user without a password, a reset for one with a
 * password. Issuing one voids the user's earlier ones; POST /auth/accept-invitation redeems both.
 */
export function registerUserPasswordRoutes(app: FastifyInstance, ctx: ServerContext): void {
  createInvitation(app, ctx);
  resetPassword(app, ctx);
}

function createInvitation(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: Params }>('/:customer_id/users/:user_id/invitation', {
    config: { access: { permission: 'user.write' } },
    schema: {
      operationId: 'createInvitation',
      summary: 'Create a single-use invitation (24 h) with which a user without a password sets one',
      description:
        "For a user without a password: hand the token to them; they set their password with it at POST /auth/accept-invitation. It voids the user's earlier invitations. The caller must hold every permission of the user's roles; an API key never invites an administrator.",
      tags: ['users'],
      params: userParams,
      response: tokenResponse,
      refusals: {
        403: "The caller lacks user.write, or a permission of the user's roles (details names it), or is an API key and the user is an administrator, or the IdToken's user belongs to another customer.",
        404: NO_USER,
        409: 'The user has a password already: reset it with POST /{customer_id}/users/{user_id}/password-reset.',
      },
    },
    handler: async (request, reply) => {
      const user = await userOf(ctx, request.params.customer_id, request.params.user_id);
      checkHandOut(principalOf(request), user.roles, `invite user "${user.id}"`);
      return issue(ctx, request, reply, user, 'invitation');
    },
  });
}

function resetPassword(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: Params }>('/:customer_id/users/:user_id/password-reset', {
    config: { access: { permission: 'user.write' } },
    schema: {
      operationId: 'resetPassword',
      summary: "Create a single-use token (24 h) with which a user who has a password sets a new one",
      description:
        "For a user who has a password: the token works like an invitation at POST /auth/accept-invitation, which sets the new password and makes every IdToken the user had fail (401). The old password works until then. It voids the user's earlier tokens. Only an administrator signed in with an IdToken may call it, never an API key; it is audited (user.password_reset).",
      tags: ['users'],
      params: userParams,
      response: tokenResponse,
      refusals: {
        403: "The caller is an API key, or not an administrator (ADMIN_ROLE), or the IdToken's user belongs to another customer.",
        404: NO_USER,
        409: 'The user has no password yet: invite them with POST /{customer_id}/users/{user_id}/invitation.',
      },
    },
    handler: async (request, reply) => {
      checkSignedInAdmin(principalOf(request), 'reset a password');
      const user = await userOf(ctx, request.params.customer_id, request.params.user_id);
      return issue(ctx, request, reply, user, 'password-reset');
    },
  });
}
