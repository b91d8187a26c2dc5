// Retention over real HTTP (DESIGN.md "Operations on one box"; docs/retention.md): GET and PUT
// /{customer_id}/retention with exact bodies, who may call them, the audit entry of a change, and
// the deletion a change starts: exactly the events older than the period go, the last deletion is
// shown, another customer's events stay.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../../src/domain/retention.js';
import { eventRow } from '../../helpers/events.js';
import { call } from '../../helpers/http.js';
import { NO_HEADER, error, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER } from '../../helpers/server.js';
import { asAdmin, asUser, bearer, lacks } from '../../helpers/users.js';
import { OTHER_CUSTOMER, USER_PASSWORD, addCustomer, startFoundation, type Foundation } from '../../helpers/world.js';

const FOREVER = { events_days: null, last_deletion: null };

interface RetentionWorld extends Foundation {
  /** A customer of the row's own (created on first use) and its administrator's Authorization header. */
  tenant(name: string): Promise<{ path: string; auth: string }>;
}

async function startWorld(): Promise<RetentionWorld> {
  const w = await startFoundation();
  const tenants = new Map<string, Promise<{ path: string; auth: string }>>();
  const create = async (name: string) => {
    const email = `admin@${name}.example`;
    await addCustomer(w.t, name, email, USER_PASSWORD);
    return { path: `/${name}/retention`, auth: bearer(await w.t.login(email, USER_PASSWORD)) };
  };
  return {
    ...w,
    tenant(name) {
      if (!tenants.has(name)) tenants.set(name, create(name));
      return tenants.get(name)!;
    },
  };
}

const PATH = `/${CUSTOMER}/retention`;
/** The customer whose retention no row changes: refused calls must leave it for ever. */
const unchanged = async (_answer: unknown, w: RetentionWorld) =>
  expect((await call(w.url, 'GET', PATH, { authorization: asAdmin(w) })).body).toEqual(FOREVER);

/** A row that sets the retention of a customer of its own and expects `body` back. */
function setOwn(name: string, json: object, body: object): Scenario<RetentionWorld> {
  return {
    name,
    method: 'PUT',
    path: async (w) => (await w.tenant(name)).path,
    auth: async (w) => (await w.tenant(name)).auth,
    json,
    status: 200,
    body,
    // What GET answers afterwards.
    check: async (answer, w) => {
      const { path, auth } = await w.tenant(name);
      expect((await call(w.url, 'GET', path, { authorization: auth })).body).toMatchObject({ events_days: (answer.body as { events_days: unknown }).events_days });
    },
  };
}

/** A PUT on the unchanged customer that is refused with 400 and `details`. */
function refused(name: string, json: unknown, details: string): Scenario<RetentionWorld> {
  return { name, method: 'PUT', path: PATH, auth: asAdmin, json: json as object, status: 400, body: error('Bad Request', details), check: unchanged };
}

const otherCustomer = error('Forbidden', `Your account belongs to customer "${OTHER_CUSTOMER}" and has no access to customer "${CUSTOMER}".`);

scenarioTable<RetentionWorld>('GET /{customer_id}/retention', startWorld, [
  { name: 'a customer that never set it: events kept for ever, no deletion yet', method: 'GET', path: PATH, auth: asAdmin, status: 200, body: FOREVER },
  { name: 'USER_ROLE: 403, it lacks retention.read', method: 'GET', path: PATH, auth: asUser, status: 403, body: lacks('retention.read') },
  { name: "another customer's administrator: 403", method: 'GET', path: PATH, auth: (w) => bearer(w.otherAdmin.token), status: 403, body: otherCustomer },
  { name: 'no Authorization header: 401', method: 'GET', path: PATH, status: 401, body: NO_HEADER },
  {
    name: 'an API key with retention.read: 200',
    method: 'GET',
    path: PATH,
    auth: async (w) => bearer((await w.t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: 'retention-reader', permissions: ['retention.read'] })).key),
    status: 200,
    body: FOREVER,
  },
]);

