import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LAST_MESSAGE_RESOLUTION_MS } from '../../src/domain/connectivity.js';
import { countRowsOfClosed, selectRows } from '../helpers/store-rows.js';
import { provisionGateway, type TestGateway, GatewayClients } from '../helpers/mqtt.js';
import { UUID } from '../helpers/patterns.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

// What ingest makes of payloads: defaults, arrays, gateway reports, invalid messages, durability.

const T0 = 1_800_000_000_000;
const clock = { now: T0 };
let t: TestServer;
const clients = new GatewayClients();
beforeEach(async () => {
  clock.now = T0;
  t = await startTestServer({ clock: () => clock.now });
});
afterEach(async () => {
  await clients.endAll();
  await t.close();
});

const connect = (gateway: TestGateway) => clients.connect(gateway);

const events = async () => (await selectRows(t.server, 'SELECT id, class, type, created, scan_code, gateway_id FROM events ORDER BY id'));
const ID = ['5d1c2f0e-8a4b-4c3d-9e2f-1a2b3c4d5e01', '5d1c2f0e-8a4b-4c3d-9e2f-1a2b3c4d5e02'];

describe('payloads', () => {
  it('fills in a missing id (a UUID), created (receipt time) and class ("event")', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    await client.publishAsync(gateway.topic, JSON.stringify({ type: 'telemetry', device_battery: 55, id: null }), { qos: 1 });
    const [event] = (await events()) as { id: string }[];
    expect(event).toEqual({ id: expect.stringMatching(UUID), class: 'event', type: 'telemetry', created: T0, scan_code: null, gateway_id: gateway.id });
    const row = (await selectRows(t.server, 'SELECT last_message FROM gateways WHERE id = ?', gateway.id))[0];
    expect(row).toEqual({ last_message: T0 });
  });

  it('keeps the last message to LAST_MESSAGE_RESOLUTION_MS: a later message is written once the stored one is that old', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const lastMessage = async () => (await selectRows(t.server, 'SELECT last_message FROM gateways WHERE id = ?', gateway.id))[0];
    const publishAt = async (at: number) => {
      clock.now = at;
      await client.publishAsync(gateway.topic, JSON.stringify({ type: 'telemetry', device_battery: 50 }), { qos: 1 });
    };
    await publishAt(T0);
    await publishAt(T0 + LAST_MESSAGE_RESOLUTION_MS - 1);
    expect(await lastMessage()).toEqual({ last_message: T0 });
    await publishAt(T0 + LAST_MESSAGE_RESOLUTION_MS);
    expect(await lastMessage()).toEqual({ last_message: T0 + LAST_MESSAGE_RESOLUTION_MS });
    // An older message (a gateway's clock is not ours: receipt times can only be ours, but a batch may be late) never moves it back.
    await publishAt(T0);
    expect(await lastMessage()).toEqual({ last_message: T0 + LAST_MESSAGE_RESOLUTION_MS });
    expect((await events()).length).toBe(4);
  });

  it('stores every event of an array in order, and takes an empty array as a message with none', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const batch = ID.map((id, i) => ({ id, type: 'scan', scan_code: `C-${i}`, created: T0 - 10 + i, class: i ? 'device' : 'event' }));
    await client.publishAsync(gateway.topic, JSON.stringify(batch), { qos: 1 });
    await client.publishAsync(gateway.topic, '[]', { qos: 1 });
    expect((await events())).toEqual([
      { id: ID[0], class: 'event', type: 'scan', created: T0 - 10, scan_code: 'C-0', gateway_id: gateway.id },
      { id: ID[1], class: 'device', type: 'scan', created: T0 - 9, scan_code: 'C-1', gateway_id: gateway.id },
    ]);
    expect(t.server.broker.ingest).toMatchObject({ messages: 2, events: 2, invalid: 0 });
  });

  it('stores a QoS 0 message too (no PUBACK; the QoS 1 message after it commits after it)', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    await client.publishAsync(gateway.topic, JSON.stringify({ id: ID[0], type: 'scan' }), { qos: 0 });
    await client.publishAsync(gateway.topic, JSON.stringify({ id: ID[1], type: 'scan' }), { qos: 1 });
    expect(((await events()) as { id: string }[]).map((e) => e.id)).toEqual(ID);
  });

  const invalid: [string, string | Buffer][] = [
    ['not JSON', '{"type": "scan",'],
    ['not UTF-8', Buffer.from([0xff, 0xfe, 0x7b])],
    ['a JSON string', '"scan"'],
    ['a number', '42'],
    ['an array of numbers', '[1, 2]'],
    ['no type', '{"scan_code": "A-1"}'],
    ['an unknown type', '{"type": "heartbeat"}'],
    ['an unknown class', '{"type": "scan", "class": "weather"}'],
    ['an id that is no UUID', '{"type": "scan", "id": "event-1"}'],
    ['created with a fraction', '{"type": "scan", "created": 1700000000000.5}'],
    ['created as a string', '{"type": "scan", "created": "2024-01-01"}'],
    ['a string for a number', '{"type": "scan", "device_battery": "high"}'],
    ['a number for a string', '{"type": "scan", "scan_code": 4006381333931}'],
    ['one bad element of an array', `[{"type": "scan", "id": "${ID[0]}"}, {"type": "scan", "scan_duration": "long"}]`],
    ['a gateway report with an unknown type', '{"class": "gateway", "type": "drone"}'],
    ['a gateway report with a control character', '{"class": "gateway", "model": "a\\tb"}'],
  ];

  it('acknowledges, drops and counts invalid messages, disconnecting nobody', async () => {
    const [sender, bystander] = [await provisionGateway(t), await provisionGateway(t)];
    const client = await connect(sender);
    const other = await connect(bystander);
    let closes = 0;
    client.on('close', () => closes++);
    other.on('close', () => closes++);
    for (const [, payload] of invalid) await client.publishAsync(sender.topic, payload, { qos: 1 });
    expect((await events())).toEqual([]);
    expect(t.server.broker.ingest).toMatchObject({ messages: invalid.length, invalid: invalid.length, events: 0, failed: 0 });
    // Both connections still work.
    await client.publishAsync(sender.topic, JSON.stringify({ id: ID[0], type: 'scan' }), { qos: 1 });
    await other.publishAsync(bystander.topic, JSON.stringify({ id: ID[1], type: 'scan' }), { qos: 1 });
    expect(((await events()) as { gateway_id: string }[]).map((e) => e.gateway_id)).toEqual([sender.id, bystander.id]);
    expect(closes).toBe(0);
    expect(t.server.broker.stats).toMatchObject({ connected: 2, connections: 2 });
  });
});

