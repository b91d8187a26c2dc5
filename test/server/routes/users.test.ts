import { describe, expect, it } from 'vitest';
import { encodePageToken } from '../../../src/domain/page-token.js';
import { call } from '../../helpers/http.js';
import { error, runScenario, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { UUID } from '../../helpers/patterns.js';
import { ADMIN_PERMISSIONS, USER_PERMISSIONS, asAdmin, asUser, bearer, lacks } from '../../helpers/users.js';
import { ADMIN_EMAIL, CUSTOMER } from '../../helpers/server.js';
import { OTHER_ADMIN_EMAIL, OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

let serial = 0;
const freshEmail = () => `new-${++serial}-${Date.now()}@example.com`;
const newUserBody = (overrides: Record<string, unknown> = {}) => ({
  first_name: 'Ada',
  last_name: 'Lovelace',
  role: 'USER_ROLE',
  email: freshEmail(),
  ...overrides,
});
const without = (field: string) => {
  const body: Record<string, unknown> = newUserBody();
  delete body[field];
  return body;
};

/** The API form of the bootstrap administrator (no names, no language, no consents). */
const adminUser = (w: Foundation) => ({
  id: w.admin.id,
  email: ADMIN_EMAIL,
  created: expect.any(Number),
  last_updated: expect.any(Number),
  roles: ['ADMIN_ROLE'],
  permissions: ADMIN_PERMISSIONS,
  consent_general_terms: null,
  consent_privacy_policy: null,
});

const me: Scenario<Foundation>[] = [
  { name: 'the administrator', method: 'GET', path: `/${CUSTOMER}/me`, auth: asAdmin, status: 200, body: adminUser },
  {
    name: 'a USER_ROLE user, with the permissions of the role',
    method: 'GET',
    path: `/${CUSTOMER}/me`,
    auth: asUser,
    status: 200,
    body: (w) => ({
      id: w.user.id,
      first_name: 'Test',
      last_name: 'User',
      email: w.user.email,
      created: expect.any(Number),
      last_updated: expect.any(Number),
      roles: ['USER_ROLE'],
      permissions: USER_PERMISSIONS,
      consent_general_terms: null,
      consent_privacy_policy: null,
    }),
  },
  {
    name: 'the bare token (no "Bearer") is accepted too',
    method: 'GET',
    path: `/${CUSTOMER}/me`,
    auth: (w) => w.admin.token,
    status: 200,
    body: adminUser,
  },
];

const createUser: Scenario<Foundation>[] = [
  {
    name: 'a USER_ROLE user: 200 (not 201) with the new user',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => newUserBody({ email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' }),
    status: 200,
    body: {
      id: expect.stringMatching(UUID),
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.com',
      created: expect.any(Number),
      last_updated: expect.any(Number),
      roles: ['USER_ROLE'],
      permissions: USER_PERMISSIONS,
      consent_general_terms: null,
      consent_privacy_policy: null,
    },
    check: async (answer, w) => {
      const created = answer.body as { id: string; created: number; last_updated: number };
      expect(created.last_updated).toBe(created.created);
      // It is stored: the admin reads the same object back.
      const read = await call(w.url, 'GET', `/${CUSTOMER}/users/${created.id}`, { token: w.admin.token });
      expect(read.body).toEqual(answer.body);
    },
  },
  {
    name: 'an ADMIN_ROLE user gets every permission',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => newUserBody({ role: 'ADMIN_ROLE' }),
    status: 200,
    fields: { roles: ['ADMIN_ROLE'], permissions: ADMIN_PERMISSIONS },
  },
  {
    name: 'an e-mail that exists, in other case: 409',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => newUserBody({ email: ADMIN_EMAIL.toUpperCase() }),
    status: 409,
    body: error('Conflict', `A user with the e-mail address "${ADMIN_EMAIL.toUpperCase()}" already exists.`),
  },
  {
    name: "an e-mail of another customer's user: 409 (unique per deployment)",
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => newUserBody({ email: OTHER_ADMIN_EMAIL }),
    status: 409,
    body: error('Conflict', `A user with the e-mail address "${OTHER_ADMIN_EMAIL}" already exists.`),
  },
  ...['first_name', 'last_name', 'role', 'email'].map((field) => ({
    name: `${field} missing: 400 naming it`,
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => without(field),
    status: 400,
    body: error('Bad Request', `Missing body field "${field}".`),
  })),
  ...(
    [
      ['first_name', 1, 'Body field "first_name" must be string.'],
      ['last_name', null, 'Body field "last_name" must be string.'],
      ['email', ['a@example.com'], 'Body field "email" must be string.'],
      ['role', 'SUPERUSER', 'Body field "role" must be one of USER_ROLE, ADMIN_ROLE.'],
      ['role', ['USER_ROLE'], 'Body field "role" must be string.'],
      ['email', 'not-an-address', 'Body field "email" must match format "email".'],
      ['first_name', '', 'Body field "first_name" must NOT have fewer than 1 characters.'],
    ] as const
  ).map(([field, value, details]) => ({
    name: `${field} = ${JSON.stringify(value)}: 400`,
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => newUserBody({ [field]: value }),
    status: 400,
    body: error('Bad Request', details),
  })),
  ...['id', 'customer_id', 'roles', 'created', 'password'].map((field) => ({
    name: `${field} in the body (no mass assignment): 400`,
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    json: () => newUserBody({ [field]: field === 'roles' ? ['ADMIN_ROLE'] : 'x' }),
    status: 400,
    body: error('Bad Request', `Unknown body field "${field}": it is not part of this call.`),
  })),
  {
    name: 'USER_ROLE: 403',
    method: 'POST',
    path: `/${CUSTOMER}/users`,
    auth: asUser,
    json: () => newUserBody(),
    status: 403,
    body: lacks('user.write'),
  },
];

const listUsers: Scenario<Foundation>[] = [
  {
    name: 'the users of the customer only, oldest first, in the list wrapper',
    method: 'GET',
    path: `/${CUSTOMER}/users`,
    auth: asAdmin,
    status: 200,
    check: (answer, w) => {
      const list = answer.body as { items: { id: string; email: string }[]; links: object; metadata: object };
      expect(list.items.map((u) => u.id)).toEqual([w.admin.id, w.user.id]);
      expect(list.links).toEqual({});
      expect(list.metadata).toEqual({ description: 'Users of the customer', size: 2, filters: [] });
    },
  },
  {
    name: 'limit 500 is allowed',
    method: 'GET',
    path: `/${CUSTOMER}/users?limit=500`,
    auth: asAdmin,
    status: 200,
    fields: { metadata: { size: 2 } },
  },
  ...(
    [
      ['0', 'Query parameter "limit" must be >= 1.'],
      ['501', 'Query parameter "limit" must be <= 500.'],
      ['abc', 'Query parameter "limit" must be integer.'],
      ['1.5', 'Query parameter "limit" must be integer.'],
    ] as const
  ).map(([limit, details]) => ({
    name: `limit=${limit}: 400`,
    method: 'GET',
    path: `/${CUSTOMER}/users?limit=${limit}`,
    auth: asAdmin,
    status: 400,
    body: error('Bad Request', details),
  })),
  ...(
    [
      ['not base64url at all', '!!!'],
      ['base64url of garbage', Buffer.from('{not json').toString('base64url')],
      ['a token of another listing', encodePageToken({ kind: 'gateways', customer: CUSTOMER, after: { created: 1, id: 'x' } })],
      ["a token of another customer's list", encodePageToken({ kind: 'users', customer: OTHER_CUSTOMER, after: { created: 1, id: 'x' } })],
      ['a token with a broken key', encodePageToken({ kind: 'users', customer: CUSTOMER, after: { created: 'yesterday', id: 'x' } })],
    ] as const
  ).map(([what, token]) => ({
    name: `next_token = ${what}: 400`,
    method: 'GET',
    path: `/${CUSTOMER}/users?next_token=${encodeURIComponent(token)}`,
    auth: asAdmin,
    status: 400,
    body: error('Bad Request', 'Query parameter "next_token" is not a token of this user list.'),
  })),
  {
    name: 'USER_ROLE: 403',
    method: 'GET',
    path: `/${CUSTOMER}/users`,
    auth: asUser,
    status: 403,
    body: lacks('user.read'),
  },
];

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

scenarioTable('GET /{c}/me', startFoundation, me);
scenarioTable('POST /{c}/users', startFoundation, createUser);
scenarioTable('GET /{c}/users', startFoundation, listUsers);
scenarioTable('GET /{c}/users/{id}', startFoundation, readUser);
scenarioTable('DELETE /{c}/users/{id}', startFoundation, deleteUser);

describe('GET /{c}/users pagination', () => {
  it('walks more than two pages by links.next, in (created, id) order, ties broken by id, none skipped or repeated', async () => {
    const w = await startFoundation();
    try {
      // Five users in one millisecond: only the id orders them.
      w.clock.freeze(w.clock.now() + 1000);
      const created: string[] = [];
      for (let i = 0; i < 5; i++) created.push((await w.t.admin.post<{ id: string }>(`/${CUSTOMER}/users`, newUserBody())).id);
      w.clock.reset();
      const expected = [w.admin.id, w.user.id, ...created.sort()];

      const pages: { items: { id: string }[]; links: { next?: string }; metadata: { size: number } }[] = [];
      let path: string | undefined = `/${CUSTOMER}/users?limit=2`;
      while (path && pages.length < 10) {
        const answer = await runScenario(w, { name: 'page', method: 'GET', path, auth: asAdmin, status: 200 });
        const page = answer.body as (typeof pages)[number];
        pages.push(page);
        if (page.links.next) expect(page.links.next).toMatch(new RegExp(`^/${CUSTOMER}/users\\?next_token=[A-Za-z0-9_-]+&limit=2$`));
        path = page.links.next;
      }
      expect(pages.map((p) => p.metadata.size)).toEqual([2, 2, 2, 1]);
      expect(pages.flatMap((p) => p.items.map((u) => u.id))).toEqual(expected);
      expect(pages[3]!.links).toEqual({});

      // A token of acme's list, replayed by globex on its own list: 400.
      const stolen = pages[0]!.links.next!.split('next_token=')[1]!.split('&')[0]!;
      const replay = await call(w.url, 'GET', `/${OTHER_CUSTOMER}/users?next_token=${stolen}`, { token: w.otherAdmin.token });
      expect({ status: replay.status, body: replay.body }).toEqual({
        status: 400,
        body: error('Bad Request', 'Query parameter "next_token" is not a token of this user list.'),
      });
    } finally {
      await w.close();
    }
  });
});
