// API keys (DESIGN.md "Trust"; docs/api-keys.md): create, list, revoke over real HTTP, and a key
// in the Authorization header in place of an IdToken: its permissions, its customer, revocation
// and expiry from the next request on, last_used to the minute, only the hash stored.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toApiEvent } from '../../../src/domain/events.js';
import { eventRow } from '../../helpers/events.js';
import { call } from '../../helpers/http.js';
import { NO_HEADER, error, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER } from '../../helpers/server.js';
import { ADMIN_PERMISSIONS, asAdmin, asUser, bearer } from '../../helpers/users.js';
import { API_KEY, UUID } from '../../helpers/patterns.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

const MINUTE = 60_000;

interface CreatedKey {
  id: string;
  name: string;
  key: string;
  permissions: string[];
  created: number;
  expires_at: number | null;
  last_used: number | null;
}

let names = 0;
/** Creates a key through the API as `auth` (the admin by default) and returns the answer. */
async function createKey(w: Foundation, body: Record<string, unknown> = {}, auth = asAdmin(w), customer = CUSTOMER): Promise<CreatedKey> {
  const answer = await call(w.url, 'POST', `/${customer}/api-keys`, { authorization: auth, json: { name: `key-${++names}`, ...body } });
  expect(answer.status, answer.text).toBe(201);
  return answer.body as CreatedKey;
}

const unauthorized = (details: string) => error('Unauthorized', details);
const keyRefused = {
  malformed: unauthorized('The API key in the Authorization header is malformed: a key is "shk_" and 43 more characters, as POST /{customer_id}/api-keys made it.'),
  unknown: unauthorized('The API key in the Authorization header is unknown: create one with `scanhub api-keys create`.'),
  revoked: (name: string, at: number) => unauthorized(`The API key "${name}" was revoked at ${new Date(at).toISOString()}: create a new one.`),
  expired: (name: string, at: number) => unauthorized(`The API key "${name}" expired at ${new Date(at).toISOString()}: create a new one.`),
};

