// Commands over MQTT with real TLS (docs/commands.md): a gateway subscribes to its own command topic
// only; what is queued reaches it at QoS 1 in creation order, with the wire JSON; PUBACK marks
// DELIVERED and its response SUCCEEDED/FAILED; unknown and foreign responses are dropped and
// counted; at most COMMAND_WINDOW unacknowledged; a persistent session gets them at connect, again
// with DUP after a reconnect, and never again once acknowledged; canceled and expired ones are not sent.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiCommand } from '../../../src/domain/commands.js';
import { COMMAND_WINDOW } from '../../../src/mqtt/commands/outbox.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';
import { TestClock } from '../../helpers/world.js';
import { RawGateway } from './raw-gateway.js';

let t: TestServer;
let clock: TestClock;
const clients = new GatewayClients();
const raws: RawGateway[] = [];

beforeEach(async () => {
  clock = new TestClock();
  t = await startTestServer({ clock: clock.now });
});
afterEach(async () => {
  await clients.endAll();
  await Promise.all(raws.splice(0).map((raw) => raw.close()));
  await t.close();
});

const send = (gateway: TestGateway, body: object = { name: 'feedback', parameters: { sequence: 'OK' } }) =>
  t.admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, body);
const read = (command: ApiCommand) => t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`);
const statusOf = async (command: ApiCommand) => (await read(command)).status;
const raw = async (gateway: TestGateway, clean: boolean) => {
  const connection = await RawGateway.connect(gateway, clean);
  raws.push(connection);
  return connection;
};

describe('the command loop (mqtt.js)', () => {
  it('delivers queued commands in creation order once subscribed; PUBACK -> DELIVERED; the response -> SUCCEEDED or FAILED', async () => {
    const gateway = await provisionGateway(t);
    const first = await send(gateway, { name: 'feedback', parameters: { sequence: 'OK' }, device_id: 'ring-1', ttl_seconds: 60 });
    const second = await send(gateway, { name: 'display', parameters: { template: 'pick', fields: { n: 3 } } });
    const client = await clients.connect(gateway);
    const received: { topic: string; payload: unknown; qos: number | undefined }[] = [];
    client.on('message', (topic, payload, packet) => received.push({ topic, payload: JSON.parse(payload.toString()), qos: packet.qos }));
    const granted = await client.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
    expect(granted.map((g) => g.qos)).toEqual([1]);
    await until(() => received.length === 2);
    expect(received).toEqual([
      {
        topic: `${gateway.topic}/commands`,
        qos: 1,
        payload: { command_id: first.command_id, name: 'feedback', device_id: 'ring-1', parameters: { sequence: 'OK' }, created: first.created, expires_at: first.expires_at },
      },
      {
        topic: `${gateway.topic}/commands`,
        qos: 1,
        payload: { command_id: second.command_id, name: 'display', parameters: { template: 'pick', fields: { n: 3 } }, created: second.created, expires_at: second.expires_at },
      },
    ]);
    await until(() => Promise.all([statusOf(first), statusOf(second)]), (statuses) => statuses.every((s) => s === 'DELIVERED'));
    await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: first.command_id, status: 'SUCCEEDED' }), { qos: 1 });
    await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: second.command_id, status: 'FAILED', details: 'no display' }), { qos: 1 });
    // The PUBACK of a response comes after it is stored.
    expect(await read(first)).toMatchObject({ status: 'SUCCEEDED', delivered_at: expect.any(Number), completed_at: expect.any(Number) });
    expect(await read(second)).toMatchObject({ status: 'FAILED', details: 'no display' });
    expect(t.server.broker.stats).toMatchObject({ commandsSent: 2, commandsResent: 0, commandsDelivered: 2, commandResponses: 2, commandResponsesDropped: 0 });
  });

  it('a command queued while subscribed arrives at once; responses to unknown or foreign commands are dropped and counted', async () => {
    const [gateway, other] = [await provisionGateway(t), await provisionGateway(t)];
    const foreign = await send(other);
    const client = await clients.connect(gateway);
    await client.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
    const arrived = new Promise<string>((resolve) => client.once('message', (_topic, payload) => resolve((JSON.parse(payload.toString()) as { command_id: string }).command_id)));
    const later = await send(gateway);
    expect(await arrived).toBe(later.command_id);
    await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: foreign.command_id, status: 'SUCCEEDED' }), { qos: 1 });
    await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: '99999999-9999-4999-8999-999999999999', status: 'SUCCEEDED' }), { qos: 1 });
    await client.publishAsync(`${gateway.topic}/command-responses`, 'not json', { qos: 1 });
    expect(t.server.broker.stats.commandResponsesDropped).toBe(3);
    expect(await statusOf(foreign)).toBe('QUEUED');
    // Ingest is untouched: the gateway's own topic still stores events.
    await client.publishAsync(gateway.topic, JSON.stringify({ id: '0b7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a01', type: 'scan', scan_code: 'A', created: 1_700_000_000_000 }), { qos: 1 });
    expect(t.server.broker.ingest.events).toBe(1);
  });

  it('refuses any other filter with 0x80: another gateway\'s commands, a wildcard, its own topic', async () => {
    const [gateway, other] = [await provisionGateway(t), await provisionGateway(t)];
    const client = await clients.connect(gateway);
    await expect(client.subscribeAsync([`${other.topic}/commands`, `${gateway.topic}/#`, gateway.topic, `${gateway.topic}/commands`], { qos: 1 })).rejects.toMatchObject({
      packet: { cmd: 'suback', granted: [128, 128, 128, 1] },
    });
    expect(t.server.broker.stats.subscriptionsRefused).toBe(3);
  });
});