scenarioTable<RetentionWorld>('PUT /{customer_id}/retention', startWorld, [
  setOwn('thirty-days', { events_days: 30 }, { events_days: 30, last_deletion: null }),
  setOwn('one-day', { events_days: 1 }, { events_days: 1, last_deletion: null }),
  setOwn('a-century', { events_days: 36_500 }, { events_days: 36_500, last_deletion: null }),
  setOwn('for-ever', { events_days: null }, FOREVER),
  refused('0 days: 400', { events_days: 0 }, 'Body field "events_days" must be >= 1.'),
  refused('negative: 400', { events_days: -7 }, 'Body field "events_days" must be >= 1.'),
  refused('more than 100 years: 400', { events_days: 36_501 }, 'Body field "events_days" must be <= 36500.'),
  refused('1e300: 400', { events_days: 1e300 }, 'Body field "events_days" must be <= 36500.'),
  refused('a fraction: 400', { events_days: 1.5 }, 'Body field "events_days" must be integer.'),
  refused('a string: 400', { events_days: '30' }, 'Body field "events_days" must be integer.'),
  refused('a boolean: 400', { events_days: true }, 'Body field "events_days" must be integer.'),
  refused('no events_days: 400', {}, 'Missing body field "events_days".'),
  refused('a read-only field: 400', { events_days: 30, last_deletion: null }, 'Unknown body field "last_deletion": it is not part of this call.'),
  refused('another field: 400', { events_days: 30, audit_days: 30 }, 'Unknown body field "audit_days": it is not part of this call.'),
  refused('an array: 400', [30], 'The request body must be a JSON object.'),
  {
    name: 'no body: 400',
    method: 'PUT',
    path: PATH,
    auth: asAdmin,
    status: 400,
    body: error('Bad Request', 'The request body must be a JSON object.'),
    check: unchanged,
  },
  { name: 'USER_ROLE: 403, it lacks retention.write', method: 'PUT', path: PATH, auth: asUser, json: { events_days: 30 }, status: 403, body: lacks('retention.write'), check: unchanged },
  { name: "another customer's administrator: 403", method: 'PUT', path: PATH, auth: (w) => bearer(w.otherAdmin.token), json: { events_days: 30 }, status: 403, body: otherCustomer, check: unchanged },
  {
    name: "the administrator on another customer's path: 403",
    method: 'PUT',
    path: `/${OTHER_CUSTOMER}/retention`,
    auth: asAdmin,
    json: { events_days: 30 },
    status: 403,
    body: error('Forbidden', `Your account belongs to customer "${CUSTOMER}" and has no access to customer "${OTHER_CUSTOMER}".`),
    check: async (_answer, w) => expect((await w.otherAdmin.client.get(`/${OTHER_CUSTOMER}/retention`))).toEqual(FOREVER),
  },
  { name: 'no Authorization header: 401', method: 'PUT', path: PATH, json: { events_days: 30 }, status: 401, body: NO_HEADER, check: unchanged },
  {
    name: 'an API key with retention.read only: 403',
    method: 'PUT',
    path: PATH,
    auth: async (w) => bearer((await w.t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: 'retention-read-only', permissions: ['retention.read'] })).key),
    json: { events_days: 30 },
    status: 403,
    body: error('Forbidden', 'The API key "retention-read-only" lacks the permission "retention.write" this call needs; create a key with it.'),
    check: unchanged,
  },
]);

