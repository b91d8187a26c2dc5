import { randomUUID } from 'node:crypto';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { CUSTOMER, type TestServer } from './server.js';

/** What POST /provisioning answers (spec 4.2). */
export interface Provisioned {
  mqtt_endpoint: string;
  mqtt_topic_prefix: string;
  certificate_common_name: string;
  gateway: { id: string; name: string; usecase: string; station: string };
  pkcs12: string;
}

/** A gateway provisioned through the API: its id, topic and the PKCS#12 the service issued. */
export interface TestGateway {
  id: string;
  topic: string;
  endpoint: string;
  pkcs12: Buffer;
}

/** Creates a gateway, prepares provisioning and redeems the token, as a technician and device would. */
export async function provisionGateway(
  t: TestServer,
  fields: { name?: string; usecase?: string; station?: string } = {},
): Promise<TestGateway> {
  const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, {
    name: fields.name ?? `gw-${randomUUID().slice(0, 8)}`,
    usecase: fields.usecase ?? 'picking',
    station: fields.station ?? 'station-1',
  });
  const preparation = await t.admin.post<{ registration_path: string; token: string }>(
    `/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`,
  );
  const provisioned = await t.anonymous.post<Provisioned>(preparation.registration_path, { token: preparation.token });
  return {
    id: gateway.id,
    topic: `${provisioned.mqtt_topic_prefix}/gateway/${gateway.id}`,
    endpoint: provisioned.mqtt_endpoint,
    pkcs12: Buffer.from(provisioned.pkcs12, 'base64'),
  };
}

/** Connects with the gateway's PKCS#12 (which also holds the CA that signed the broker); no reconnects. */
export function connectGateway(gateway: TestGateway, options: IClientOptions = {}): Promise<MqttClient> {
  return mqtt.connectAsync(gateway.endpoint, {
    pfx: gateway.pkcs12,
    passphrase: '',
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...options,
  });
}
