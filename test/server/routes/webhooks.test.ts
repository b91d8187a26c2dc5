// Webhooks (DESIGN.md "Webhooks and alerts"; docs/webhooks.md): create (the secret once), list,
// read, change, delete, the actions, `webhook.write`, the audit log, and the URL rules.
import { describe, expect, it } from 'vitest';
import { error, NO_HEADER, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER } from '../../helpers/server.js';
import { UUID } from '../../helpers/patterns.js';
import { asAdmin, asUser, bearer, lacks } from '../../helpers/users.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';
import { startTestServer } from '../../helpers/server.js';
import { call } from '../../helpers/http.js';

/** A receiver address no DNS is asked about (TEST-NET-3, RFC 5737). */
const HOOK = 'https://203.0.113.10/hook';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

interface Created {
  webhook_id: string;
  secret: string;
}

let made = 0;
async function createWebhook(w: Foundation, body: Record<string, unknown> = {}): Promise<Created> {
  const answer = await call(w.url, 'POST', `/${CUSTOMER}/webhooks`, { authorization: asAdmin(w), json: { url: `${HOOK}/${++made}`, event_types: ['event.scan'], ...body } });
  expect(answer.status, answer.text).toBe(201);
  return answer.body as Created;
}

const badRequest = (details: string) => error('Bad Request', details);
const unknownWebhook = error('Not Found', 'Webhook "nope" does not exist.');
const refusedUrl = (reason: string) => badRequest(`Body field "url" is refused: ${reason}.`);

