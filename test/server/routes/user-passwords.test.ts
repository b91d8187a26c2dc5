import { describe, expect, it } from 'vitest';
import { call } from '../../helpers/http.js';
import { error, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { ADMIN_EMAIL, CUSTOMER } from '../../helpers/server.js';
import { USER_PASSWORD, startFoundation, type Actor, type Foundation } from '../../helpers/world.js';
import { asAdmin, asUser, bearer, lacks } from '../../helpers/users.js';

// Invitations and password resets (docs/users.md "Invitations and password resets"): an
// invitation is for a user without a password, a reset (signed-in administrators only) for one
// with a password; issuing either voids the user's earlier tokens, redeeming one voids the rest,
// and a password set makes every IdToken issued before it fail.

const BAD_INVITATION = error('Unauthorized', 'The invitation token is unknown, already used or expired: ask an administrator for a new invitation.');
const STALE_TOKEN = error('Unauthorized', "The token was issued before its user's password or roles changed: log in again for a new one.");
const NEW_PASSWORD = 'a-brand-new-password';

const post = (w: Foundation, path: string, json?: object, token = w.admin.token) => call(w.url, 'POST', path, { token, json });
const invite = async (w: Foundation, userId: string) => ((await post(w, `/${CUSTOMER}/users/${userId}/invitation`)).body as { invitation_token: string }).invitation_token;
const accept = (w: Foundation, token: string, password = NEW_PASSWORD) => call(w.url, 'POST', '/auth/accept-invitation', { json: { invitation_token: token, password } });
const login = (w: Foundation, email: string, password: string) => call(w.url, 'POST', '/auth/login', { json: { email, password } });
const me = (w: Foundation, token: string) => call(w.url, 'GET', `/${CUSTOMER}/me`, { token }).then(({ status, body }) => ({ status, body }));

describe('invitations void each other', () => {
  it('issuing a second invitation voids the first: the first is refused, the second works', async () => {
    const w = await startFoundation();
    try {
      const { id } = await w.newInvitee();
      const first = await invite(w, id);
      const second = await invite(w, id);
      expect((await accept(w, first)).body).toEqual(BAD_INVITATION);
      expect((await accept(w, second)).status).toBe(200);
    } finally {
      await w.close();
    }
  });

  it('after the newer one was accepted, the older one no longer sets the password', async () => {
    const w = await startFoundation();
    try {
      const { id, email } = await w.newInvitee();
      const older = await invite(w, id);
      const newer = await invite(w, id);
      expect((await accept(w, newer)).status).toBe(200);
      const replay = await accept(w, older, 'the-attackers-password');
      expect({ status: replay.status, body: replay.body }).toEqual({ status: 401, body: BAD_INVITATION });
      expect((await login(w, email, NEW_PASSWORD)).status).toBe(200);
      expect((await login(w, email, 'the-attackers-password')).status).toBe(401);
    } finally {
      await w.close();
    }
  });
});

const invitations: Scenario<Foundation>[] = [
  {
    name: 'a user who has a password: 409 pointing at password-reset',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}/invitation`,
    auth: asAdmin,
    status: 409,
    body: (w) =>
      error(
        'Conflict',
        `User "${w.user.id}" has a password already: an invitation is for a user without one; an administrator resets it with POST /${CUSTOMER}/users/${w.user.id}/password-reset.`,
      ),
  },
  {
    name: 'a user without a password: 201, never cached',
    method: 'POST',
    path: async (w) => `/${CUSTOMER}/users/${(await w.newInvitee()).id}/invitation`,
    auth: asAdmin,
    status: 201,
    check: (answer) => expect(answer.headers['cache-control']).toBe('no-store'),
  },
];

const resets: Scenario<Foundation>[] = [
  {
    name: 'an administrator resets a password: 201 with a token and its expiry, never cached',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}/password-reset`,
    auth: asAdmin,
    status: 201,
    body: { invitation_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expires_at: expect.any(Number) },
    check: (answer) => expect(answer.headers['cache-control']).toBe('no-store'),
  },
  {
    name: 'a user without a password: 409 pointing at the invitation',
    method: 'POST',
    path: async (w) => `/${CUSTOMER}/users/${(invitee = (await w.newInvitee()).id)}/password-reset`,
    auth: asAdmin,
    status: 409,
    body: () => error('Conflict', `User "${invitee}" has no password to reset: invite them with POST /${CUSTOMER}/users/${invitee}/invitation.`),
  },
  { name: 'an unknown user: 404', method: 'POST', path: `/${CUSTOMER}/users/nobody/password-reset`, auth: asAdmin, status: 404, body: error('Not Found', 'User "nobody" does not exist.') },
  { name: 'USER_ROLE: 403', method: 'POST', path: (w) => `/${CUSTOMER}/users/${w.user.id}/password-reset`, auth: asUser, status: 403, body: lacks('user.write') },
  {
    name: "the administrator's API key (every permission): 403",
    method: 'POST',
    path: async (w) => {
      key = (await w.t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: 'resetter' })).key;
      return `/${CUSTOMER}/users/${w.user.id}/password-reset`;
    },
    auth: () => bearer(key),
    status: 403,
    body: error('Forbidden', 'An API key cannot reset a password: only an administrator signed in with an IdToken can.'),
  },
];

