import { describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { error, scenarioTable, type Scenario } from '../helpers/scenarios.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../helpers/server.js';
import { ADMIN_PERMISSIONS, USER_PERMISSIONS, asAdmin, asUser, bearer, lacks } from '../helpers/users.js';
import { startFoundation, type Actor, type Foundation } from '../helpers/world.js';

// "A caller can never hand out more than it holds" (docs/users.md "Who may do what"): creating a
// user with a role, changing roles and inviting need every permission of the roles involved, and
// an API key never administers an administrator. The escalations a security review found (issue
// 27) are replayed here: with a `user.write`-only key, and with an administrator's key that holds
// every permission.

/** A foundation with two API keys of the administrator: one with `user.write` only, one with every permission. */
interface Keys extends Foundation {
  userWriteKey: string;
  fullKey: string;
}

async function withKeys(): Promise<Keys> {
  const w = await startFoundation();
  const key = async (name: string, permissions?: string[]) =>
    (await w.t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name, ...(permissions ? { permissions } : {}) })).key;
  return { ...w, userWriteKey: await key('user-write-only', ['user.write']), fullKey: await key('everything') };
}

const newUser = (role: string) => ({ first_name: 'Eve', last_name: 'Scalate', role, email: `eve-${Math.random().toString(36).slice(2)}@example.com` });
const KEY_NO_ADMIN = (action: string) =>
  error('Forbidden', `An API key cannot ${action}: administrators (ADMIN_ROLE) are administered only by an administrator signed in with an IdToken.`);
const quoted = (permissions: string[]) => permissions.map((p) => `"${p}"`).join(', ');
const KEY_LACKS = (action: string, roles: string, permissions: string[]) =>
  error('Forbidden', `This API key cannot ${action}: it needs every permission of ${roles}, and the key lacks the permissions ${quoted(permissions)}.`);
const KEY_NO_RESET = error('Forbidden', 'An API key cannot reset a password: only an administrator signed in with an IdToken can.');

/** The user a row made, for its expected body. */
let invitee = '';
let renamed: Actor | undefined;
let promoted: Actor | undefined;

