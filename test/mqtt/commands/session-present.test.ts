// CONNACK's session present ([MQTT-3.2.2-1/2/3], MQTT 5 3.2.2.1.1): 1 when a persistent session
// (clean session / Clean Start 0) resumes the command subscription the server kept for the
// gateway, 0 for a clean session and while none was kept; at level 5 the Session Expiry Interval
// says how long the server keeps it (docs/commands.md "Delivery").
import type { IConnackPacket, MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayClients, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';
import { RawGateway } from './raw-gateway.js';

let t: TestServer;
const clients = new GatewayClients();
const raws: RawGateway[] = [];

beforeEach(async () => {
  t = await startTestServer();
});
afterEach(async () => {
  await clients.endAll();
  await Promise.all(raws.splice(0).map((raw) => raw.close()));
  await t.close();
});

/** Connects raw, reads the CONNACK and closes; its session present flag. */
async function sessionPresent(gateway: TestGateway, clean: boolean, level: 4 | 5 = 4): Promise<boolean> {
  const connection = await RawGateway.connect(gateway, clean, level);
  await connection.close();
  return connection.sessionPresent;
}

/** Subscribes a persistent session to the gateway's command topic and waits until the store keeps it. */
async function keepSubscription(gateway: TestGateway, level: 4 | 5 = 4): Promise<void> {
  const connection = await RawGateway.connect(gateway, false, level);
  raws.push(connection);
  expect(await connection.subscribe([`${gateway.topic}/commands`], 1)).toEqual([1]);
  await until(() => t.server.ctx.store.commands.session(gateway.id, false), (qos) => qos === 1);
  await connection.close();
}

const connackOf = (client: MqttClient) => (client as unknown as { connackPacket: IConnackPacket }).connackPacket;

describe('CONNACK session present', () => {
  it('MQTT 3.1.1 (raw): 0 before a subscription is kept, 1 once it is, 0 for a clean session, which drops it', async () => {
    const gateway = await provisionGateway(t);
    expect(await sessionPresent(gateway, false)).toBe(false);
    await keepSubscription(gateway);
    expect(await sessionPresent(gateway, false)).toBe(true);
    expect(await sessionPresent(gateway, false)).toBe(true);
    expect(await sessionPresent(gateway, true)).toBe(false);
    expect(await sessionPresent(gateway, false)).toBe(false);
  });

  it('MQTT 3.1.1 (mqtt.js, clean: false): sessionPresent true on the connection after its subscription', async () => {
    const gateway = await provisionGateway(t);
    const first = await clients.connect(gateway, { clean: false, clientId: 'any' });
    expect(connackOf(first).sessionPresent).toBe(false);
    await first.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
    await until(() => t.server.ctx.store.commands.session(gateway.id, false), (qos) => qos === 1);
    await first.endAsync();
    const second = await clients.connect(gateway, { clean: false, clientId: 'any' });
    expect(connackOf(second).sessionPresent).toBe(true);
    const clean = await clients.connect(gateway, { clean: true });
    expect(connackOf(clean).sessionPresent).toBe(false);
  });

  it('MQTT 5 (raw): Clean Start 0 resumes the kept subscription (session present 1); Clean Start 1 drops it', async () => {
    const gateway = await provisionGateway(t);
    expect(await sessionPresent(gateway, false, 5)).toBe(false);
    await keepSubscription(gateway, 5);
    expect(await sessionPresent(gateway, false, 5)).toBe(true);
    expect(await sessionPresent(gateway, true, 5)).toBe(false);
    expect(await sessionPresent(gateway, false, 5)).toBe(false);
  });

  it('MQTT 5 (mqtt.js, clean: false): session present, and Session Expiry Interval 0xFFFFFFFF (kept until a Clean Start 1) when another was asked', async () => {
    const gateway = await provisionGateway(t);
    const options = { protocolVersion: 5 as const, clean: false, clientId: 'any', properties: { sessionExpiryInterval: 60 } };
    const first = await clients.connect(gateway, options);
    expect(connackOf(first)).toMatchObject({ sessionPresent: false, properties: { sessionExpiryInterval: 0xffff_ffff } });
    await first.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
    await until(() => t.server.ctx.store.commands.session(gateway.id, false), (qos) => qos === 1);
    await first.endAsync();
    const second = await clients.connect(gateway, options);
    expect(connackOf(second)).toMatchObject({ sessionPresent: true, properties: { sessionExpiryInterval: 0xffff_ffff } });
    const clean = await clients.connect(gateway, { protocolVersion: 5, clean: true, properties: { sessionExpiryInterval: 60 } });
    expect(connackOf(clean)).toMatchObject({ sessionPresent: false, properties: { sessionExpiryInterval: 0 } });
  });
});
