import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../../helpers/store-rows.js';
import { ApiClient, ApiError } from '../../../src/client/api.js';
import { encodePageToken } from '../../../src/domain/page-token.js';
import { toApiEvent, type EventRow } from '../../../src/store/sqlite/event-rows.js';
import { GATEWAY_NEWEST_FIRST_SQL, NEWEST_FIRST_SQL, OLDEST_FIRST_SQL, OLDEST_FIRST_CSV_SQL } from '../../../src/store/sqlite/events.js';
import { openDatabase } from '../../../src/store/sqlite/open.js';
import { eventRow, newestFirst } from '../../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const HOUR = 3_600_000;

interface Page {
  items: Record<string, unknown>[];
  links: { next?: string };
  metadata: { description: string; size: number; filters: { name: string; value: unknown }[] };
}

let t: TestServer;
const seed = (rows: EventRow[], customer = CUSTOMER) => insertEvents(t.server, customer, rows);
const list = (query: Record<string, string | number | undefined>) => t.admin.get<Page>(`/${CUSTOMER}/events`, query);

/** The status and body of a refused request. */
async function refusal(query: Record<string, string | number>): Promise<{ status: number; body: object }> {
  try {
    await t.admin.get(`/${CUSTOMER}/events`, query);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, body: { title: error.title, details: error.details } };
    throw error;
  }
  throw new Error(`${JSON.stringify(query)} was accepted`);
}

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('GET /{customer_id}/events paging', () => {
  // 1,300 events in [T0 - 1 h, T0 + 1 h), 450 of them in the one millisecond T0.
  const start = T0 - HOUR;
  const end = T0 + HOUR;
  const rows: EventRow[] = [];
  for (let i = 0; i < 450; i++) rows.push(eventRow({ created: T0, device_id: `same-ms-${i}` }));
  for (let i = 0; i < 850; i++) rows.push(eventRow({ created: start + Math.floor((i * 2 * HOUR) / 850), type: i % 3 ? 'scan' : 'telemetry' }));

  beforeAll(async () => {
    await seed(rows);
    // Outside the range: at its end (excluded) and just before its start.
    await seed([eventRow({ created: end }), eventRow({ created: start - 1 })]);
  });

  it('collects every event of the range once, newest first, across pages of 100', async () => {
    const collected: string[] = [];
    let page = await list({ start_time_millis: start, end_time_millis: end, limit: 100 });
    let pages = 1;
    collected.push(...page.items.map((e) => e.id as string));
    while (page.links.next) {
      expect(page.links.next).toMatch(new RegExp(`^/${CUSTOMER}/events\\?next_token=[A-Za-z0-9_-]+$`));
      expect(page.items).toHaveLength(100);
      page = await t.admin.get<Page>(page.links.next);
      collected.push(...page.items.map((e) => e.id as string));
      pages++;
    }
    expect(pages).toBe(13);
    expect(page.links).toEqual({});
    expect(collected).toEqual(newestFirst(rows).map((r) => r.id));
  });

  it('neither skips nor repeats when events arrive between pages, before and after the cursor', async () => {
    const collected: string[] = [];
    const arrivedBehind: EventRow[] = [];
    let page = await list({ start_time_millis: start, end_time_millis: end, limit: 97 });
    collected.push(...page.items.map((e) => e.id as string));
    while (page.links.next) {
      const last = page.items[page.items.length - 1] as { id: string; created: number };
      // Newer than the cursor (a later millisecond, and the same one with a greater id): already passed, never listed.
      // Older (same millisecond with a smaller id, and an earlier millisecond): still ahead, listed once.
      const ahead = [eventRow({ created: Math.min(last.created + 1, end - 1) }), eventRow({ created: last.created, id: idBeyond(last.id, 1) })];
      const behind = [eventRow({ created: last.created, id: idBeyond(last.id, -1) }), eventRow({ created: Math.max(last.created - 1, start) })];
      await seed([...ahead, ...behind]);
      arrivedBehind.push(...behind);
      page = await t.admin.get<Page>(page.links.next);
      collected.push(...page.items.map((e) => e.id as string));
    }
    expect(new Set(collected).size).toBe(collected.length);
    expect(collected).toEqual(newestFirst([...rows, ...arrivedBehind]).map((r) => r.id));
  });

  it('accepts the deprecated next_key for next_token and lets limit change between pages', async () => {
    const first = await list({ start_time_millis: start, end_time_millis: end, limit: 10 });
    const token = new URL(first.links.next!, 'http://x').searchParams.get('next_token')!;
    const byToken = await list({ next_token: token });
    const byKey = await list({ next_key: token });
    expect(byKey).toEqual(byToken);
    expect(byToken.items).toHaveLength(10);
    expect((await list({ next_token: token, limit: 3 })).items).toEqual(byToken.items.slice(0, 3));
    expect((await list({ next_token: token, start_time_millis: start })).items).toEqual(byToken.items);
  });
});

