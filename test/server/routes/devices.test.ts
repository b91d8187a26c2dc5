// GET /{customer_id}/devices and /devices/{device_id} (docs/devices.md): the scenario table over
// a server whose events name three scanners of acme (ACTIVE, INACTIVE, LOST now) and one of
// globex; and a real gateway publishing over MQTT through `serve`, after which its scanner is
// listed with the values of its events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDevice } from '../../../src/domain/devices.js';
import { eventRow } from '../../helpers/events.js';
import { call } from '../../helpers/http.js';
import { insertEvents } from '../../helpers/store-rows.js';
import { connectGateway, provisionGateway } from '../../helpers/mqtt.js';
import { NO_HEADER, error, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { asAdmin, asUser, bearer } from '../../helpers/users.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const GW1 = '11111111-1111-4111-8111-111111111111';
const GW2 = '22222222-2222-4222-8222-222222222222';

interface DevicesWorld extends Foundation {
  /** When the events were stored, by the server's clock. */
  now: number;
  /** An API key of acme that may read gateways but not events. */
  gatewayKey: string;
}

async function setup(): Promise<DevicesWorld> {
  const w = await startFoundation();
  const now = w.clock.now();
  await insertEvents(w.t, CUSTOMER, [
    eventRow({ created: now - HOUR - 5, device_id: 'ring-1', gateway_id: GW2, device_battery: 90 }),
    eventRow({ created: now - HOUR, device_id: 'ring-1', gateway_id: GW1, device_battery: 87.5, device_firmware: '2.4.1', device_temperature: 31.5 }),
    eventRow({ created: now - 3 * HOUR, type: 'telemetry', device_id: 'ring-2', gateway_id: GW2, device_battery: 12 }),
    eventRow({ created: now - 8 * DAY, device_id: 'ring-3', gateway_id: GW1, device_firmware: '1.0' }),
  ]);
  await insertEvents(w.t, OTHER_CUSTOMER, [eventRow({ created: now - HOUR, device_id: 'globex-1', gateway_id: GW1 })]);
  const key = await call(w.url, 'POST', `/${CUSTOMER}/api-keys`, { authorization: asAdmin(w), json: { name: 'gateways-only', permissions: ['gateway.read'] } });
  return { ...w, now, gatewayKey: (key.body as { key: string }).key };
}

const ring1 = (w: DevicesWorld): ApiDevice => ({
  device_id: 'ring-1',
  first_seen: w.now - HOUR - 5,
  last_seen: w.now - HOUR,
  last_gateway_id: GW1,
  battery: 87.5,
  firmware: '2.4.1',
  temperature: 31.5,
  status: 'ACTIVE',
});
const ring2 = (w: DevicesWorld): ApiDevice => ({
  device_id: 'ring-2',
  first_seen: w.now - 3 * HOUR,
  last_seen: w.now - 3 * HOUR,
  last_gateway_id: GW2,
  battery: 12,
  firmware: null,
  temperature: null,
  status: 'INACTIVE',
});
const ring3 = (w: DevicesWorld): ApiDevice => ({
  device_id: 'ring-3',
  first_seen: w.now - 8 * DAY,
  last_seen: w.now - 8 * DAY,
  last_gateway_id: GW1,
  battery: null,
  firmware: '1.0',
  temperature: null,
  status: 'LOST',
});

/** The list body of these devices, described and with these filters. */
const list = (items: ApiDevice[], description: string, filters: { name: string; value: string | number }[] = []) => ({
  items,
  links: {},
  metadata: { description, size: items.length, filters },
});

const ALL = 'Scanners of the customer, by device_id';
/** The description of a list with these filters, as `name value` pairs. */
const filtered = (filters: string) => `Scanners of the customer with ${filters}, by device_id`;

/** A GET of the list by acme's admin. */
const listing = (query: string, status: number, body: Scenario<DevicesWorld>['body']): Scenario<DevicesWorld> => ({
  name: `GET /devices${query ? `?${query}` : ''}: ${status}`,
  method: 'GET',
  path: `/${CUSTOMER}/devices${query ? `?${query}` : ''}`,
  auth: asAdmin,
  status,
  body,
});

const badQuery = (query: string, details: string) => listing(query, 400, error('Bad Request', details));

/** The next_token of the first page of `query` (limit 1). */
async function firstToken(w: DevicesWorld, query: string): Promise<string> {
  const answer = await call(w.url, 'GET', `/${CUSTOMER}/devices?limit=1${query}`, { authorization: asAdmin(w) });
  const next = (answer.body as { links: { next?: string } }).links.next;
  if (!next) throw new Error(`no second page of ${query}`);
  return new URL(next, w.url).searchParams.get('next_token')!;
}

const scenarios: Scenario<DevicesWorld>[] = [
  listing('', 200, (w) => list([ring1(w), ring2(w), ring3(w)], ALL)),
  {
    name: 'a USER_ROLE user reads them too (event.read), and one device by its id',
    method: 'GET',
    path: `/${CUSTOMER}/devices/ring-2`,
    auth: asUser,
    status: 200,
    body: ring2,
  },
  {
    name: 'pages of 2 by device_id: links.next carries the limit and continues after the last id',
    method: 'GET',
    path: `/${CUSTOMER}/devices?limit=2`,
    auth: asAdmin,
    status: 200,
    check: async (answer, w) => {
      const first = answer.body as { items: ApiDevice[]; links: { next: string }; metadata: unknown };
      expect(first.items).toEqual([ring1(w), ring2(w)]);
      expect(first.links.next).toMatch(new RegExp(`^/${CUSTOMER}/devices\\?next_token=[A-Za-z0-9_-]+$`));
      const second = await call(w.url, 'GET', first.links.next, { authorization: asAdmin(w) });
      expect({ status: second.status, body: second.body }).toEqual({ status: 200, body: list([ring3(w)], ALL) });
    },
  },
  listing('status=ACTIVE', 200, (w) => list([ring1(w)], filtered('status ACTIVE'), [{ name: 'status', value: 'ACTIVE' }])),
  listing('status=INACTIVE', 200, (w) => list([ring2(w)], filtered('status INACTIVE'), [{ name: 'status', value: 'INACTIVE' }])),
  listing('status=LOST', 200, (w) => list([ring3(w)], filtered('status LOST'), [{ name: 'status', value: 'LOST' }])),
  listing('battery_below=20', 200, (w) => list([ring2(w)], filtered('battery_below 20'), [{ name: 'battery_below', value: 20 }])),
  listing(`gateway_id=${GW1}&battery_below=87.75`, 200, (w) =>
    list([ring1(w)], filtered(`gateway_id ${GW1}, battery_below 87.75`), [
      { name: 'gateway_id', value: GW1 },
      { name: 'battery_below', value: 87.75 },
    ]),
  ),
  listing(`gateway_id=${GW2}`, 200, (w) => list([ring2(w)], filtered(`gateway_id ${GW2}`), [{ name: 'gateway_id', value: GW2 }])),
  {
    name: 'links.next of a filtered page continues with the same filter',
    method: 'GET',
    path: async (w) => `/${CUSTOMER}/devices?next_token=${await firstToken(w, `&gateway_id=${GW1}`)}`,
    auth: asAdmin,
    status: 200,
    body: (w) => list([ring3(w)], filtered(`gateway_id ${GW1}`), [{ name: 'gateway_id', value: GW1 }]),
  },
  {
    name: 'another customer sees its own devices only',
    method: 'GET',
    path: `/${OTHER_CUSTOMER}/devices`,
    auth: (w) => bearer(w.otherAdmin.token),
    status: 200,
    fields: { items: [{ device_id: 'globex-1', status: 'ACTIVE' }], metadata: { size: 1 } },
  },
  badQuery('limit=0', 'Query parameter "limit" must be >= 1.'),
  badQuery('limit=501', 'Query parameter "limit" must be <= 500.'),
  badQuery('limit=many', 'Query parameter "limit" must be integer.'),
  badQuery('status=GONE', 'Query parameter "status" must be one of ACTIVE, INACTIVE, LOST.'),
  badQuery('battery_below=101', 'Query parameter "battery_below" must be <= 100.'),
  badQuery('battery_below=low', 'Query parameter "battery_below" must be number.'),
  badQuery('gateway=x', 'Unknown query parameter "gateway": it is not part of this call.'),
  badQuery('next_token=bm90LWEtdG9rZW4', 'Query parameter "next_token" is not a page token of this customer\'s device list: use links.next of the previous page as it is.'),
  badQuery('gateway_id=a%00b', 'Query parameter "gateway_id" must not contain a NUL character: no gateway id has one.'),
  {
    name: 'a token with another filter than its own: 400 naming both',
    method: 'GET',
    path: async (w) => `/${CUSTOMER}/devices?battery_below=50&next_token=${await firstToken(w, '&battery_below=100')}`,
    auth: asAdmin,
    status: 400,
    body: error('Bad Request', 'Query parameter "battery_below" (50) differs from the query of "next_token" (100): a token continues the query it came from.'),
  },
  {
    name: 'another customer\'s token: 400',
    method: 'GET',
    path: async (w) => `/${OTHER_CUSTOMER}/devices?next_token=${await firstToken(w, '')}`,
    auth: (w) => bearer(w.otherAdmin.token),
    status: 400,
    body: error('Bad Request', 'Query parameter "next_token" is not a page token of this customer\'s device list: use links.next of the previous page as it is.'),
  },
  { name: 'no Authorization header: 401', method: 'GET', path: `/${CUSTOMER}/devices`, status: 401, body: NO_HEADER },
  {
    name: 'another customer\'s path: 403, list and device',
    method: 'GET',
    path: `/${OTHER_CUSTOMER}/devices/globex-1`,
    auth: asAdmin,
    status: 403,
    body: error('Forbidden', `Your account belongs to customer "${CUSTOMER}" and has no access to customer "${OTHER_CUSTOMER}".`),
    check: async (_answer, w) => {
      const listed = await call(w.url, 'GET', `/${OTHER_CUSTOMER}/devices`, { authorization: asAdmin(w) });
      expect(listed.status).toBe(403);
    },
  },
  {
    name: 'a key without event.read: 403 naming it',
    method: 'GET',
    path: `/${CUSTOMER}/devices`,
    auth: (w) => bearer(w.gatewayKey),
    status: 403,
    body: error('Forbidden', 'The API key "gateways-only" lacks the permission "event.read" this call needs; create a key with it.'),
  },
  {
    name: 'an unknown device: 404 naming it',
    method: 'GET',
    path: `/${CUSTOMER}/devices/ring-9`,
    auth: asAdmin,
    status: 404,
    body: error('Not Found', `Device "ring-9" does not exist: no event of customer "${CUSTOMER}" names it.`),
  },
  {
    name: 'another customer\'s device on one\'s own path: 404; ids are exact (case matters)',
    method: 'GET',
    path: `/${CUSTOMER}/devices/globex-1`,
    auth: asAdmin,
    status: 404,
    body: error('Not Found', `Device "globex-1" does not exist: no event of customer "${CUSTOMER}" names it.`),
    check: async (_answer, w) => {
      expect((await call(w.url, 'GET', `/${CUSTOMER}/devices/RING-1`, { authorization: asAdmin(w) })).status).toBe(404);
      expect((await call(w.url, 'GET', `/${CUSTOMER}/devices/ring%001`, { authorization: asAdmin(w) })).status).toBe(404);
    },
  },
  {
    name: 'a device id with characters to escape in the path: found by its exact id',
    method: 'GET',
    path: async (w) => {
      await insertEvents(w.t, CUSTOMER, [eventRow({ created: w.now - 10 * DAY, device_id: 'Ring/7 ü?#' })]);
      return `/${CUSTOMER}/devices/${encodeURIComponent('Ring/7 ü?#')}`;
    },
    auth: asAdmin,
    status: 200,
    fields: { device_id: 'Ring/7 ü?#', last_gateway_id: null, status: 'LOST' },
  },
];

scenarioTable('GET /{c}/devices and /{c}/devices/{device_id}', setup, scenarios);

describe('a gateway publishes over MQTT through serve: its scanner appears with the values of its events', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t?.close());

  it('lists the scanner with first and last seen, its gateway, and the newest battery, firmware and temperature', async () => {
    const gateway = await provisionGateway(t);
    const client = await connectGateway(gateway);
    const created = Date.now() - 60_000;
    await client.publishAsync(
      gateway.topic,
      JSON.stringify([
        { type: 'scan', created, scan_code: 'A-1', device_id: 'ring-mqtt', device_battery: 64, device_firmware: '3.1.0' },
        { type: 'telemetry', created: created + 1000, device_id: 'ring-mqtt', device_battery: 63.5, device_temperature: 29.25 },
      ]),
      { qos: 1 },
    );
    await client.endAsync();
    const answer = await call(t.url, 'GET', `/${CUSTOMER}/devices`, { token: t.adminToken });
    expect(answer.status).toBe(200);
    expect((answer.body as { items: unknown[] }).items).toEqual([
      {
        device_id: 'ring-mqtt',
        first_seen: created,
        last_seen: created + 1000,
        last_gateway_id: gateway.id,
        battery: 63.5,
        firmware: '3.1.0',
        temperature: 29.25,
        status: 'ACTIVE',
      },
    ]);
  });
});