const crud: Scenario<Foundation>[] = [
  {
    name: 'create: 201, the secret once, enabled, from the given fields',
    method: 'POST',
    path: `/${CUSTOMER}/webhooks`,
    auth: asAdmin,
    json: { url: HOOK, event_types: ['event.scan', 'alert.opened'], description: 'line 4' },
    status: 201,
    check: (answer) => {
      expect(answer.body).toEqual({
        webhook_id: expect.stringMatching(UUID),
        url: HOOK,
        event_types: ['event.scan', 'alert.opened'],
        description: 'line 4',
        enabled: true,
        disabled_reason: null,
        created: expect.any(Number),
        last_updated: expect.any(Number),
        secret: expect.stringMatching(SECRET),
      });
    },
  },
  { name: 'create: USER_ROLE lacks webhook.write: 403', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asUser, json: { url: HOOK, event_types: ['event.scan'] }, status: 403, body: lacks('webhook.write') },
  { name: 'create: no Authorization: 401', method: 'POST', path: `/${CUSTOMER}/webhooks`, json: { url: HOOK, event_types: ['event.scan'] }, status: 401, body: NO_HEADER },
  {
    name: 'create: another customer’s admin: 403',
    method: 'POST',
    path: `/${CUSTOMER}/webhooks`,
    auth: (w) => bearer(w.otherAdmin.token),
    json: { url: HOOK, event_types: ['event.scan'] },
    status: 403,
    body: error('Forbidden', `Your account belongs to customer "${OTHER_CUSTOMER}" and has no access to customer "${CUSTOMER}".`),
  },
  {
    name: 'create: an unknown event type: 400 naming it',
    method: 'POST',
    path: `/${CUSTOMER}/webhooks`,
    auth: asAdmin,
    json: { url: HOOK, event_types: ['event.scan', 'event.everything'] },
    status: 400,
    fields: { title: 'Bad Request', details: expect.stringContaining('event_types') },
  },
  { name: 'create: no event types: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: HOOK, event_types: [] }, status: 400, fields: { title: 'Bad Request', details: expect.stringContaining('event_types') } },
  { name: 'create: a field it does not define: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: HOOK, event_types: ['event.scan'], secret: 'whsec_mine' }, status: 400, fields: { title: 'Bad Request', details: expect.stringContaining('secret') } },
  { name: 'create: ftp: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'ftp://203.0.113.10/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('its scheme "ftp" is neither https nor http') },
  { name: 'create: not a URL: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'hooks', event_types: ['event.scan'] }, status: 400, body: refusedUrl('"hooks" is not an absolute URL') },
  { name: 'create: credentials in the URL: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'https://me:pw@203.0.113.10/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('it carries credentials: the signature authenticates the sender') },
  { name: 'create: loopback IPv4 without --webhook-allow-loopback: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://127.0.0.1:9000/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('127.0.0.1 is loopback (allowed only with serve --webhook-allow-loopback)') },
  { name: 'create: loopback IPv6: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://[::1]:9000/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('::1 is loopback (allowed only with serve --webhook-allow-loopback)') },
  { name: 'create: localhost: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://localhost:9000/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('localhost is loopback (allowed only with serve --webhook-allow-loopback)') },
  { name: 'create: link-local IPv4 (cloud metadata): 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://169.254.169.254/latest', event_types: ['event.scan'] }, status: 400, body: refusedUrl('169.254.169.254 is link-local') },
  { name: 'create: link-local IPv6: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://[fe80::1]/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('fe80::1 is link-local') },
  { name: 'create: unspecified IPv4: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://0.0.0.0/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl('0.0.0.0 is unspecified') },
  { name: 'create: unspecified IPv6: 400', method: 'POST', path: `/${CUSTOMER}/webhooks`, auth: asAdmin, json: { url: 'http://[::]/x', event_types: ['event.scan'] }, status: 400, body: refusedUrl(':: is unspecified') },
  {
    name: 'read: 200, no secret',
    method: 'GET',
    path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}`,
    auth: asAdmin,
    status: 200,
    check: (answer) => expect(Object.keys(answer.body as object)).toEqual(['webhook_id', 'url', 'event_types', 'description', 'enabled', 'disabled_reason', 'created', 'last_updated']),
  },
  { name: 'read: unknown: 404', method: 'GET', path: `/${CUSTOMER}/webhooks/nope`, auth: asAdmin, status: 404, body: unknownWebhook },
  { name: 'read: USER_ROLE: 403', method: 'GET', path: `/${CUSTOMER}/webhooks/nope`, auth: asUser, status: 403, body: lacks('webhook.write') },
  {
    name: 'list: 200, the wrapper, no secrets',
    method: 'GET',
    path: `/${CUSTOMER}/webhooks?limit=1`,
    auth: asAdmin,
    status: 200,
    check: (answer) => {
      const body = answer.body as { items: object[]; links: { next?: string }; metadata: object };
      expect(body.items).toHaveLength(1);
      expect(body.items[0]).not.toHaveProperty('secret');
      expect(body.links.next).toMatch(/^\/acme\/webhooks\?next_token=.+&limit=1$/);
      expect(body.metadata).toEqual({ description: 'Webhooks of the customer', size: 1, filters: [] });
    },
  },
  {
    name: 'update: 200, only the given fields change',
    method: 'PATCH',
    path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w, { description: 'before' })).webhook_id}`,
    auth: asAdmin,
    json: { event_types: ['alert.opened', 'alert.resolved'], enabled: false },
    status: 200,
    fields: { event_types: ['alert.opened', 'alert.resolved'], enabled: false, description: 'before' },
  },
  { name: 'update: an empty body: 400', method: 'PATCH', path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}`, auth: asAdmin, json: {}, status: 400, fields: { title: 'Bad Request' } },
  { name: 'update: a refused URL: 400', method: 'PATCH', path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}`, auth: asAdmin, json: { url: 'http://169.254.1.1/' }, status: 400, body: refusedUrl('169.254.1.1 is link-local') },
  { name: 'update: unknown: 404', method: 'PATCH', path: `/${CUSTOMER}/webhooks/nope`, auth: asAdmin, json: { enabled: true }, status: 404, body: unknownWebhook },
  { name: 'delete: 204', method: 'DELETE', path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}`, auth: asAdmin, status: 204 },
  { name: 'delete: unknown: 404', method: 'DELETE', path: `/${CUSTOMER}/webhooks/nope`, auth: asAdmin, status: 404, body: unknownWebhook },
  { name: 'delete: USER_ROLE: 403', method: 'DELETE', path: `/${CUSTOMER}/webhooks/nope`, auth: asUser, status: 403, body: lacks('webhook.write') },
  { name: 'test: 202, a PENDING webhook.test', method: 'POST', path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}/test`, auth: asAdmin, status: 202, fields: { type: 'webhook.test', status: 'PENDING', attempts: 0 } },
  { name: 'test: unknown: 404', method: 'POST', path: `/${CUSTOMER}/webhooks/nope/test`, auth: asAdmin, status: 404, body: unknownWebhook },
  { name: 'deliveries: 200, none yet', method: 'GET', path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}/deliveries`, auth: asAdmin, status: 200, body: { items: [], links: {}, metadata: { description: 'Deliveries of the webhook, newest first', size: 0, filters: [] } } },
  { name: 'deliveries: unknown: 404', method: 'GET', path: `/${CUSTOMER}/webhooks/nope/deliveries`, auth: asAdmin, status: 404, body: unknownWebhook },
  { name: 'replay: 202', method: 'POST', path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}/replay`, auth: asAdmin, json: { since: 0 }, status: 202, fields: { since: 0 } },
  {
    name: 'replay: since in the future: 400',
    method: 'POST',
    path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}/replay`,
    auth: asAdmin,
    json: { since: 4_102_444_800_000 },
    status: 400,
    body: badRequest('Body field "since" (2100-01-01T00:00:00.000Z) is in the future: give a past time in milliseconds since the epoch.'),
  },
  { name: 'replay: unknown: 404', method: 'POST', path: `/${CUSTOMER}/webhooks/nope/replay`, auth: asAdmin, json: { since: 0 }, status: 404, body: unknownWebhook },
  {
    name: 'rotate-secret: 200, a new secret',
    method: 'POST',
    path: async (w) => `/${CUSTOMER}/webhooks/${(await createWebhook(w)).webhook_id}/rotate-secret`,
    auth: asAdmin,
    status: 200,
    fields: { secret: expect.stringMatching(SECRET), enabled: true },
  },
  { name: 'rotate-secret: unknown: 404', method: 'POST', path: `/${CUSTOMER}/webhooks/nope/rotate-secret`, auth: asAdmin, status: 404, body: unknownWebhook },
];

scenarioTable('/{c}/webhooks', startFoundation, crud);

describe('webhooks in the audit log', () => {
  it('records creation, change, rotation, replay and deletion, never the secret', async () => {
    const w = await startFoundation();
    try {
      const { webhook_id, secret } = await createWebhook(w);
      await w.admin.client.patch(`/${CUSTOMER}/webhooks/${webhook_id}`, { description: 'x' });
      await w.admin.client.post(`/${CUSTOMER}/webhooks/${webhook_id}/rotate-secret`);
      await w.admin.client.post(`/${CUSTOMER}/webhooks/${webhook_id}/replay`, { since: 0 });
      await w.admin.client.delete(`/${CUSTOMER}/webhooks/${webhook_id}`);
      const log = await w.admin.client.get<{ items: { action: string; target: object; details: object }[] }>(`/${CUSTOMER}/audit-log?limit=5`);
      expect(log.items.map((e) => [e.action, e.target, e.details])).toEqual([
        ['webhook.deleted', { type: 'webhook', id: webhook_id }, { url: `${HOOK}/${made}` }],
        ['webhook.replayed', { type: 'webhook', id: webhook_id }, { since: 0 }],
        ['webhook.secret_rotated', { type: 'webhook', id: webhook_id }, undefined],
        ['webhook.updated', { type: 'webhook', id: webhook_id }, { fields: ['description'] }],
        ['webhook.created', { type: 'webhook', id: webhook_id }, { url: `${HOOK}/${made}`, event_types: ['event.scan'] }],
      ]);
      expect(JSON.stringify(log)).not.toContain(secret.slice(6));
    } finally {
      await w.close();
    }
  });
});

describe('serve --webhook-allow-loopback', () => {
  it('allows loopback URLs, never link-local or unspecified ones', async () => {
    const t = await startTestServer({ webhookAllowLoopback: true });
    try {
      const post = (url: string) => call(t.url, 'POST', `/${CUSTOMER}/webhooks`, { authorization: bearer(t.adminToken), json: { url, event_types: ['event.scan'] } });
      expect((await post('http://127.0.0.1:9000/x')).status).toBe(201);
      expect((await post('http://localhost:9000/x')).status).toBe(201);
      expect((await post('http://[::1]:9000/x')).status).toBe(201);
      expect(await post('http://169.254.169.254/x')).toMatchObject({ status: 400, body: refusedUrl('169.254.169.254 is link-local') });
      expect(await post('http://0.0.0.0/x')).toMatchObject({ status: 400, body: refusedUrl('0.0.0.0 is unspecified') });
    } finally {
      await t.close();
    }
  });
});