/** A UUID-shaped id that sorts just after (+1) or before (-1) the given one. */
function idBeyond(id: string, direction: 1 | -1): string {
  for (;;) {
    const candidate = id.slice(0, 30) + randomUUID().slice(30);
    if (direction * (candidate < id ? -1 : candidate > id ? 1 : 0) > 0) return candidate;
  }
}

describe('GET /{customer_id}/events ranges', () => {
  const base = T0 + 10 * HOUR;

  it('includes the start and excludes the end of the range', async () => {
    const at = (created: number) => eventRow({ created, scan_code: `at ${created - base}` });
    const inside = [at(base), at(base + 1), at(base + 999)];
    await seed([at(base - 1), ...inside, at(base + 1000)]);
    const page = await list({ start_time_millis: base, end_time_millis: base + 1000 });
    expect(page.items.map((e) => e.scan_code)).toEqual(['at 999', 'at 1', 'at 0']);
    expect(page.links).toEqual({});
    expect(page.metadata).toEqual({
      description: 'Events with 2024-05-01T22:00:00.000Z <= created < 2024-05-01T22:00:01.000Z, newest first',
      size: 3,
      filters: [
        { name: 'start_time_millis', value: base },
        { name: 'end_time_millis', value: base + 1000 },
      ],
    });
  });

  it('starts a range given only its end one day before that end', async () => {
    const end = T0 + 100 * 24 * HOUR;
    await seed([eventRow({ created: end - 24 * HOUR, scan_code: 'first in' }), eventRow({ created: end - 24 * HOUR - 1, scan_code: 'out' })]);
    const page = await list({ end_time_millis: end });
    expect(page.metadata.filters).toEqual([
      { name: 'start_time_millis', value: end - 24 * HOUR },
      { name: 'end_time_millis', value: end },
    ]);
    expect(page.items.map((e) => e.scan_code)).toEqual(['first in']);
  });

  it('shows every field of both event types, leaving out absent ones', async () => {
    const scan = eventRow({
      created: base + 2 * HOUR,
      class: 'event',
      type: 'scan',
      scan_code: '4006381333931',
      scan_duration: 120.5,
      scan_decode_symbology: 'EAN_13',
      device_id: 'M001-000123',
      device_battery: 87,
      device_firmware: '2.4.1',
      device_temperature: 31.5,
      gateway_id: randomUUID(),
      gateway_usecase: 'picking',
      gateway_station: 'Station 4',
      metrics_worker_steps: 12,
    });
    const telemetry = eventRow({ created: base + 2 * HOUR + 1, type: 'telemetry', device_id: 'M001-000123', device_battery: 0.5, device_temperature: -3.5 });
    await seed([scan, telemetry]);
    const page = await list({ start_time_millis: base + 2 * HOUR, end_time_millis: base + 3 * HOUR });
    expect(page.items).toEqual([
      { id: telemetry.id, class: 'event', type: 'telemetry', created: base + 2 * HOUR + 1, device_id: 'M001-000123', device_battery: 0.5, device_temperature: -3.5 },
      { ...toApiEvent(scan) },
    ]);
    expect(Object.keys(page.items[1]!)).toHaveLength(15);
  });
});

describe('GET /{customer_id}/events JSON of awkward values', () => {
  // Texts that look like the JSON around them: SQLite writes the items, and absent fields are
  // cut out of its bytes, so none of these may be mistaken for a member or an item boundary.
  const base = T0 + 40 * HOUR;
  const gateway = randomUUID();
  const awkward = [
    'a":null,"b":null',
    ',"device_id":null}',
    '{"id":"x",',
    'ends with a backslash \\',
    '\\":null',
    'quote " comma , newline \n tab \t bell \u0007',
    'ümlaut, 漢字 and 😀',
    '',
  ];
  const rows = awkward.map((text, i) =>
    eventRow({
      created: base + i,
      scan_code: text,
      device_firmware: i % 2 ? text : null,
      gateway_station: i % 3 ? null : text,
      gateway_id: gateway,
      device_battery: i % 2 ? null : 50 + i / 4,
    }),
  );
  const expected = newestFirst(rows).map((row) => toApiEvent(row));

  beforeAll(() => seed(rows));

  it('come back exactly as stored, on pages and in the streamed list', async () => {
    const range = { start_time_millis: base, end_time_millis: base + HOUR };
    const items: Record<string, unknown>[] = [];
    let page = await list({ ...range, limit: 3 });
    items.push(...page.items);
    while (page.links.next) {
      page = await t.admin.get<Page>(page.links.next);
      items.push(...page.items);
    }
    expect(items).toEqual(expected);
    const streamed = await list({ ...range, gateway_id: gateway });
    expect(streamed.items).toEqual(expected);
    expect(streamed.metadata.size).toBe(awkward.length);
  });
});