const creation: Scenario<Foundation>[] = [
  {
    name: 'name only: 201, the key once, the creator’s permissions, no expiry, never used',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-default' },
    status: 201,
    check: (answer) => {
      expect(answer.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'ci-default',
        key: expect.stringMatching(API_KEY),
        permissions: ADMIN_PERMISSIONS,
        created: expect.any(Number),
        expires_at: null,
        last_used: null,
      });
      expect(Object.keys(answer.body as object)).toEqual(['id', 'name', 'key', 'permissions', 'created', 'expires_at', 'last_used']);
    },
  },
  {
    name: 'permissions and expires_at: kept, permissions in the canonical order without repeats',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: (w) => ({ name: 'ci-events', permissions: ['gateway.read', 'event.read', 'event.read'], expires_at: w.clock.now() + 90 * 86_400_000 }),
    status: 201,
    fields: { name: 'ci-events', permissions: ['event.read', 'gateway.read'], last_used: null },
    check: (answer, w) => expect((answer.body as CreatedKey).expires_at).toBeGreaterThan(w.clock.now() + 89 * 86_400_000),
  },
  {
    name: 'an unknown permission: 400 naming it',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-unknown', permissions: ['event.read', 'event.write'] },
    status: 400,
    body: error(
      'Bad Request',
      'Body field "permissions" names an unknown permission "event.write": use some of event.read, event.export, gateway.read, gateway.write, gateway.provision, gateway.command, jobconfig.read, jobconfig.write, jobanalysis.run, feature.read, asset.download, user.read, user.write, audit.read, apikey.write, retention.read, retention.write, webhook.write.',
    ),
  },
  {
    name: 'a permission the creating key does not have: 400 naming it',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: async (w) => bearer((await createKey(w, { permissions: ['event.read', 'apikey.write'] })).key),
    json: { name: 'ci-exceeds', permissions: ['event.read', 'gateway.write'] },
    status: 400,
    body: error('Bad Request', 'Body field "permissions" names "gateway.write", which you do not have: a key\'s permissions may not exceed its creator\'s.'),
  },
  {
    name: 'created by a key: the default permissions are the key’s, not its creator’s',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: async (w) => bearer((await createKey(w, { permissions: ['apikey.write', 'event.read'] })).key),
    json: { name: 'ci-by-key' },
    status: 201,
    fields: { name: 'ci-by-key', permissions: ['event.read', 'apikey.write'] },
  },
  {
    name: 'created by a key that expires, without expires_at: the new key expires with it',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: async (w) => bearer((await createKey(w, { permissions: ['apikey.write', 'event.read'], expires_at: 4_000_000_000_000 })).key),
    json: { name: 'ci-by-expiring-key' },
    status: 201,
    fields: { name: 'ci-by-expiring-key', expires_at: 4_000_000_000_000 },
  },
  {
    name: 'created by a key that expires, expiring later than it: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: async (w) => bearer((await createKey(w, { permissions: ['apikey.write', 'event.read'], expires_at: 4_000_000_000_000 })).key),
    json: { name: 'ci-outliving', expires_at: 4_000_000_000_001 },
    status: 400,
    body: error(
      'Bad Request',
      'Body field "expires_at" (2096-10-02T07:06:40.001Z) is after 2096-10-02T07:06:40.000Z, when the API key making this call expires: a key may not outlive the key that creates it.',
    ),
  },
  {
    name: 'expires_at beyond the last date JavaScript can hold: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-forever', expires_at: 1e300 },
    status: 400,
    body: error('Bad Request', 'Body field "expires_at" must be <= 8640000000000000.'),
  },
  {
    name: 'expires_at negative: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-never', expires_at: -1e300 },
    status: 400,
    body: error('Bad Request', 'Body field "expires_at" must be >= 0.'),
  },
  {
    name: 'expires_at in the past: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-past', expires_at: 1_600_000_000_000 },
    status: 400,
    body: error(
      'Bad Request',
      'Body field "expires_at" (1600000000000, 2020-09-13T12:26:40.000Z) is not in the future: give a later time in milliseconds since the epoch.',
    ),
  },
  {
    name: 'a name a live key has: 409',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: async (w) => ({ name: (await createKey(w)).name }),
    status: 409,
    fields: { title: 'Conflict' },
    check: (answer) => expect((answer.body as { details: string }).details).toMatch(/^An API key named "key-\d+" already exists: revoke it first or choose another name\.$/),
  },
  {
    name: 'the name of a revoked key can be used again',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: async (w) => {
      const old = await createKey(w);
      await w.t.admin.delete(`/${CUSTOMER}/api-keys/${old.id}`);
      return { name: old.name };
    },
    status: 201,
  },
  { name: 'no name: 400', method: 'POST', path: `/${CUSTOMER}/api-keys`, auth: asAdmin, json: {}, status: 400, body: error('Bad Request', 'Missing body field "name".') },
  {
    name: 'no permissions at all: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-none', permissions: [] },
    status: 400,
    body: error('Bad Request', 'Body field "permissions" must NOT have fewer than 1 items.'),
  },
  {
    name: 'a blank name: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: '   ' },
    status: 400,
    body: error('Bad Request', 'Body field "name" is blank: name the key after what uses it, e.g. the pipeline.'),
  },
  {
    name: 'a name over 100 characters: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'n'.repeat(101) },
    status: 400,
    body: error('Bad Request', 'Body field "name" must NOT have more than 100 characters.'),
  },
  {
    name: 'expires_at not a number: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-soon', expires_at: 'soon' },
    status: 400,
    body: error('Bad Request', 'Body field "expires_at" must be integer.'),
  },
  {
    name: 'a field the call does not take: 400',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asAdmin,
    json: { name: 'ci-key', key: 'shk_chosen' },
    status: 400,
    body: error('Bad Request', 'Unknown body field "key": it is not part of this call.'),
  },
  {
    name: 'USER_ROLE lacks apikey.write: 403',
    method: 'POST',
    path: `/${CUSTOMER}/api-keys`,
    auth: asUser,
    json: { name: 'ci-user' },
    status: 403,
    body: error('Forbidden', 'Your role USER_ROLE lacks the permission "apikey.write" this call needs; ask an administrator.'),
  },
];

scenarioTable('POST /{customer_id}/api-keys', startFoundation, creation);

scenarioTable('GET and DELETE /{customer_id}/api-keys', startFoundation, [
  {
    name: 'a next_token of another list: 400',
    method: 'GET',
    path: async (w) => `/${CUSTOMER}/api-keys?next_token=${new URL((await w.t.admin.get<{ links: { next: string } }>(`/${CUSTOMER}/users?limit=1`)).links.next, w.url).searchParams.get('next_token')}`,
    auth: asAdmin,
    status: 400,
    body: error('Bad Request', 'Query parameter "next_token" is not a token of this API key list.'),
  },
  {
    name: 'USER_ROLE may not list keys: 403',
    method: 'GET',
    path: `/${CUSTOMER}/api-keys`,
    auth: asUser,
    status: 403,
    body: error('Forbidden', 'Your role USER_ROLE lacks the permission "apikey.write" this call needs; ask an administrator.'),
  },
  {
    name: 'USER_ROLE may not revoke: 403',
    method: 'DELETE',
    path: async (w) => `/${CUSTOMER}/api-keys/${(await createKey(w)).id}`,
    auth: asUser,
    status: 403,
    body: error('Forbidden', 'Your role USER_ROLE lacks the permission "apikey.write" this call needs; ask an administrator.'),
  },
  {
    name: 'an id that does not exist: 404',
    method: 'DELETE',
    path: `/${CUSTOMER}/api-keys/no-such-key`,
    auth: asAdmin,
    status: 404,
    body: error('Not Found', 'API key "no-such-key" does not exist or was revoked already.'),
  },
]);

