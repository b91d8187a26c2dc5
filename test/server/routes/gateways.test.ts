import { beforeAll, describe, expect, it } from 'vitest';
import { selectColumn } from '../../helpers/store-rows.js';
import { OTHER_CUSTOMER_REFUSED, T0, by, fresh, useFixture, type Fixture } from '../../helpers/gateways.js';
import { call } from '../../helpers/http.js';
import { UUID } from '../../helpers/patterns.js';
import { NO_HEADER, scenarioRows } from '../../helpers/scenarios.js';
import { lacks } from '../../helpers/users.js';

const dock1 = { name: 'Dock 1', usecase: 'inbound', station: 'dock-1' };

describe('POST /{customer_id}/gateways', () => {
  const { fixture } = useFixture();
  scenarioRows(
    [
      {
        name: 'creates a gateway: 201, every field of spec 2.1, ETag "1"',
        method: 'POST',
        path: '/acme/gateways',
        auth: by.admin,
        json: dock1,
        status: 201,
        check: (r, f) => {
          const body = r.body as { id: string };
          expect(body.id).toMatch(UUID);
          expect(body).toEqual(fresh(body.id, 'Dock 1', 'inbound', 'dock-1'));
          expect(Object.keys(body)).toEqual(Object.keys(fresh('', '', '', '')));
          expect(r.headers.etag).toBe('"1"');
          f.ids.dock1 = body.id;
        },
      },
      {
        name: 'a name already used: 409',
        method: 'POST',
        path: '/acme/gateways',
        auth: by.admin,
        json: { ...dock1, station: 'elsewhere' },
        status: 409,
        body: { title: 'Conflict', details: 'A gateway named "Dock 1" already exists.' },
      },
      {
        name: 'names are case-sensitive: "dock 1" is another name',
        method: 'POST',
        path: '/acme/gateways',
        auth: by.admin,
        json: { ...dock1, name: 'dock 1' },
        status: 201,
      },
      {
        name: 'another customer may use the same name',
        method: 'POST',
        path: '/other/gateways',
        auth: by.other,
        json: dock1,
        status: 201,
      },
      { name: 'missing name: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, json: { usecase: 'u', station: 's' }, status: 400, body: { title: 'Bad Request', details: 'Missing body field "name".' } },
      { name: 'missing station: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, json: { name: 'n', usecase: 'u' }, status: 400, body: { title: 'Bad Request', details: 'Missing body field "station".' } },
      {
        name: 'a field the call does not define (id): 400',
        method: 'POST',
        path: '/acme/gateways',
        auth: by.admin,
        json: { ...dock1, name: 'Dock 9', id: '6f1c1c1e-0d4e-4d0e-9a51-1f3b2f0a7c11' },
        status: 400,
        body: { title: 'Bad Request', details: 'Unknown body field "id": it is not part of this call.' },
      },
      { name: 'usecase not a string: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, json: { ...dock1, usecase: { text: 'u' } }, status: 400, body: { title: 'Bad Request', details: 'Body field "usecase" must be string.' } },
      { name: 'empty name: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, json: { ...dock1, name: '' }, status: 400, body: { title: 'Bad Request', details: 'Body field "name" must NOT have fewer than 1 characters.' } },
      { name: 'blank name: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, json: { ...dock1, name: '   ' }, status: 400, body: { title: 'Bad Request', details: 'Body field "name" must not be blank.' } },
      {
        name: 'a tab in the station: 400',
        method: 'POST',
        path: '/acme/gateways',
        auth: by.admin,
        json: { ...dock1, name: 'Dock 9', station: 'a\tb' },
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "station" must not contain control characters (tabs, line breaks).' },
      },
      { name: 'name over 200 characters: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, json: { ...dock1, name: 'x'.repeat(201) }, status: 400, body: { title: 'Bad Request', details: 'Body field "name" must NOT have more than 200 characters.' } },
      { name: 'no json: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, status: 400, body: { title: 'Bad Request', details: 'The request body must be a JSON object.' } },
      { name: 'malformed JSON: 400', method: 'POST', path: '/acme/gateways', auth: by.admin, raw: '{"name":', contentType: 'application/json', status: 400, check: (r) => expect((r.body as { details: string }).details).toMatch(/^The request body is not valid JSON/) },
      { name: 'no Authorization: 401', method: 'POST', path: '/acme/gateways', json: dock1, status: 401, body: NO_HEADER },
      { name: 'USER_ROLE lacks gateway.write: 403', method: 'POST', path: '/acme/gateways', auth: by.user, json: { ...dock1, name: 'Dock 7' }, status: 403, body: lacks('gateway.write') },
      { name: "another customer's path: 403", method: 'POST', path: '/acme/gateways', auth: by.other, json: { ...dock1, name: 'Dock 7' }, status: 403, body: OTHER_CUSTOMER_REFUSED },
    ],
    fixture,
  );

  it('refused creations stored nothing', async () => {
    const list = await call(fixture().t.url, 'GET', '/acme/gateways', { token: fixture().tokens.admin });
    expect((list.body as { items: { name: string }[] }).items.map((g) => g.name).sort()).toEqual(['Dock 1', 'dock 1']);
  });
});

describe('GET /{customer_id}/gateways', () => {
  const { fixture } = useFixture();
  const made: ReturnType<typeof fresh>[] = [];
  beforeAll(async () => {
    const f = fixture();
    for (const name of ['A', 'B', 'C']) {
      const r = await call(f.t.url, 'POST', '/acme/gateways', { token: f.tokens.admin, json: { name, usecase: 'u', station: 's' } });
      made.push(r.body as ReturnType<typeof fresh>);
    }
    // All share one millisecond (the clock stands still): the id orders them.
    made.sort((a, b) => (a.id < b.id ? -1 : 1));
    await call(f.t.url, 'POST', '/other/gateways', { token: f.tokens.other, json: { name: 'Z', usecase: 'u', station: 's' } });
  });

  scenarioRows(
    [
      {
        name: 'lists the customer\'s gateways oldest first (then by id), in the list wrapper',
        method: 'GET',
        path: '/acme/gateways',
        auth: by.admin,
        status: 200,
        body: () => ({ items: made, links: {}, metadata: { description: 'Gateways of the customer', size: 3, filters: [] } }),
      },
      { name: 'USER_ROLE may list (gateway.read)', method: 'GET', path: '/acme/gateways', auth: by.user, status: 200 },
      {
        name: 'limit=2 gives two and a next link; the next link gives the rest and no further link',
        method: 'GET',
        path: '/acme/gateways?limit=2',
        auth: by.admin,
        status: 200,
        check: async (r, f) => {
          const first = r.body as { items: unknown[]; links: { next: string }; metadata: { size: number } };
          expect(first.items).toEqual(made.slice(0, 2));
          expect(first.metadata.size).toBe(2);
          expect(first.links.next).toMatch(/^\/acme\/gateways\?next_token=[A-Za-z0-9_-]+&limit=2$/);
          const second = await call(f.t.url, 'GET', first.links.next, { token: f.tokens.admin });
          expect(second.body).toEqual({ items: made.slice(2), links: {}, metadata: { description: 'Gateways of the customer', size: 1, filters: [] } });
        },
      },
      { name: 'limit=500 is allowed', method: 'GET', path: '/acme/gateways?limit=500', auth: by.admin, status: 200 },
      { name: 'limit=0: 400', method: 'GET', path: '/acme/gateways?limit=0', auth: by.admin, status: 400, body: { title: 'Bad Request', details: 'Query parameter "limit" must be >= 1.' } },
      { name: 'limit=501: 400', method: 'GET', path: '/acme/gateways?limit=501', auth: by.admin, status: 400, body: { title: 'Bad Request', details: 'Query parameter "limit" must be <= 500.' } },
      { name: 'limit=ten: 400', method: 'GET', path: '/acme/gateways?limit=ten', auth: by.admin, status: 400, body: { title: 'Bad Request', details: 'Query parameter "limit" must be integer.' } },
      {
        name: 'a damaged next_token: 400',
        method: 'GET',
        path: '/acme/gateways?next_token=not-a-token',
        auth: by.admin,
        status: 400,
        body: { title: 'Bad Request', details: 'Query parameter "next_token" is not a token of this gateway list.' },
      },
      {
        name: "another customer's next_token: 400",
        method: 'GET',
        path: `/acme/gateways?next_token=${Buffer.from(JSON.stringify({ kind: 'gateways', customer: 'other', after: { created: 0, id: '' } })).toString('base64url')}`,
        auth: by.admin,
        status: 400,
        body: { title: 'Bad Request', details: 'Query parameter "next_token" is not a token of this gateway list.' },
      },
      { name: 'no Authorization: 401', method: 'GET', path: '/acme/gateways', status: 401, body: NO_HEADER },
      { name: "another customer's path: 403", method: 'GET', path: '/acme/gateways', auth: by.other, status: 403, body: OTHER_CUSTOMER_REFUSED },
    ],
    fixture,
  );
});

describe('POST /{customer_id}/gateways/bulk-create', () => {
  const { fixture } = useFixture();
  const count = async (f: Fixture) =>
    (await selectColumn(f.t.server, "SELECT count(*) FROM gateways WHERE customer_id = 'acme'"))[0] as number;

  scenarioRows(
    [
      {
        name: 'creates all of them in request order: 201 with the array',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: [{ name: 'B1', usecase: 'u1', station: 's1' }, { name: 'B2', usecase: 'u2', station: 's2' }] },
        status: 201,
        check: (r) => {
          const created = r.body as { id: string }[];
          expect(created).toEqual([fresh(created[0]!.id, 'B1', 'u1', 's1'), fresh(created[1]!.id, 'B2', 'u2', 's2')]);
        },
      },
      {
        name: 'one name already used: 409 and none created',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: [{ name: 'B3', usecase: 'u', station: 's' }, { name: 'B2', usecase: 'u', station: 's' }] },
        status: 409,
        body: { title: 'Conflict', details: 'A gateway named "B2" already exists.' },
        check: async (_r, f) => expect(await count(f)).toBe(2),
      },
      {
        name: 'a name twice within the request: 409 and none created',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: [{ name: 'B4', usecase: 'u', station: 's' }, { name: 'B5', usecase: 'u', station: 's' }, { name: 'B4', usecase: 'v', station: 't' }] },
        status: 409,
        body: { title: 'Conflict', details: 'Gateway names must be unique: "B4" appears more than once in this request.' },
        check: async (_r, f) => expect(await count(f)).toBe(2),
      },
      {
        name: '500 at once: 201',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: Array.from({ length: 500 }, (_, i) => ({ name: `G${i}`, usecase: 'u', station: `s${i}` })) },
        status: 201,
        check: async (r, f) => {
          expect((r.body as unknown[]).length).toBe(500);
          expect(await count(f)).toBe(502);
        },
      },
      {
        name: '501 at once: 400',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: Array.from({ length: 501 }, (_, i) => ({ name: `H${i}`, usecase: 'u', station: 's' })) },
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways" must NOT have more than 500 items.' },
      },
      { name: 'an empty array: 400', method: 'POST', path: '/acme/gateways/bulk-create', auth: by.admin, json: { gateways: [] }, status: 400, body: { title: 'Bad Request', details: 'Body field "gateways" must NOT have fewer than 1 items.' } },
      { name: 'no gateways field: 400', method: 'POST', path: '/acme/gateways/bulk-create', auth: by.admin, json: {}, status: 400, body: { title: 'Bad Request', details: 'Missing body field "gateways".' } },
      {
        name: 'an element without station: 400 naming it',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: [{ name: 'X', usecase: 'u', station: 's' }, { name: 'Y', usecase: 'u' }] },
        status: 400,
        body: { title: 'Bad Request', details: 'Missing body field "gateways.1.station".' },
      },
      {
        name: 'an element with a line break in the name: 400 naming it',
        method: 'POST',
        path: '/acme/gateways/bulk-create',
        auth: by.admin,
        json: { gateways: [{ name: 'X\nY', usecase: 'u', station: 's' }] },
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways.0.name" must not contain control characters (tabs, line breaks).' },
      },
      { name: 'no Authorization: 401', method: 'POST', path: '/acme/gateways/bulk-create', json: { gateways: [dock1] }, status: 401, body: NO_HEADER },
      { name: 'USER_ROLE: 403', method: 'POST', path: '/acme/gateways/bulk-create', auth: by.user, json: { gateways: [dock1] }, status: 403, body: lacks('gateway.write') },
      { name: "another customer's path: 403", method: 'POST', path: '/acme/gateways/bulk-create', auth: by.other, json: { gateways: [dock1] }, status: 403, body: OTHER_CUSTOMER_REFUSED },
    ],
    fixture,
  );
});

describe('GET, PATCH and DELETE /{customer_id}/gateways/{gateway_id}', () => {
  const { fixture, clock } = useFixture();
  beforeAll(async () => {
    const f = fixture();
    const create = async (token: string, customer: string, name: string) =>
      ((await call(f.t.url, 'POST', `/${customer}/gateways`, { token, json: { name, usecase: 'inbound', station: 'dock' } })).body as { id: string }).id;
    f.ids.g = await create(f.tokens.admin, 'acme', 'Dock 1');
    f.ids.h = await create(f.tokens.admin, 'acme', 'Dock 2');
    f.ids.foreign = await create(f.tokens.other, 'other', 'Foreign');
  });
  const at = (step: number) => T0 + step * 1000;

  scenarioRows(
    [
      {
        name: 'GET by id: 200 with ETag',
        method: 'GET',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.user,
        status: 200,
        body: (f: Fixture) => fresh(f.ids.g!, 'Dock 1', 'inbound', 'dock'),
        check: (r) => expect(r.headers.etag).toBe('"1"'),
      },
      {
        name: 'GET by thing name (the id, any case): 200',
        method: 'GET',
        path: (f) => `/acme/gateways/${f.ids.g!.toUpperCase()}`,
        auth: by.admin,
        status: 200,
        body: (f: Fixture) => fresh(f.ids.g!, 'Dock 1', 'inbound', 'dock'),
      },
      { name: 'GET unknown: 404', method: 'GET', path: '/acme/gateways/nope', auth: by.admin, status: 404, body: { title: 'Not Found', details: 'Gateway "nope" does not exist.' } },
      {
        name: "GET another customer's gateway on our path: 404 (as if it did not exist)",
        method: 'GET',
        path: (f) => `/acme/gateways/${f.ids.foreign}`,
        auth: by.admin,
        status: 404,
        body: (f: Fixture) => ({ title: 'Not Found', details: `Gateway "${f.ids.foreign}" does not exist.` }),
      },
      { name: 'GET without Authorization: 401', method: 'GET', path: (f) => `/acme/gateways/${f.ids.g}`, status: 401, body: NO_HEADER },
      { name: "GET on another customer's path: 403", method: 'GET', path: (f) => `/acme/gateways/${f.ids.g}`, auth: by.other, status: 403, body: OTHER_CUSTOMER_REFUSED },
      {
        name: 'PATCH without If-Match: 200, version 2, last_updated moves',
        method: 'PATCH',
        path: (f) => {
          clock.now = at(1);
          return `/acme/gateways/${f.ids.g}`;
        },
        auth: by.admin,
        json: { station: 'dock-1a' },
        status: 200,
        body: (f: Fixture) => ({ ...fresh(f.ids.g!, 'Dock 1', 'inbound', 'dock-1a'), last_updated: at(1) }),
        check: (r) => expect(r.headers.etag).toBe('"2"'),
      },
      {
        name: 'PATCH with the current If-Match: 200, version 3',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        headers: { 'if-match': '"2"' },
        json: { name: 'Dock 1 north', usecase: 'outbound' },
        status: 200,
        body: (f: Fixture) => ({ ...fresh(f.ids.g!, 'Dock 1 north', 'outbound', 'dock-1a'), last_updated: at(1) }),
        check: (r) => expect(r.headers.etag).toBe('"3"'),
      },
      {
        name: 'PATCH with a stale If-Match: 409, nothing changed',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        headers: { 'if-match': '"2"' },
        json: { station: 'lost update' },
        status: 409,
        body: (f: Fixture) => ({ title: 'Conflict', details: `Gateway "${f.ids.g}" was changed meanwhile: its ETag is now "3", not "2"; read it again and retry.` }),
        check: async (_r, f) => {
          const now = await call(f.t.url, 'GET', `/acme/gateways/${f.ids.g}`, { token: f.tokens.admin });
          expect((now.body as { station: string }).station).toBe('dock-1a');
        },
      },
      {
        name: 'PATCH with a bare version as If-Match: 200',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        headers: { 'if-match': '3' },
        json: { name: 'Dock 1' },
        status: 200,
        check: (r) => expect(r.headers.etag).toBe('"4"'),
      },
      {
        name: 'PATCH If-Match that is not an ETag: 400',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        headers: { 'if-match': 'yesterday' },
        json: { name: 'Dock 1' },
        status: 400,
        body: { title: 'Bad Request', details: 'Header "If-Match" must be the gateway\'s ETag (its version, e.g. "3"), not "yesterday".' },
      },
      {
        name: "PATCH to another gateway's name: 409",
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        json: { name: 'Dock 2' },
        status: 409,
        body: { title: 'Conflict', details: 'A gateway named "Dock 2" already exists.' },
      },
      {
        name: 'PATCH to its own name: 200',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        json: { name: 'Dock 1' },
        status: 200,
      },
      {
        name: 'PATCH with an empty body object: 400',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        json: {},
        status: 400,
        body: { title: 'Bad Request', details: 'The request body changes nothing: send at least one of "name", "usecase", "station".' },
      },
      {
        name: 'PATCH of a field that is not editable (type): 400',
        method: 'PATCH',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        json: { type: 'mobile' },
        status: 400,
        body: { title: 'Bad Request', details: 'Unknown body field "type": it is not part of this call.' },
      },
      { name: 'PATCH a blank station: 400', method: 'PATCH', path: (f) => `/acme/gateways/${f.ids.g}`, auth: by.admin, json: { station: ' ' }, status: 400, body: { title: 'Bad Request', details: 'Body field "station" must not be blank.' } },
      { name: 'PATCH unknown: 404', method: 'PATCH', path: '/acme/gateways/nope', auth: by.admin, json: { name: 'x' }, status: 404, body: { title: 'Not Found', details: 'Gateway "nope" does not exist.' } },
      { name: 'PATCH as USER_ROLE: 403', method: 'PATCH', path: (f) => `/acme/gateways/${f.ids.g}`, auth: by.user, json: { name: 'x' }, status: 403, body: lacks('gateway.write') },
      { name: 'PATCH without Authorization: 401', method: 'PATCH', path: (f) => `/acme/gateways/${f.ids.g}`, json: { name: 'x' }, status: 401, body: NO_HEADER },
      { name: 'DELETE as USER_ROLE: 403', method: 'DELETE', path: (f) => `/acme/gateways/${f.ids.h}`, auth: by.user, status: 403, body: lacks('gateway.write') },
      {
        name: 'DELETE: 204, then the gateway is gone and its name is free',
        method: 'DELETE',
        path: (f) => `/acme/gateways/${f.ids.h}`,
        auth: by.admin,
        status: 204,
        check: async (_r, f) => {
          const get = await call(f.t.url, 'GET', `/acme/gateways/${f.ids.h}`, { token: f.tokens.admin });
          expect(get.status).toBe(404);
          const again = await call(f.t.url, 'POST', '/acme/gateways', { token: f.tokens.admin, json: { name: 'Dock 2', usecase: 'u', station: 's' } });
          expect(again.status).toBe(201);
          const list = await call(f.t.url, 'GET', '/acme/gateways', { token: f.tokens.admin });
          expect((list.body as { items: { id: string }[] }).items.map((g) => g.id)).not.toContain(f.ids.h);
        },
      },
      { name: 'DELETE again: 404', method: 'DELETE', path: (f: Fixture) => `/acme/gateways/${f.ids.h}`, auth: by.admin, status: 404, body: (f: Fixture) => ({ title: 'Not Found', details: `Gateway "${f.ids.h}" does not exist.` }) },
    ],
    fixture,
  );
});