let invitee = '';
let key = '';

let frozenAt = 0;
let invitePath = '';
const invitation: Scenario<Foundation>[] = [
  {
    name: 'a single-use token valid 24 h: 201 with expires_at in ms',
    method: 'POST',
    path: async (w) => {
      const { id } = await w.newInvitee();
      frozenAt = Date.now();
      w.clock.freeze(frozenAt);
      return `/${CUSTOMER}/users/${id}/invitation`;
    },
    auth: asAdmin,
    status: 201,
    body: () => ({ invitation_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expires_at: frozenAt + 24 * 3600_000 }),
    after: (w) => w.clock.reset(),
  },
  {
    name: 'each call makes a new token',
    method: 'POST',
    path: async (w) => (invitePath = `/${CUSTOMER}/users/${(await w.newInvitee()).id}/invitation`),
    auth: asAdmin,
    status: 201,
    check: async (answer, w) => {
      const second = await call(w.url, 'POST', invitePath, { token: w.admin.token });
      expect((second.body as { invitation_token: string }).invitation_token).not.toBe(
        (answer.body as { invitation_token: string }).invitation_token,
      );
    },
  },
  {
    name: 'an unknown user: 404',
    method: 'POST',
    path: `/${CUSTOMER}/users/nobody/invitation`,
    auth: asAdmin,
    status: 404,
    body: error('Not Found', 'User "nobody" does not exist.'),
  },
  {
    name: "another customer's user through one's own path: 404",
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.otherAdmin.id}/invitation`,
    auth: asAdmin,
    status: 404,
    body: (w) => error('Not Found', `User "${w.otherAdmin.id}" does not exist.`),
  },
  {
    name: 'USER_ROLE inviting themselves: 403',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}/invitation`,
    auth: asUser,
    status: 403,
    body: lacks('user.write'),
  },
];

scenarioTable('POST /{c}/users/{id}/invitation', startFoundation, invitation);
scenarioTable('POST /{c}/users/{id}/invitation: only for users without a password', startFoundation, invitations);
scenarioTable('POST /{c}/users/{id}/password-reset', startFoundation, resets);

describe('a password reset, end to end', () => {
  it('the old password and IdTokens work until the token is redeemed, then 401; the token works once; audited', async () => {
    const w = await startFoundation();
    try {
      const user: Actor = await w.newUser();
      const reset = (await post(w, `/${CUSTOMER}/users/${user.id}/password-reset`)).body as { invitation_token: string };
      // Until redeemed: nothing changed.
      expect((await login(w, user.email, USER_PASSWORD)).status).toBe(200);
      expect((await me(w, user.token)).status).toBe(200);

      const accepted = await accept(w, reset.invitation_token);
      expect([accepted.status, accepted.headers['cache-control']]).toEqual([200, 'no-store']);
      const fresh = (accepted.body as { id_token: string }).id_token;
      expect((await me(w, fresh)).status).toBe(200);
      expect(await me(w, user.token)).toEqual({ status: 401, body: STALE_TOKEN });
      expect((await login(w, user.email, USER_PASSWORD)).status).toBe(401);
      expect((await login(w, user.email, NEW_PASSWORD)).status).toBe(200);
      expect((await accept(w, reset.invitation_token, 'yet-another-password')).body).toEqual(BAD_INVITATION);

      const log = await w.t.admin.get<{ items: { action: string; actor: { id: string }; details?: object }[] }>(`/${CUSTOMER}/audit-log`);
      // Newest first: the acceptance and the reset, after the invitation that made the user.
      const mine = log.items.filter((entry) => ['user.password_reset', 'user.invitation_accepted'].includes(entry.action)).slice(0, 2);
      expect(mine.map(({ action, actor, details }) => ({ action, actor: actor.id, details }))).toEqual([
        { action: 'user.invitation_accepted', actor: user.id, details: { password_reset: true } },
        { action: 'user.password_reset', actor: w.admin.id, details: { email: user.email, expires_at: expect.any(Number) } },
      ]);
    } finally {
      await w.close();
    }
  });

  it("resetting the administrator's own password ends their older IdTokens too", async () => {
    const w = await startFoundation();
    try {
      const reset = (await post(w, `/${CUSTOMER}/users/${w.admin.id}/password-reset`)).body as { invitation_token: string };
      const fresh = (await accept(w, reset.invitation_token)).body as { id_token: string };
      expect(await me(w, w.admin.token)).toEqual({ status: 401, body: STALE_TOKEN });
      expect((await me(w, fresh.id_token)).body).toMatchObject({ email: ADMIN_EMAIL });
    } finally {
      await w.close();
    }
  });
});