describe('GET /{customer_id}/events defaults', () => {
  const NOW = Date.UTC(2024, 6, 1, 0, 0, 0);
  let clocked: TestServer;
  beforeAll(async () => {
    clocked = await startTestServer({ clock: () => NOW });
  });
  afterAll(async () => clocked.close());

  it('lists the last 24 hours up to now by default, 500 at most per page', async () => {
    const day = 24 * HOUR;
    const inside = Array.from({ length: 520 }, (_, i) => eventRow({ created: NOW - day + i }));
    await insertEvents(clocked.server, CUSTOMER, [...inside, eventRow({ created: NOW }), eventRow({ created: NOW - day - 1 }), eventRow({ created: NOW - 1, id: 'ffffffff-last' })]);
    const page = await clocked.admin.get<Page>(`/${CUSTOMER}/events`);
    expect(page.metadata.size).toBe(500);
    expect(page.metadata.filters).toEqual([
      { name: 'start_time_millis', value: NOW - day },
      { name: 'end_time_millis', value: NOW },
    ]);
    expect(page.items[0]!.id).toBe('ffffffff-last');
    const rest = await clocked.admin.get<Page>(page.links.next!);
    expect(rest.items.map((e) => e.id)).toEqual(newestFirst(inside).slice(499).map((r) => r.id));
    expect(rest.links).toEqual({});
  });
});

describe('GET /{customer_id}/events refusals', () => {
  const bad = (details: string) => ({ status: 400, body: { title: 'Bad Request', details } });
  const scenarios: [string, Record<string, string | number>, { status: number; body: object }][] = [
    ['limit 0', { limit: 0 }, bad('Query parameter "limit" must be >= 1.')],
    ['limit 501', { limit: 501 }, bad('Query parameter "limit" must be <= 500.')],
    ['limit abc', { limit: 'abc' }, bad('Query parameter "limit" must be integer.')],
    ['start abc', { start_time_millis: 'abc' }, bad('Query parameter "start_time_millis" must be integer.')],
    ['end 1.5', { end_time_millis: '1.5' }, bad('Query parameter "end_time_millis" must be integer.')],
    [
      'start after end',
      { start_time_millis: 2000, end_time_millis: 1000 },
      bad('Query parameter "start_time_millis" (2000) is after "end_time_millis" (1000): the range must not end before it starts.'),
    ],
    ['unknown parameter', { start_time: 1 }, bad('Unknown query parameter "start_time": it is not part of this call.')],
    [
      'malformed token',
      { next_token: 'not a token!' },
      bad('Query parameter "next_token" is not a page token of this customer\'s event list: use links.next of the previous page as it is.'),
    ],
    [
      'token of another customer',
      { next_token: encodePageToken({ kind: 'events', customer: 'other', after: { created: 5, id: 'x' }, query: { start: 0, end: 10, limit: 500 } }) },
      bad('Query parameter "next_token" is not a page token of this customer\'s event list: use links.next of the previous page as it is.'),
    ],
    [
      'token of another list',
      { next_key: encodePageToken({ kind: 'users', customer: CUSTOMER, after: { created: 5, id: 'x' } }) },
      bad('Query parameter "next_key" is not a page token of this customer\'s event list: use links.next of the previous page as it is.'),
    ],
    [
      'token with a cursor outside its range',
      { next_token: encodePageToken({ kind: 'events', customer: CUSTOMER, after: { created: 50, id: 'x' }, query: { start: 0, end: 10, limit: 500 } }) },
      bad('Query parameter "next_token" is not a page token of this customer\'s event list: use links.next of the previous page as it is.'),
    ],
    [
      'token with another range',
      {
        next_token: encodePageToken({ kind: 'events', customer: CUSTOMER, after: { created: 5, id: 'x' }, query: { start: 0, end: 10, limit: 500 } }),
        end_time_millis: 20,
      },
      bad('Query parameter "end_time_millis" (20) differs from the range of "next_token" (10): a token continues the query it came from.'),
    ],
    [
      'token with a gateway',
      { next_token: encodePageToken({ kind: 'events', customer: CUSTOMER, after: { created: 5, id: 'x' }, query: { start: 0, end: 10, limit: 500 } }), gateway_id: 'g' },
      bad('Query parameter "gateway_id" cannot be combined with "next_token": the gateway filter returns the whole range in one response.'),
    ],
    [
      'next_token and a different next_key',
      { next_token: 'abc', next_key: 'abd' },
      bad('Query parameters "next_token" and "next_key" differ: send only "next_token" ("next_key" is its deprecated name).'),
    ],
  ];
  it.each(scenarios)('%s -> 400', async (_name, query, expected) => {
    expect(await refusal(query)).toEqual(expected);
  });

  it('refuses another customer with 403 and a missing token with 401', async () => {
    await expect(t.admin.get('/other/events')).rejects.toMatchObject({ status: 403, title: 'Forbidden' });
    await expect(new ApiClient(t.url).get(`/${CUSTOMER}/events`)).rejects.toMatchObject({ status: 401 });
  });
});