describe('gateway reports', () => {
  it('updates model, manufacturer, firmware and type from a class "gateway" message, bumping the version once', async () => {
    const gateway = await provisionGateway(t, { name: 'dock-gw', usecase: 'inbound', station: 'dock-4' });
    const before = await t.admin.request<Record<string, unknown>>('GET', `/${CUSTOMER}/gateways/${gateway.id}`);
    expect(before.body.last_seen).toBe(null);
    const client = await connect(gateway);
    clock.now = T0 + 5_000;
    const report = { class: 'gateway', model: 'GW-500', manufacturer: 'Acme Devices', firmware: '3.1.0', type: 'mobile' };
    await client.publishAsync(gateway.topic, JSON.stringify(report), { qos: 1 });
    const after = await t.admin.request<Record<string, unknown>>('GET', `/${CUSTOMER}/gateways/${gateway.id}`);
    expect(after.body).toEqual({
      ...before.body,
      model: 'GW-500',
      manufacturer: 'Acme Devices',
      firmware: '3.1.0',
      type: 'mobile',
      last_updated: T0 + 5_000,
      connectivity_status: 'ACTIVE',
      // Its first message: the time it arrived.
      last_seen: T0 + 5_000,
    });
    expect(Number(JSON.parse(after.headers.etag as string))).toBe(Number(JSON.parse(before.headers.etag as string)) + 1);

    // The same report again (as at every reconnect) changes nothing; a partial one changes its field.
    clock.now = T0 + 9_000;
    await client.publishAsync(gateway.topic, JSON.stringify([report, { id: ID[0], type: 'scan' }]), { qos: 1 });
    const same = await t.admin.request<Record<string, unknown>>('GET', `/${CUSTOMER}/gateways/${gateway.id}`);
    expect(same.headers.etag).toBe(after.headers.etag);
    await client.publishAsync(gateway.topic, JSON.stringify({ class: 'gateway', firmware: '3.2.0' }), { qos: 1 });
    const updated = await t.admin.get<Record<string, unknown>>(`/${CUSTOMER}/gateways/${gateway.id}`);
    expect(updated).toMatchObject({ model: 'GW-500', firmware: '3.2.0', type: 'mobile', last_updated: T0 + 9_000 });
    expect((await events())).toHaveLength(1);
    expect(t.server.broker.ingest).toMatchObject({ messages: 3, reports: 2, events: 1 });
  });
});

describe('durability', () => {
  it('has stored every acknowledged message when the server shuts down mid-stream', async () => {
    const gateways = [await provisionGateway(t), await provisionGateway(t)];
    const connections = await Promise.all(gateways.map(connect));
    let acknowledged = 0;
    const halfway = new Promise<void>((resolve) => {
      connections.forEach((client, g) => {
        for (let i = 0; i < 300; i++) {
          client.publish(gateways[g]!.topic, JSON.stringify({ type: 'scan', scan_code: `S-${i}` }), { qos: 1 }, (error) => {
            if (!error && ++acknowledged === 200) resolve();
          });
        }
      });
    });
    await halfway;
    await t.server.close();
    // The server's store is closed: count on a connection of our own.
    const stored = await countRowsOfClosed(t, 'events');
    expect(stored).toBeGreaterThanOrEqual(acknowledged);
    expect(stored).toBe(t.server.broker.ingest.events);
  });
});
