import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ID_TOKEN_LIFETIME_SECONDS } from '../../auth/idtoken.js';
import { MIN_PASSWORD_LENGTH, dummyHash, hashPassword, isWeakerThan, verifyPassword } from '../../auth/passwords.js';
import type { AuditAction } from '../../domain/audit.js';
import { LOGIN_LOCKOUT, lockedForMs, lockoutKey, retryAfterSeconds } from '../../domain/lockout.js';
import { RATE_LIMITS } from '../../domain/rate-limits.js';
import type { UserRecord } from '../../store/ports/index.js';
import { auditEntryBy } from '../audit.js';
import type { ServerContext } from '../context.js';
import { tooManyRequests, unauthorized } from '../errors.js';
import { errorResponses } from '../schemas.js';

const loginResponse = {
  type: 'object',
  properties: {
    id_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'Seconds the token stays valid.' },
    customer_id: { type: 'string' },
  },
  required: ['id_token', 'token_type', 'expires_in', 'customer_id'],
} as const;

/**
 * A new invitation token: 256 random bits, base64url. Drawn again when it begins with "-":
 * `scanhub login --invitation -x...` would read such a token as an option (1 in 64 would be
 * unusable as printed); the redraw costs 0.02 bits.
 */
export function newInvitationToken(): string {
  for (;;) {
    const token = randomBytes(32).toString('base64url');
    if (!token.startsWith('-')) return token;
  }
}

/** SHA-256 of an invitation token: the store keeps only this, never the token. */
export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** An entry of the user's own action (these routes have no guard): actor and target the user, in the user's customer. */
function userEntry(ctx: ServerContext, request: FastifyRequest, user: UserRecord, action: AuditAction, details?: Record<string, unknown>) {
  return auditEntryBy(ctx, request, { type: 'user', id: user.id, email: user.email }, user.customer_id, action, { type: 'user', id: user.id }, details);
}

/** Answers with a new IdToken of the user (never cached). */
async function issue(ctx: ServerContext, reply: FastifyReply, user: UserRecord) {
  return reply.header('cache-control', 'no-store').send({
    id_token: await ctx.idTokens.sign({
      sub: user.id,
      email: user.email,
      customer_id: user.customer_id,
      roles: user.roles,
      session_version: user.session_version,
    }),
    token_type: 'Bearer' as const,
    expires_in: ID_TOKEN_LIFETIME_SECONDS,
    customer_id: user.customer_id,
  });
}

/** `POST /auth/login`, `POST /auth/accept-invitation`, `GET /.well-known/jwks.json`. */
export function registerAuthRoutes(app: FastifyInstance, ctx: ServerContext): void {
  login(app, ctx);
  acceptInvitation(app, ctx);
  getJwks(app, ctx);
}

