import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { call } from '../../helpers/http.js';
import { BAD_TOKEN, error, runScenario, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { OTHER_ADMIN_EMAIL, OTHER_CUSTOMER, USER_PASSWORD, startFoundation, type Foundation } from '../../helpers/world.js';

const WRONG_CREDENTIALS = error('Unauthorized', 'The e-mail address or password is wrong.');
const BAD_INVITATION = error(
  'Unauthorized',
  'The invitation token is unknown, already used or expired: ask an administrator for a new invitation.',
);
const NEW_PASSWORD = 'a-new-password-42';
const DAY = 24 * 3600_000;

/** The answer of a login, whatever the token. */
const loginAnswer = (customer: string) => ({
  token_type: 'Bearer',
  expires_in: 3600,
  customer_id: customer,
  id_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
});

/** A user of acme without a password and a fresh invitation for them. */
async function invited(w: Foundation): Promise<{ userId: string; email: string; token: string; expiresAt: number }> {
  const email = `invitee-${Math.random().toString(36).slice(2)}@example.com`;
  const user = await w.t.admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'In', last_name: 'Vitee', role: 'USER_ROLE', email });
  const invitation = await w.t.admin.post<{ invitation_token: string; expires_at: number }>(`/${CUSTOMER}/users/${user.id}/invitation`);
  return { userId: user.id, email, token: invitation.invitation_token, expiresAt: invitation.expires_at };
}

const login: Scenario<Foundation>[] = [
  {
    name: 'right e-mail and password: an IdToken of the customer, never cached',
    method: 'POST',
    path: '/auth/login',
    json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    status: 200,
    body: loginAnswer(CUSTOMER),
    check: (answer) => expect(answer.headers['cache-control']).toBe('no-store'),
  },
  {
    name: 'the e-mail address is compared case-insensitively',
    method: 'POST',
    path: '/auth/login',
    json: { email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD },
    status: 200,
    body: loginAnswer(CUSTOMER),
  },
  {
    name: "another customer's administrator gets a token of their customer",
    method: 'POST',
    path: '/auth/login',
    json: { email: OTHER_ADMIN_EMAIL, password: USER_PASSWORD },
    status: 200,
    body: loginAnswer(OTHER_CUSTOMER),
  },
  {
    name: 'wrong password: 401',
    method: 'POST',
    path: '/auth/login',
    json: { email: ADMIN_EMAIL, password: 'not-the-password' },
    status: 401,
    body: WRONG_CREDENTIALS,
  },
  {
    name: 'unknown e-mail: the same 401 as a wrong password',
    method: 'POST',
    path: '/auth/login',
    json: { email: 'nobody@example.com', password: ADMIN_PASSWORD },
    status: 401,
    body: WRONG_CREDENTIALS,
  },
  {
    name: 'a user who never accepted an invitation has no password: 401',
    method: 'POST',
    path: '/auth/login',
    json: async (w) => ({ email: (await invited(w)).email, password: '' + ADMIN_PASSWORD }),
    status: 401,
    body: WRONG_CREDENTIALS,
  },
  {
    name: 'e-mail missing: 400 naming it',
    method: 'POST',
    path: '/auth/login',
    json: { password: ADMIN_PASSWORD },
    status: 400,
    body: error('Bad Request', 'Missing body field "email".'),
  },
  {
    name: 'password missing: 400 naming it',
    method: 'POST',
    path: '/auth/login',
    json: { email: ADMIN_EMAIL },
    status: 400,
    body: error('Bad Request', 'Missing body field "password".'),
  },
  {
    name: 'password a number: 400, not coerced to a string',
    method: 'POST',
    path: '/auth/login',
    json: { email: ADMIN_EMAIL, password: 123456789012 },
    status: 400,
    body: error('Bad Request', 'Body field "password" must be string.'),
  },
  {
    name: 'e-mail empty: 400',
    method: 'POST',
    path: '/auth/login',
    json: { email: '', password: ADMIN_PASSWORD },
    status: 400,
    body: error('Bad Request', 'Body field "email" must NOT have fewer than 1 characters.'),
  },
  {
    name: 'unknown field: 400 naming it',
    method: 'POST',
    path: '/auth/login',
    json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, remember_me: true },
    status: 400,
    body: error('Bad Request', 'Unknown body field "remember_me": it is not part of this call.'),
  },
  {
    name: 'no body: 400',
    method: 'POST',
    path: '/auth/login',
    status: 400,
    body: error('Bad Request', 'The request body must be a JSON object.'),
  },
  {
    name: 'an array instead of an object: 400',
    method: 'POST',
    path: '/auth/login',
    json: [ADMIN_EMAIL, ADMIN_PASSWORD],
    status: 400,
    body: error('Bad Request', 'The request body must be a JSON object.'),
  },
];