describe('a change of retention', () => {
  let w: Foundation;
  beforeAll(async () => {
    w = await startFoundation();
  });
  afterAll(async () => w?.close());

  it('is audited in its transaction (retention.set, with the previous period); a refused one is not', async () => {
    const t0 = Date.now();
    w.clock.freeze(t0);
    try {
      expect((await call(w.url, 'PUT', PATH, { authorization: asAdmin(w), json: { events_days: 90 } })).status).toBe(200);
      w.clock.advance(1);
      expect((await call(w.url, 'PUT', PATH, { authorization: asAdmin(w), json: { events_days: 0 } })).status).toBe(400);
      expect((await call(w.url, 'PUT', PATH, { authorization: asUser(w), json: { events_days: 1 } })).status).toBe(403);
      expect((await call(w.url, 'PUT', PATH, { authorization: asAdmin(w), json: { events_days: null } })).status).toBe(200);
      w.clock.advance(1);
      const log = await w.admin.client.get<{ items: object[] }>(`/${CUSTOMER}/audit-log`, { action: 'retention.set' });
      const actor = { type: 'user', id: w.admin.id, email: w.admin.email };
      const target = { type: 'retention', id: CUSTOMER };
      expect(log.items).toEqual([
        { id: expect.any(String), time: t0 + 1, action: 'retention.set', actor, target, ip: '127.0.0.1', details: { events_days: null, previous_events_days: 90 } },
        { id: expect.any(String), time: t0, action: 'retention.set', actor, target, ip: '127.0.0.1', details: { events_days: 90, previous_events_days: null } },
      ]);
    } finally {
      w.clock.reset();
    }
  });

  it('deletes exactly the events older than the period soon after, keeps the rest and other customers’ events, and shows the deletion', async () => {
    const now = Date.now();
    w.clock.freeze(now);
    try {
      await w.t.server.ctx.retention.idle();
      const cutoff = now - 30 * DAY_MS;
      const old = Array.from({ length: 3000 }, (_, i) => eventRow({ created: cutoff - 1 - i * 1000 }));
      const atCutoff = [eventRow({ created: cutoff - 1, id: `a-${randomUUID()}` }), eventRow({ created: cutoff }), eventRow({ created: cutoff }), eventRow({ created: cutoff + 1 })];
      const young = [eventRow({ created: now - 1 }), eventRow({ created: now })];
      await w.t.server.ctx.store.events.insert(CUSTOMER, [...old, ...atCutoff, ...young]);
      await w.t.server.ctx.store.events.insert(OTHER_CUSTOMER, old.slice(0, 5).map((row) => ({ ...row, id: randomUUID() })));
      const admin = w.admin.client;

      // The answer shows the deletion before this change (the previous test's, which found nothing).
      const before = await admin.get<{ last_deletion: object }>(PATH);
      expect(await admin.put(PATH, { events_days: 30 })).toEqual({ events_days: 30, last_deletion: before.last_deletion });
      await w.t.server.ctx.retention.idle();

      const list = await admin.get<{ items: { id: string; created: number }[] }>(`/${CUSTOMER}/events`, { start_time_millis: 0, end_time_millis: now + 1 });
      // created >= cutoff stays (half-open): the two at the cutoff, the one after it, the young ones.
      expect(list.items.map((item) => item.created)).toEqual([now, now - 1, cutoff + 1, cutoff, cutoff]);
      const retention = await admin.get<{ last_deletion: { batches: number; longest_batch_ms: number } }>(PATH);
      expect(retention).toEqual({
        events_days: 30,
        last_deletion: { started: now, finished: now, cutoff, deleted: 3001, batches: expect.any(Number), longest_batch_ms: expect.any(Number) },
      });
      expect(retention.last_deletion.batches).toBeGreaterThan(1);
      expect(retention.last_deletion.longest_batch_ms).toBeGreaterThan(0);
      const others = await w.otherAdmin.client.get<{ items: unknown[] }>(`/${OTHER_CUSTOMER}/events`, { start_time_millis: 0, end_time_millis: now });
      expect(others.items).toHaveLength(5);

      // A later pass (the next round, a day on) deletes what aged past the period meanwhile.
      w.clock.freeze(now + DAY_MS + 1);
      const pass = await w.t.server.ctx.retention.run();
      expect(pass.ran && pass.customers.map((c) => [c.customerId, c.deletion.deleted])).toEqual([[CUSTOMER, 3]]);
    } finally {
      w.clock.reset();
    }
  });
});
