import { expect } from 'vitest';
import { call } from '../../helpers/http.js';
import { error, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER } from '../../helpers/server.js';
import { USER_PERMISSIONS, asAdmin, asUser, bearer, lacks } from '../../helpers/users.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

const readUser: Scenario<Foundation>[] = [
  {
    name: 'the administrator reads another user',
    method: 'GET',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: asAdmin,
    status: 200,
    fields: (w) => ({ id: w.user.id, email: w.user.email, roles: ['USER_ROLE'], permissions: USER_PERMISSIONS }),
  },
  {
    name: 'a USER_ROLE user reads themselves',
    method: 'GET',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: asUser,
    status: 200,
    fields: (w) => ({ id: w.user.id, email: w.user.email }),
  },
  {
    name: 'a USER_ROLE user reading another user: 403',
    method: 'GET',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: asUser,
    status: 403,
    body: lacks('user.read'),
  },
  {
    name: 'an unknown id: 404',
    method: 'GET',
    path: `/${CUSTOMER}/users/4b0c3c4e-0000-4000-8000-000000000000`,
    auth: asAdmin,
    status: 404,
    body: error('Not Found', 'User "4b0c3c4e-0000-4000-8000-000000000000" does not exist.'),
  },
  {
    name: "the id of another customer's user on one's own path: 404, nothing leaks",
    method: 'GET',
    path: (w) => `/${CUSTOMER}/users/${w.otherAdmin.id}`,
    auth: asAdmin,
    status: 404,
    body: (w) => error('Not Found', `User "${w.otherAdmin.id}" does not exist.`),
  },
];

const deleteUser: Scenario<Foundation>[] = [
  {
    name: 'a user: 204 with no body; reading them afterwards is 404',
    method: 'DELETE',
    path: async (w) => `/${CUSTOMER}/users/${(await w.newUser()).id}`,
    auth: asAdmin,
    status: 204,
    check: async (answer, w) => {
      expect(answer.text).toBe('');
      const users = await w.t.admin.get<{ items: { id: string }[] }>(`/${CUSTOMER}/users`);
      expect(users.items.map((u) => u.id)).toEqual([w.admin.id, w.user.id]);
    },
  },
  {
    name: 'deleting again: 404',
    method: 'DELETE',
    path: async (w) => {
      const { id } = await w.newUser();
      await w.t.admin.delete(`/${CUSTOMER}/users/${id}`);
      return `/${CUSTOMER}/users/${id}`;
    },
    auth: asAdmin,
    status: 404,
    body: expect.objectContaining({ title: 'Not Found' }),
  },
  {
    name: 'the last administrator of a customer: 409',
    method: 'DELETE',
    path: (w) => `/${OTHER_CUSTOMER}/users/${w.otherAdmin.id}`,
    auth: (w) => bearer(w.otherAdmin.token),
    status: 409,
    body: (w) =>
      error(
        'Conflict',
        `User "${w.otherAdmin.id}" is the last administrator of customer "${OTHER_CUSTOMER}": make another user an administrator first.`,
      ),
  },
  {
    name: 'an administrator while another one remains: 204, and their token stops working',
    method: 'DELETE',
    path: async (w) => {
      const second = await w.newUser('ADMIN_ROLE');
      (w as Foundation & { second?: string }).second = second.token;
      return `/${CUSTOMER}/users/${second.id}`;
    },
    auth: (w) => bearer((w as Foundation & { second?: string }).second!),
    status: 204,
    check: async (_answer, w) => {
      const after = await call(w.url, 'GET', `/${CUSTOMER}/me`, { token: (w as Foundation & { second?: string }).second });
      expect({ status: after.status, body: after.body }).toEqual({
        status: 401,
        body: error('Unauthorized', 'The user of this token no longer exists.'),
      });
    },
  },
  {
    name: "another customer's user through one's own path: 404",
    method: 'DELETE',
    path: (w) => `/${CUSTOMER}/users/${w.otherAdmin.id}`,
    auth: asAdmin,
    status: 404,
    body: (w) => error('Not Found', `User "${w.otherAdmin.id}" does not exist.`),
  },
  {
    name: 'USER_ROLE deleting another user: 403',
    method: 'DELETE',
    path: (w) => `/${CUSTOMER}/users/${w.admin.id}`,
    auth: asUser,
    status: 403,
    body: lacks('user.write'),
  },
  {
    name: 'USER_ROLE deleting themselves: 403 (self access is for reading)',
    method: 'DELETE',
    path: (w) => `/${CUSTOMER}/users/${w.user.id}`,
    auth: asUser,
    status: 403,
    body: lacks('user.write'),
  },
];

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

scenarioTable('GET /{c}/users/{id}', startFoundation, readUser);
scenarioTable('DELETE /{c}/users/{id}', startFoundation, deleteUser);
scenarioTable('POST /{c}/users/{id}/invitation', startFoundation, invitation);