const acceptInvitation: Scenario<Foundation>[] = [
  {
    name: 'a fresh invitation sets the password and answers like a login',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: async (w) => ({ invitation_token: (await invited(w)).token, password: NEW_PASSWORD }),
    status: 200,
    body: loginAnswer(CUSTOMER),
    check: async (answer, w) => {
      const token = (answer.body as { id_token: string }).id_token;
      const me = await call(w.url, 'GET', `/${CUSTOMER}/me`, { token });
      expect(me.status).toBe(200);
      // ... and the new password logs in.
      const again = await call(w.url, 'POST', '/auth/login', { json: { email: (me.body as { email: string }).email, password: NEW_PASSWORD } });
      expect(again.status).toBe(200);
    },
  },
  {
    name: 'a used invitation: 401',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: async (w) => {
      const { token } = await invited(w);
      await w.t.anonymous.post('/auth/accept-invitation', { invitation_token: token, password: NEW_PASSWORD });
      return { invitation_token: token, password: 'another-password-99' };
    },
    status: 401,
    body: BAD_INVITATION,
  },
  {
    name: 'an invitation 1 ms before its expiry still works',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: async (w) => {
      const now = Date.now();
      w.clock.freeze(now);
      const { token, expiresAt } = await invited(w);
      expect(expiresAt).toBe(now + DAY);
      w.clock.freeze(now + DAY - 1);
      return { invitation_token: token, password: NEW_PASSWORD };
    },
    status: 200,
    body: loginAnswer(CUSTOMER),
    after: (w) => w.clock.reset(),
  },
  {
    name: 'an expired invitation (24 h after it was made): 401',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: async (w) => {
      const now = Date.now();
      w.clock.freeze(now);
      const { token } = await invited(w);
      w.clock.freeze(now + DAY);
      return { invitation_token: token, password: NEW_PASSWORD };
    },
    status: 401,
    body: BAD_INVITATION,
    after: (w) => w.clock.reset(),
  },
  {
    name: 'an unknown token: 401',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: { invitation_token: 'bm90LWEtcmVhbC10b2tlbg', password: NEW_PASSWORD },
    status: 401,
    body: BAD_INVITATION,
  },
  {
    name: "a deleted user's invitation: 401",
    method: 'POST',
    path: '/auth/accept-invitation',
    json: async (w) => {
      const { token, userId } = await invited(w);
      await w.t.admin.delete(`/${CUSTOMER}/users/${userId}`);
      return { invitation_token: token, password: NEW_PASSWORD };
    },
    status: 401,
    body: BAD_INVITATION,
  },
  {
    name: 'a password of 11 characters: 400, and the invitation stays usable',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: async (w) => {
      const { token } = await invited(w);
      (w as Foundation & { pending?: string }).pending = token;
      return { invitation_token: token, password: '12345678901' };
    },
    status: 400,
    body: error('Bad Request', 'Body field "password" must NOT have fewer than 12 characters.'),
    check: async (_answer, w) => {
      const token = (w as Foundation & { pending?: string }).pending;
      const retry = await call(w.url, 'POST', '/auth/accept-invitation', { json: { invitation_token: token, password: '123456789012' } });
      expect(retry.status).toBe(200);
    },
  },
  {
    name: 'invitation_token missing: 400 naming it',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: { password: NEW_PASSWORD },
    status: 400,
    body: error('Bad Request', 'Missing body field "invitation_token".'),
  },
  {
    name: 'password missing: 400 naming it',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: { invitation_token: 'abc' },
    status: 400,
    body: error('Bad Request', 'Missing body field "password".'),
  },
  {
    name: 'password a number: 400',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: { invitation_token: 'abc', password: 1234567890123 },
    status: 400,
    body: error('Bad Request', 'Body field "password" must be string.'),
  },
  {
    name: 'unknown field: 400 naming it',
    method: 'POST',
    path: '/auth/accept-invitation',
    json: { invitation_token: 'abc', password: NEW_PASSWORD, email: 'x@example.com' },
    status: 400,
    body: error('Bad Request', 'Unknown body field "email": it is not part of this call.'),
  },
];

scenarioTable('POST /auth/login', startFoundation, login);
scenarioTable('POST /auth/accept-invitation', startFoundation, acceptInvitation);

describe('GET /.well-known/jwks.json', () => {
  it('publishes the public key that verifies the IdTokens, and only the public part', async () => {
    const w = await startFoundation();
    try {
      const answer = await runScenario(w, {
        name: 'jwks',
        method: 'GET',
        path: '/.well-known/jwks.json',
        status: 200,
        body: { keys: [{ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String), x: expect.any(String), y: expect.any(String) }] },
      });
      const jwks = createLocalJWKSet(answer.body as { keys: [] });
      const { payload, protectedHeader } = await jwtVerify(w.admin.token, jwks, { issuer: 'scanhub', algorithms: ['ES256'] });
      expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: (answer.body as { keys: { kid: string }[] }).keys[0]!.kid });
      expect(payload).toEqual({
        sub: w.admin.id,
        email: ADMIN_EMAIL,
        customer_id: CUSTOMER,
        roles: ['ADMIN_ROLE'],
        session_version: 0,
        iss: 'scanhub',
        aud: w.t.server.publicUrl.url,
        iat: expect.any(Number),
        exp: payload.iat! + 3600,
      });
    } finally {
      await w.close();
    }
  });

  it('a token with the same claims and kid but signed by another key: 401', async () => {
    const w = await startFoundation();
    try {
      const jwks = (await call(w.url, 'GET', '/.well-known/jwks.json')).body as { keys: { kid: string }[] };
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      expect((await exportJWK(privateKey)).d).toBeDefined();
      const now = Math.floor(Date.now() / 1000);
      const forged = await new SignJWT({ email: ADMIN_EMAIL, customer_id: CUSTOMER, roles: ['ADMIN_ROLE'] })
        .setProtectedHeader({ alg: 'ES256', kid: jwks.keys[0]!.kid, typ: 'JWT' })
        .setSubject(w.admin.id)
        .setIssuer('scanhub')
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey);
      const answer = await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: forged });
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 401, body: BAD_TOKEN });
      // An unsigned token (alg none) is refused as well.
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const claims = Buffer.from(JSON.stringify({ sub: w.admin.id, customer_id: CUSTOMER, iss: 'scanhub', exp: now + 3600 })).toString('base64url');
      const unsigned = await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: `${header}.${claims}.` });
      expect({ status: unsigned.status, body: unsigned.body }).toEqual({ status: 401, body: BAD_TOKEN });
    } finally {
      await w.close();
    }
  });
});