describe('API keys', () => {
  let w: Foundation;
  beforeAll(async () => {
    w = await startFoundation();
  });
  afterAll(async () => {
    await w?.close();
  });

  const get = (path: string, auth: string) => call(w.url, 'GET', path, { authorization: auth });

  it('GET lists the live keys without the key; DELETE revokes (204), again 404; a revoked key is no longer listed', async () => {
    w.clock.freeze(Date.now());
    try {
      const a = await createKey(w, { name: 'list-a', permissions: ['event.read'] });
      w.clock.advance(1);
      const b = await createKey(w, { name: 'list-b', expires_at: Date.now() + 86_400_000 });
      const { key: _a, ...listedA } = a;
      const { key: _b, ...listedB } = b;
      const listed = await get(`/${CUSTOMER}/api-keys`, asAdmin(w));
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ items: [listedA, listedB], links: {}, metadata: { description: 'API keys of the customer', size: 2, filters: [] } });
      const firstPage = await get(`/${CUSTOMER}/api-keys?limit=1`, asAdmin(w));
      const next = (firstPage.body as { links: { next: string } }).links.next;
      expect((firstPage.body as { items: unknown[] }).items).toEqual([listedA]);
      expect(((await get(next, asAdmin(w))).body as { items: unknown[] }).items).toEqual([listedB]);

      expect((await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${a.id}`, { authorization: asAdmin(w) })).status).toBe(204);
      expect(await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${a.id}`, { authorization: asAdmin(w) })).toMatchObject({
        status: 404,
        body: error('Not Found', `API key "${a.id}" does not exist or was revoked already.`),
      });
      expect(((await get(`/${CUSTOMER}/api-keys`, asAdmin(w))).body as { items: unknown[] }).items).toEqual([listedB]);
      await w.t.admin.delete(`/${CUSTOMER}/api-keys/${b.id}`);
    } finally {
      w.clock.reset();
    }
  });

  it("another customer's key: 404 on one's own path, 403 on its customer's path", async () => {
    const theirs = await createKey(w, {}, bearer(w.otherAdmin.token), OTHER_CUSTOMER);
    expect(await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${theirs.id}`, { authorization: asAdmin(w) })).toMatchObject({
      status: 404,
      body: error('Not Found', `API key "${theirs.id}" does not exist or was revoked already.`),
    });
    expect(await call(w.url, 'DELETE', `/${OTHER_CUSTOMER}/api-keys/${theirs.id}`, { authorization: asAdmin(w) })).toMatchObject({
      status: 403,
      body: error('Forbidden', `Your account belongs to customer "${CUSTOMER}" and has no access to customer "${OTHER_CUSTOMER}".`),
    });
    // Still working for its own customer.
    expect((await get(`/${OTHER_CUSTOMER}/me`, theirs.key)).status).toBe(200);
  });

  it('a key with event.read only lists events (bare or Bearer) and is refused gateway creation (403)', async () => {
    const row = eventRow({ created: Date.now() - 1000, scan_code: 'KEY-1' });
    await w.t.server.ctx.store.events.insert(CUSTOMER, [row]);
    const { key, name } = await createKey(w, { permissions: ['event.read'] });
    for (const auth of [key, bearer(key), `bearer ${key}`]) {
      const events = await get(`/${CUSTOMER}/events`, auth);
      expect(events.status).toBe(200);
      expect((events.body as { items: unknown[] }).items).toEqual([toApiEvent(row)]);
    }
    expect(await call(w.url, 'POST', `/${CUSTOMER}/gateways`, { authorization: bearer(key), json: { name: 'Dock K', usecase: 'inbound', station: 'dock-k' } })).toMatchObject({
      status: 403,
      body: error('Forbidden', `The API key "${name}" lacks the permission "gateway.write" this call needs; create a key with it.`),
    });
    expect(await get(`/${CUSTOMER}/users`, bearer(key))).toMatchObject({
      status: 403,
      body: error('Forbidden', `The API key "${name}" lacks the permission "user.read" this call needs; create a key with it.`),
    });
  });

  it("a key on another customer's path: 403", async () => {
    const { key } = await createKey(w, { permissions: ['event.read'] });
    expect(await get(`/${OTHER_CUSTOMER}/events`, bearer(key))).toMatchObject({
      status: 403,
      body: error('Forbidden', `This API key belongs to customer "${CUSTOMER}" and has no access to customer "${OTHER_CUSTOMER}".`),
    });
    const theirs = await createKey(w, { permissions: ['event.read'] }, bearer(w.otherAdmin.token), OTHER_CUSTOMER);
    expect(await get(`/${CUSTOMER}/events`, bearer(theirs.key))).toMatchObject({
      status: 403,
      body: error('Forbidden', `This API key belongs to customer "${OTHER_CUSTOMER}" and has no access to customer "${CUSTOMER}".`),
    });
  });

  it('/me with a key: the creator, with the permissions the key acts with', async () => {
    const { key } = await createKey(w, { permissions: ['event.read', 'gateway.read'] });
    const me = await get(`/${CUSTOMER}/me`, bearer(key));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: w.admin.id, email: w.admin.email, roles: ['ADMIN_ROLE'], permissions: ['event.read', 'gateway.read'] });
  });

  it('a revoked key is refused (401) on the very next request', async () => {
    const { id, key, name } = await createKey(w, { permissions: ['event.read'] });
    expect((await get(`/${CUSTOMER}/events`, bearer(key))).status).toBe(200);
    w.clock.freeze(Date.now());
    try {
      const revokedAt = w.clock.now();
      expect((await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${id}`, { authorization: asAdmin(w) })).status).toBe(204);
      expect(await get(`/${CUSTOMER}/events`, bearer(key))).toMatchObject({ status: 401, body: keyRefused.revoked(name, revokedAt) });
    } finally {
      w.clock.reset();
    }
  });

  it('an expired key is refused (401) once its time is up', async () => {
    const expiresAt = w.clock.now() + 10 * MINUTE;
    const { key, name } = await createKey(w, { permissions: ['event.read'], expires_at: expiresAt });
    try {
      w.clock.advance(10 * MINUTE - 5_000);
      expect((await get(`/${CUSTOMER}/events`, bearer(key))).status).toBe(200);
      w.clock.advance(10_000);
      expect(await get(`/${CUSTOMER}/events`, bearer(key))).toMatchObject({ status: 401, body: keyRefused.expired(name, expiresAt) });
    } finally {
      w.clock.reset();
    }
  });

  it('malformed and unknown keys: 401 saying which', async () => {
    const { key } = await createKey(w);
    const cases: [string, object][] = [
      ['shk_', keyRefused.malformed],
      ['shk_abc', keyRefused.malformed],
      [`${key}x`, keyRefused.malformed],
      [`shk_${'!'.repeat(43)}`, keyRefused.malformed],
      [`shk_${'A'.repeat(43)}`, keyRefused.unknown],
      [`Bearer shk_${'A'.repeat(43)}`, keyRefused.unknown],
    ];
    for (const [auth, body] of cases) expect({ auth, ...(await get(`/${CUSTOMER}/me`, auth)) }).toMatchObject({ auth, status: 401, body });
  });

  it("a key whose creator was deleted is refused (401)", async () => {
    const creator = await w.newUser('ADMIN_ROLE');
    const { key, name } = await createKey(w, { permissions: ['event.read'] }, bearer(creator.token));
    expect((await get(`/${CUSTOMER}/events`, key)).status).toBe(200);
    await w.t.admin.delete(`/${CUSTOMER}/users/${creator.id}`);
    expect(await get(`/${CUSTOMER}/events`, key)).toMatchObject({
      status: 401,
      body: unauthorized(`The user who created the API key "${name}" no longer exists: create a new key.`),
    });
  });

  it('last_used is kept to the minute: set on first use, not rewritten within a minute, rewritten after', async () => {
    const t0 = Date.now();
    w.clock.freeze(t0);
    try {
      const { id, key } = await createKey(w, { permissions: ['event.read'] });
      const lastUsed = async () =>
        ((await get(`/${CUSTOMER}/api-keys`, asAdmin(w))).body as { items: CreatedKey[] }).items.find((k) => k.id === id)!.last_used;
      expect(await lastUsed()).toBe(null);
      await get(`/${CUSTOMER}/me`, bearer(key));
      expect(await lastUsed()).toBe(t0);
      w.clock.advance(MINUTE - 1);
      await get(`/${CUSTOMER}/me`, bearer(key));
      expect(await lastUsed()).toBe(t0);
      w.clock.advance(1);
      await get(`/${CUSTOMER}/me`, bearer(key));
      expect(await lastUsed()).toBe(t0 + MINUTE);
    } finally {
      w.clock.reset();
    }
  });

  it('GET /api-keys/current describes the key in the header with its customer; an IdToken there is 400, none 401', async () => {
    const created = await createKey(w, { permissions: ['event.read'] });
    const { key, ...listed } = created;
    expect(await get('/api-keys/current', bearer(key))).toMatchObject({ status: 200, body: { ...listed, last_used: expect.any(Number), customer_id: CUSTOMER } });
    expect(await get('/api-keys/current', asAdmin(w))).toMatchObject({
      status: 400,
      body: error('Bad Request', 'The Authorization header holds an IdToken, not an API key: an IdToken names its customer in its claim "customer_id".'),
    });
    expect(await call(w.url, 'GET', '/api-keys/current')).toMatchObject({ status: 401, body: NO_HEADER });
    await w.t.admin.delete(`/${CUSTOMER}/api-keys/${created.id}`);
    expect((await get('/api-keys/current', bearer(key))).status).toBe(401);
  });

  it('the audit log records keys created and revoked, by a user or by a key, and no refused change', async () => {
    const t0 = Date.now();
    w.clock.freeze(t0);
    try {
      const a = await createKey(w, { name: 'audit-a', permissions: ['event.read', 'apikey.write'], expires_at: t0 + 86_400_000 });
      w.clock.advance(1);
      const b = await createKey(w, { name: 'audit-b' }, bearer(a.key));
      w.clock.advance(1);
      expect((await call(w.url, 'POST', `/${CUSTOMER}/api-keys`, { authorization: asAdmin(w), json: { name: 'audit-a' } })).status).toBe(409);
      expect((await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${b.id}`, { authorization: bearer(a.key) })).status).toBe(204);
      w.clock.advance(1);
      expect((await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${b.id}`, { authorization: asAdmin(w) })).status).toBe(404);
      expect((await call(w.url, 'DELETE', `/${CUSTOMER}/api-keys/${a.id}`, { authorization: asAdmin(w) })).status).toBe(204);
      w.clock.advance(1); // the log's range ends before now
      const entries = async (action: string) =>
        ((await get(`/${CUSTOMER}/audit-log?action=${action}`, asAdmin(w))).body as { items: { id: string; target: { id: string } }[] }).items
          .filter((item) => [a.id, b.id].includes(item.target.id))
          .map(({ id: _id, ...rest }) => rest);
      const admin = { type: 'user', id: w.admin.id, email: w.admin.email };
      const byKey = { type: 'api_key', id: a.id };
      expect(await entries('apikey.created')).toEqual([
        { time: t0 + 1, action: 'apikey.created', actor: byKey, target: { type: 'api_key', id: b.id }, ip: '127.0.0.1', details: { name: 'audit-b', permissions: ['event.read', 'apikey.write'], expires_at: t0 + 86_400_000 } },
        { time: t0, action: 'apikey.created', actor: admin, target: { type: 'api_key', id: a.id }, ip: '127.0.0.1', details: { name: 'audit-a', permissions: ['event.read', 'apikey.write'], expires_at: t0 + 86_400_000 } },
      ]);
      expect(await entries('apikey.revoked')).toEqual([
        { time: t0 + 3, action: 'apikey.revoked', actor: admin, target: { type: 'api_key', id: a.id }, ip: '127.0.0.1', details: { name: 'audit-a' } },
        { time: t0 + 2, action: 'apikey.revoked', actor: byKey, target: { type: 'api_key', id: b.id }, ip: '127.0.0.1', details: { name: 'audit-b' } },
      ]);
    } finally {
      w.clock.reset();
    }
  });

  it('the store keeps the SHA-256 of the key, never the key', async () => {
    const { id, key } = await createKey(w);
    const { store } = w.t.server.ctx;
    const hash = createHash('sha256').update(key).digest('hex');
    const record = await store.apiKeys.byHash(hash);
    expect(record).toMatchObject({ id, key_hash: hash, created_by: w.admin.id });
    expect(JSON.stringify(record)).not.toContain(key.slice(4));
    expect(JSON.stringify(await store.apiKeys.page(CUSTOMER, null, 500))).not.toContain(key.slice(4));
    expect(await store.apiKeys.byHash(key)).toBeUndefined();
  });
});