const escalations: Scenario<Keys>[] = [
  {
    name: 'user.write key creates an ADMIN_ROLE user: 403, and nobody was created',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: (w) => bearer(w.userWriteKey),
    json: newUser('ADMIN_ROLE'),
    status: 403,
    body: KEY_NO_ADMIN('create a user with the role ADMIN_ROLE'),
    check: async (_answer, w) => {
      const users = await w.t.admin.get<{ items: { email: string }[] }>(`/${CUSTOMER}/users`);
      expect(users.items.filter((u) => u.email.startsWith('eve-'))).toEqual([]);
    },
  },
  {
    name: 'user.write key creates a USER_ROLE user: 403 naming the permissions of the role it lacks',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: (w) => bearer(w.userWriteKey),
    json: newUser('USER_ROLE'),
    status: 403,
    body: KEY_LACKS('create a user with the role USER_ROLE', 'the role USER_ROLE', USER_PERMISSIONS),
  },
  {
    name: 'user.write key invites an ADMIN_ROLE user (created without a password): 403',
    method: 'POST',
    path: async (w) => `/${CUSTOMER}/users/${(invitee = (await w.newInvitee('ADMIN_ROLE')).id)}/invitation`,
    auth: (w) => bearer(w.userWriteKey),
    status: 403,
    body: () => KEY_NO_ADMIN(`invite user "${invitee}"`),
  },
  {
    name: 'user.write key invites the existing administrator again: 403, not a new password for them',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}/invitation`,
    auth: (w) => bearer(w.userWriteKey),
    status: 403,
    body: (w) => KEY_NO_ADMIN(`invite user "${w.admin.id}"`),
  },
  {
    name: "user.write key resets the administrator's password: 403",
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}/password-reset`,
    auth: (w) => bearer(w.userWriteKey),
    status: 403,
    body: KEY_NO_RESET,
  },
  {
    name: "user.write key changes a user's roles to ADMIN_ROLE: 403",
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: (w) => bearer(w.userWriteKey),
    json: { roles: ['ADMIN_ROLE'] },
    status: 403,
    body: (w) => KEY_NO_ADMIN(`change the roles of user "${w.user.id}"`),
  },
  {
    name: 'a key with every permission creates an ADMIN_ROLE user: 403 (a key never administers administrators)',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: (w) => bearer(w.fullKey),
    json: newUser('ADMIN_ROLE'),
    status: 403,
    body: KEY_NO_ADMIN('create a user with the role ADMIN_ROLE'),
  },
  {
    name: 'a key with every permission invites the administrator: 403',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}/invitation`,
    auth: (w) => bearer(w.fullKey),
    status: 403,
    body: (w) => KEY_NO_ADMIN(`invite user "${w.admin.id}"`),
  },
  {
    name: "a key with every permission resets the administrator's password: 403",
    method: 'POST',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}/password-reset`,
    auth: (w) => bearer(w.fullKey),
    status: 403,
    body: KEY_NO_RESET,
  },
  {
    name: 'a key with every permission promotes a user: 403',
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: (w) => bearer(w.fullKey),
    json: { roles: ['USER_ROLE', 'ADMIN_ROLE'] },
    status: 403,
    body: (w) => KEY_NO_ADMIN(`change the roles of user "${w.user.id}"`),
  },
  {
    name: 'a key with every permission demotes the administrator: 403',
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: (w) => bearer(w.fullKey),
    json: { roles: ['USER_ROLE'] },
    status: 403,
    body: (w) => KEY_NO_ADMIN(`change the roles of user "${w.admin.id}"`),
  },
  {
    name: "a key with every permission renames the administrator: 403, the name unchanged",
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: (w) => bearer(w.fullKey),
    json: { first_name: 'Mallory' },
    status: 403,
    body: (w) => KEY_NO_ADMIN(`change user "${w.admin.id}"`),
    check: async (_answer, w) => {
      const admin = await w.t.admin.get<{ first_name?: string }>(`/${CUSTOMER}/users/${w.admin.id}`);
      expect(admin.first_name).not.toBe('Mallory');
    },
  },
  {
    name: 'a key with every permission deletes an administrator who is not the last: 403, still there',
    method: 'DELETE',
    path: async (w) => `/${CUSTOMER}/users/${(invitee = (await w.newInvitee('ADMIN_ROLE')).id)}`,
    auth: (w) => bearer(w.fullKey),
    status: 403,
    body: () => KEY_NO_ADMIN(`delete user "${invitee}"`),
    check: async (_answer, w) => {
      expect((await call(w.url, 'GET', `/${CUSTOMER}/users/${invitee}`, { token: w.t.adminToken })).status).toBe(200);
    },
  },
  {
    name: 'user.write key deletes a USER_ROLE user: 403 naming the permissions it lacks',
    method: 'DELETE',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: (w) => bearer(w.userWriteKey),
    status: 403,
    body: (w) => KEY_LACKS(`delete user "${w.user.id}"`, 'the role USER_ROLE', USER_PERMISSIONS),
  },
  {
    name: 'a key with every permission may still create and invite a USER_ROLE user',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: (w) => bearer(w.fullKey),
    json: newUser('USER_ROLE'),
    status: 200,
    fields: { roles: ['USER_ROLE'], permissions: USER_PERMISSIONS },
    check: async (answer, w) => {
      const invite = await call(w.url, 'POST', `/${CUSTOMER}/users/${(answer.body as { id: string }).id}/invitation`, { token: w.fullKey });
      expect(invite.status).toBe(201);
    },
  },
  {
    name: 'a USER_ROLE user changes its own roles: 403',
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: asUser,
    json: { roles: ['ADMIN_ROLE'] },
    status: 403,
    body: lacks('user.write'),
  },
];

scenarioTable('escalations through users and invitations (issue 27)', withKeys, escalations);