describe('GET /{customer_id}/events?gateway_id=', () => {
  const gateway = randomUUID();
  const start = T0 + 20 * HOUR;
  const end = start + HOUR;
  // 1,234 events of the gateway (more than two stream chunks), 300 in one millisecond.
  const mine = [
    ...Array.from({ length: 934 }, (_, i) => eventRow({ created: start + i * 3, gateway_id: gateway })),
    ...Array.from({ length: 300 }, () => eventRow({ created: start + 5000, gateway_id: gateway })),
  ];

  beforeAll(async () => {
    await seed(mine);
    await seed(Array.from({ length: 200 }, (_, i) => eventRow({ created: start + i, gateway_id: randomUUID() })));
    await seed([eventRow({ created: end, gateway_id: gateway }), eventRow({ created: start - 1, gateway_id: gateway })]);
    // The same gateway id under another customer is not this customer's.
    await seed([eventRow({ created: start + 1, gateway_id: gateway })], 'other');
  });

  it('returns all events of the gateway in the range in one response, newest first, without links.next', async () => {
    const response = await t.admin.request<Page>('GET', `/${CUSTOMER}/events`, {
      query: { gateway_id: gateway, start_time_millis: start, end_time_millis: end, limit: 10 },
    });
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const page = response.body;
    expect(page.items.map((e) => e.id)).toEqual(newestFirst(mine).map((r) => r.id));
    expect(page.items[0]).toEqual(toApiEvent(newestFirst(mine)[0]!));
    expect(page.links).toEqual({});
    expect(page.metadata).toEqual({
      description: `Events of gateway ${gateway} with 2024-05-02T08:00:00.000Z <= created < 2024-05-02T09:00:00.000Z, newest first`,
      size: 1234,
      filters: [
        { name: 'start_time_millis', value: start },
        { name: 'end_time_millis', value: end },
        { name: 'gateway_id', value: gateway },
      ],
    });
  });

  it('answers an empty list for a gateway without events in the range', async () => {
    const page = await list({ gateway_id: 'no-such-gateway', start_time_millis: start, end_time_millis: end });
    expect(page).toEqual({
      items: [],
      links: {},
      metadata: {
        description: 'Events of gateway no-such-gateway with 2024-05-02T08:00:00.000Z <= created < 2024-05-02T09:00:00.000Z, newest first',
        size: 0,
        filters: [
          { name: 'start_time_millis', value: start },
          { name: 'end_time_millis', value: end },
          { name: 'gateway_id', value: 'no-such-gateway' },
        ],
      },
    });
  });
});

describe('event queries', () => {
  it('read one index range each (no scan down to the cursor), list pages in order through a co-routine', () => {
    const db = openDatabase(':memory:');
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ customerId: 'c', gatewayId: 'g', start: 0, created: 1, id: 'x', end: 2, limit: 1, prefix: '', room: '' }) as { detail: string }[]).map(
        (row) => row.detail,
      );
    // The page's items are joined in the order the co-routine yields them: index order, no sort.
    expect(plan(NEWEST_FIRST_SQL)).toEqual([
      'CO-ROUTINE (subquery-1)',
      'SEARCH events USING INDEX events_customer_created (customer_id=? AND created>? AND (created,id)<(?,?))',
      'SCAN (subquery-1)',
    ]);
    expect(plan(GATEWAY_NEWEST_FIRST_SQL)).toEqual([
      'CO-ROUTINE (subquery-1)',
      'SEARCH events USING INDEX events_gateway_created (gateway_id=? AND created>? AND (created,id)<(?,?))',
      'SCAN (subquery-1)',
    ]);
    expect(plan(OLDEST_FIRST_SQL)).toEqual(['SEARCH events USING INDEX events_customer_created (customer_id=? AND (created,id)>(?,?) AND created<?)']);
    expect(plan(OLDEST_FIRST_CSV_SQL)).toEqual([
      'CO-ROUTINE (subquery-1)',
      'SEARCH events USING INDEX events_customer_created (customer_id=? AND (created,id)>(?,?) AND created<?)',
      'SCAN (subquery-1)',
    ]);
    db.close();
  });
});