function login(app: FastifyInstance, ctx: ServerContext): void {
  // Verified against when the e-mail is unknown, so that it costs what a known one does.
  const unknownUserHash = dummyHash(ctx.config.passwordCost);

  app.post<{ Body: { email: string; password: string } }>('/auth/login', {
    config: { rateLimitGroup: 'auth' },
    schema: {
      operationId: 'login',
      summary: 'Trade an e-mail address and password for an IdToken',
      description:
        "Send the id_token in the Authorization header of every customer-scoped call, and customer_id in its path; it is valid expires_in seconds, or until the user's password or roles change (then 401). Its aud is the deployment's public URL.",
      tags: ['auth'],
      body: {
        type: 'object',
        properties: { email: { type: 'string', minLength: 1 }, password: { type: 'string', minLength: 1 } },
        required: ['email', 'password'],
        additionalProperties: false,
      },
      response: { 200: loginResponse, ...errorResponses },
      refusals: {
        401: 'The e-mail address or password is wrong.',
        429: `${LOGIN_LOCKOUT.refusals} refused log-ins for this user (whatever the spelling of the address) or this unknown address within ${LOGIN_LOCKOUT.windowMs / 60_000} minutes, or more calls to /auth/* a minute from this address than serve --auth-rate-limit allows (default ${RATE_LIMITS.auth}); Retry-After says when to try again.`,
      },
    },
    handler: async (request, reply) => {
      const email = request.body.email.trim();
      const now = ctx.clock();
      const locked = (refusals: number[]) => {
        const lockedMs = lockedForMs(refusals, now);
        if (lockedMs <= 0) return undefined;
        const seconds = retryAfterSeconds(lockedMs);
        return tooManyRequests(
          `${LOGIN_LOCKOUT.refusals} refused log-ins for ${JSON.stringify(email)} within ${LOGIN_LOCKOUT.windowMs / 60_000} minutes: retry in ${seconds} seconds.`,
          seconds,
        );
      };
      const user = await ctx.store.users.byEmail(email);
      // Counted per user, whatever the spelling that found it; an unknown address is counted and
      // locked alike, so a 429 tells nothing about who has an account.
      const key = lockoutKey(user ? { userId: user.id } : { email });
      const refusals = await ctx.store.loginFailures.since(key, now - LOGIN_LOCKOUT.windowMs);
      // Not verified, not counted: the lock ends when the window lets one attempt through.
      const refusal = locked(refusals);
      if (refusal) throw refusal;
      const matches = await verifyPassword(request.body.password, user?.password_hash ?? unknownUserHash);
      if (!user || !user.password_hash || !matches) {
        const until = (refusals[0] ?? now) + LOGIN_LOCKOUT.windowMs;
        // A known address: the refusal (and the lock it starts) goes in its customer's audit log. An
        // unknown address belongs to no customer: only the server log names it (docs/audit.md).
        // The store counts the refusals in the transaction that records this one, so among
        // concurrent refusals exactly the tenth starts the lock and writes auth.locked_out.
        const count = await ctx.store.loginFailures.record(
          key,
          now,
          now - LOGIN_LOCKOUT.windowMs,
          user ? [userEntry(ctx, request, user, 'auth.login_refused')] : [],
          user ? { refusals: LOGIN_LOCKOUT.refusals, entry: userEntry(ctx, request, user, 'auth.locked_out', { refusals: LOGIN_LOCKOUT.refusals, until }) } : undefined,
        );
        if (count === LOGIN_LOCKOUT.refusals) {
          request.log.warn({ email, ...(user ? { user: user.id } : {}), until }, 'log-in locked: too many refused log-ins for this e-mail address');
        }
        throw unauthorized('The e-mail address or password is wrong.');
      }
      // Refusals that raced this attempt may have locked the address meanwhile: the right password
      // is refused while locked, as it would be a moment later.
      const raced = locked(await ctx.store.loginFailures.since(key, now - LOGIN_LOCKOUT.windowMs));
      if (raced) throw raced;
      // A hash of a lower cost than new ones get is replaced now that the password is at hand
      // (the same password: its tokens stay valid).
      if (isWeakerThan(user.password_hash, ctx.config.passwordCost)) {
        await ctx.store.users.upgradePasswordHash(user.id, user.password_hash, await hashPassword(request.body.password, ctx.config.passwordCost));
      }
      await ctx.store.audit.append(userEntry(ctx, request, user, 'auth.login'));
      return issue(ctx, reply, user);
    },
  });
}

function acceptInvitation(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Body: { invitation_token: string; password: string } }>('/auth/accept-invitation', {
    config: { rateLimitGroup: 'auth' },
    schema: {
      operationId: 'acceptInvitation',
      summary: 'Set a password with an invitation token; answers like a login',
      description:
        "Redeems the token of POST /{customer_id}/users/{user_id}/invitation or /password-reset: sets the user's password and logs them in. Each token works once, within 24 hours, and only while it is the user's newest; redeeming it voids the others, and every IdToken the user had before fails (401) from then on.",
      tags: ['auth'],
      body: {
        type: 'object',
        properties: {
          invitation_token: { type: 'string', minLength: 1 },
          password: { type: 'string', minLength: MIN_PASSWORD_LENGTH },
        },
        required: ['invitation_token', 'password'],
        additionalProperties: false,
      },
      response: { 200: loginResponse, ...errorResponses },
      refusals: {
        401: 'The invitation token is unknown, already used or expired.',
        429: `More calls to /auth/* a minute from this address than serve --auth-rate-limit allows (default ${RATE_LIMITS.auth}); Retry-After says when to try again.`,
      },
    },
    handler: async (request, reply) => {
      const passwordHash = await hashPassword(request.body.password, ctx.config.passwordCost);
      const userId = await ctx.store.users.redeemInvitation(hashInvitationToken(request.body.invitation_token), passwordHash, ctx.clock(), ({ user, kind }) =>
        userEntry(ctx, request, user, 'user.invitation_accepted', kind === 'password-reset' ? { password_reset: true } : undefined),
      );
      if (!userId) throw unauthorized('The invitation token is unknown, already used or expired: ask an administrator for a new invitation.');
      // Read after the redemption: the token carries the session version it raised.
      return issue(ctx, reply, (await ctx.store.users.byId(userId))!);
    },
  });
}

function getJwks(app: FastifyInstance, ctx: ServerContext): void {
  app.get('/.well-known/jwks.json', {
    schema: {
      operationId: 'getJwks',
      summary: 'Public keys that verify the IdTokens of this deployment',
      description:
        'A JSON Web Key Set, for services that verify IdTokens themselves (match the token\'s kid; check iss "scanhub" and aud, the deployment\'s public URL). After `scanhub operator rotate-signing-key` it lists the new key and the old ones until every token they signed has expired.',
      tags: ['auth'],
      response: {
        200: { type: 'object', properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } } },
      },
    },
    handler: async () => ctx.idTokens.jwks(),
  });
}