describe('the escalation of the review, replayed', () => {
  it("a user.write key can neither make an administrator nor take the existing one's account: its password and IdToken keep working", async () => {
    const w = await withKeys();
    try {
      const as = (path: string, json?: object) => call(w.url, 'POST', path, { token: w.userWriteKey, json });
      expect((await as(`/${CUSTOMER}/users`, newUser('ADMIN_ROLE'))).status).toBe(403);
      expect((await as(`/${CUSTOMER}/users/${w.admin.id}/invitation`)).status).toBe(403);
      expect((await as(`/${CUSTOMER}/users/${w.admin.id}/password-reset`)).status).toBe(403);
      expect((await call(w.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
      expect((await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: w.admin.token })).status).toBe(200);
    } finally {
      await w.close();
    }
  });
});

const patchUser: Scenario<Foundation>[] = [
  {
    name: "an administrator promotes a user: 200; the user's older IdTokens are refused, a new log-in has the new permissions",
    method: 'PATCH',
    path: async (w) => `/${CUSTOMER}/users/${(promoted = await w.newUser()).id}`,
    auth: asAdmin,
    json: { roles: ['ADMIN_ROLE', 'USER_ROLE'] },
    status: 200,
    fields: { roles: ['USER_ROLE', 'ADMIN_ROLE'], permissions: ADMIN_PERMISSIONS },
    check: async (_answer, w) => {
      const old = await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: promoted!.token });
      expect({ status: old.status, body: old.body }).toEqual({ status: 401, body: error('Unauthorized', "The token was issued before its user's password or roles changed: log in again for a new one.") });
      const fresh = await w.t.login(promoted!.email, 'user-password-123');
      const me = await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: fresh });
      expect({ status: me.status, permissions: (me.body as { permissions: string[] }).permissions }).toEqual({ status: 200, permissions: ADMIN_PERMISSIONS });
      const log = await w.t.admin.get<{ items: { action: string; actor: object; target: object; details: object }[] }>(`/${CUSTOMER}/audit-log?action=user.updated`);
      expect(log.items.map(({ action, actor, target, details }) => ({ action, actor, target, details }))).toEqual([
        {
          action: 'user.updated',
          actor: { type: 'user', id: w.admin.id, email: ADMIN_EMAIL },
          target: { type: 'user', id: promoted!.id },
          details: { changed: ['roles'], roles: ['USER_ROLE', 'ADMIN_ROLE'], previous_roles: ['USER_ROLE'] },
        },
      ]);
    },
    // The bootstrap administrator is the only one again for the other rows.
    after: async (w) => void (await w.t.admin.delete(`/${CUSTOMER}/users/${promoted!.id}`)),
  },
  {
    name: "names and language: 200, and the user's IdTokens stay valid",
    method: 'PATCH',
    path: async (w) => `/${CUSTOMER}/users/${(renamed = await w.newUser()).id}`,
    auth: asAdmin,
    json: { first_name: 'Grace', last_name: 'Hopper', language: 'en' },
    status: 200,
    fields: { first_name: 'Grace', last_name: 'Hopper', language: 'en', roles: ['USER_ROLE'] },
    check: async (_answer, w) => expect((await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: renamed!.token })).status).toBe(200),
  },
  {
    name: 'the same roles again: 200, no IdToken refused',
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: asAdmin,
    json: { roles: ['ADMIN_ROLE'] },
    status: 200,
    check: async (_answer, w) => expect((await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: w.admin.token })).status).toBe(200),
  },
  {
    name: 'demoting the last administrator: 409',
    method: 'PATCH',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: asAdmin,
    json: { roles: ['USER_ROLE'] },
    status: 409,
    body: (w) => error('Conflict', `User "${w.admin.id}" is the last administrator of customer "${CUSTOMER}": make another user an administrator first.`),
  },
  { name: 'an unknown user: 404', method: 'PATCH', path: `/${CUSTOMER}/users/nobody`, auth: asAdmin, json: { first_name: 'X' }, status: 404, body: error('Not Found', 'User "nobody" does not exist.') },
  ...(
    [
      [{}, 'The request body must NOT have fewer than 1 properties.'],
      [{ email: 'x@example.com' }, 'Unknown body field "email": it is not part of this call.'],
      [{ roles: [] }, 'Body field "roles" must NOT have fewer than 1 items.'],
      [{ roles: ['SUPERUSER'] }, 'Body field "roles.0" must be one of USER_ROLE, ADMIN_ROLE.'],
      [{ roles: 'ADMIN_ROLE' }, 'Body field "roles" must be array.'],
      [{ first_name: '' }, 'Body field "first_name" must NOT have fewer than 1 characters.'],
    ] as const
  ).map(([json, details]) => ({
    name: `${JSON.stringify(json)}: 400`,
    method: 'PATCH',
    path: (w: Foundation) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: asAdmin,
    json,
    status: 400,
    body: error('Bad Request', details),
  })),
];

scenarioTable('PATCH /{c}/users/{id}', startFoundation, patchUser);