describe('delivery (raw MQTT 3.1.1)', () => {
  it(`keeps at most ${COMMAND_WINDOW} unacknowledged; each PUBACK lets the next one go, in order`, async () => {
    const gateway = await provisionGateway(t);
    const queued = await t.admin.post<ApiCommand[]>(`/${CUSTOMER}/commands`, { gateway_ids: [gateway.id], name: 'n0' });
    for (let i = 1; i < COMMAND_WINDOW + 4; i++) queued.push(await send(gateway, { name: `n${i}` }));
    const connection = await raw(gateway, true);
    expect(await connection.subscribe([`${gateway.topic}/commands`])).toEqual([1]);
    const first = [];
    for (let i = 0; i < COMMAND_WINDOW; i++) first.push(await connection.publish());
    expect(first.map((p) => p.message.name)).toEqual(queued.slice(0, COMMAND_WINDOW).map((c) => c.name));
    expect(first.every((p) => p.qos === 1 && !p.dup)).toBe(true);
    expect(await connection.before()).toEqual([]);
    connection.puback(first[0]!.packetId);
    expect((await connection.publish()).message.name).toBe(`n${COMMAND_WINDOW}`);
    expect(await connection.before()).toEqual([]);
    await until(() => statusOf(queued[0]!), (status) => status === 'DELIVERED');
    expect(await statusOf(queued[1]!)).toBe('QUEUED');
  });

  it('the commands of one claim go to the gateway in one write (one TLS record), in order', async () => {
    const gateway = await provisionGateway(t);
    const queued = await t.admin.post<ApiCommand[]>(`/${CUSTOMER}/commands`, { gateway_ids: [gateway.id], name: 'n0' });
    for (let i = 1; i < 5; i++) queued.push(await send(gateway, { name: `n${i}` }));
    const connection = await raw(gateway, true);
    let chunks = 0;
    connection.socket.on('data', () => chunks++);
    expect(await connection.subscribe([`${gateway.topic}/commands`])).toEqual([1]);
    const names = [];
    for (let i = 0; i < 5; i++) names.push((await connection.publish()).message.name);
    expect(names).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    // The SUBACK, then the five PUBLISHes together (or all in one).
    expect(chunks).toBeLessThanOrEqual(2);
  });

  it('a PUBACK with nothing more queued asks the store for nothing: the next claim comes with the next command', async () => {
    const gateway = await provisionGateway(t);
    const claims: string[] = [];
    let answered = 0;
    const claim = t.server.ctx.store.commands.claim.bind(t.server.ctx.store.commands);
    vi.spyOn(t.server.ctx.store.commands, 'claim').mockImplementation(async (requests, now) => {
      const ours = requests.filter((r) => r.gateway_id === gateway.id);
      claims.push(...ours.map((r) => `limit ${r.limit}`));
      const claimed = await claim(requests, now);
      answered += ours.length;
      return claimed;
    });
    const connection = await raw(gateway, true);
    expect(await connection.subscribe([`${gateway.topic}/commands`])).toEqual([1]);
    // The SUBACK goes out before the SUBSCRIBE's claim has read the store: a command created
    // meanwhile would be that claim's find, and its own signal's claim one more.
    await until(() => answered, (n) => n === 1);
    const first = await send(gateway, { name: 'first' });
    const sent = await connection.publish();
    connection.puback(sent.packetId);
    await until(() => statusOf(first), (status) => status === 'DELIVERED');
    await send(gateway, { name: 'second' });
    expect((await connection.publish()).message.name).toBe('second');
    // At the SUBSCRIBE, then one per command queued; none for the PUBACK.
    expect(claims).toEqual([`limit ${COMMAND_WINDOW}`, `limit ${COMMAND_WINDOW}`, `limit ${COMMAND_WINDOW}`]);
  });

  it('a persistent session gets its commands at connect, again with DUP after a reconnect, and never again once acknowledged', async () => {
    const gateway = await provisionGateway(t);
    const [a, b] = [await send(gateway, { name: 'a' }), await send(gateway, { name: 'b' })];
    const first = await raw(gateway, false);
    expect(await first.subscribe([`${gateway.topic}/commands`])).toEqual([1]);
    expect([(await first.publish()).message.name, (await first.publish()).message.name]).toEqual(['a', 'b']);
    await first.close();
    // No SUBSCRIBE: the stored subscription of the persistent session.
    const second = await raw(gateway, false);
    const again = [await second.publish(), await second.publish()];
    expect(again.map((p) => [p.message.command_id, p.dup])).toEqual([[a.command_id, true], [b.command_id, true]]);
    for (const p of again) second.puback(p.packetId);
    await until(() => Promise.all([statusOf(a), statusOf(b)]), (s) => s.every((status) => status === 'DELIVERED'));
    await second.close();
    const third = await raw(gateway, false);
    expect(await third.before()).toEqual([]);
    // A clean session drops the subscription: nothing until it subscribes again.
    await third.close();
    const clean = await raw(gateway, true);
    const c = await send(gateway, { name: 'c' });
    expect(await clean.before()).toEqual([]);
    await clean.subscribe([`${gateway.topic}/commands`]);
    expect((await clean.publish()).message.command_id).toBe(c.command_id);
  });

  it('checks cancel and expiry at every send: neither a canceled nor an expired command is published', async () => {
    const gateway = await provisionGateway(t);
    const canceled = await send(gateway, { name: 'canceled' });
    await t.admin.post(`/${CUSTOMER}/commands/${canceled.command_id}/cancel`);
    await send(gateway, { name: 'expired', ttl_seconds: 5 });
    const live = await send(gateway, { name: 'live', ttl_seconds: 60 });
    clock.advance(5_000);
    const connection = await raw(gateway, true);
    await connection.subscribe([`${gateway.topic}/commands`]);
    const only = await connection.publish();
    expect(only.message.command_id).toBe(live.command_id);
    expect(await connection.before()).toEqual([]);
  });

  it('a QoS 0 subscription is granted QoS 0: commands arrive without identifier, DELIVERED once written', async () => {
    const gateway = await provisionGateway(t);
    const command = await send(gateway);
    const connection = await raw(gateway, true);
    expect(await connection.subscribe([`${gateway.topic}/commands`], 0)).toEqual([0]);
    expect(await connection.publish()).toMatchObject({ qos: 0, packetId: 0, dup: false, message: { command_id: command.command_id } });
    await until(() => statusOf(command), (status) => status === 'DELIVERED');
  });
});
