import type { ConnectionOptions } from 'node:tls';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { GatewayDevice, type JobBarcodes, type SimulatedEvent } from './events.js';
import { answerCommands, type ReceivedCommand } from './commands.js';
import { tlsOptionsOf } from './credentials.js';
import type { SimulatedGateway } from './gateways.js';

export interface SimulationOptions {
  gateways: SimulatedGateway[];
  /** Events per second, per gateway. */
  rate: number;
  durationMs: number;
  jobs?: JobBarcodes;
  /** Events are stamped this many ms before they are sent (a device uploading what it kept while offline); default 0. */
  backdateMs?: number;
  /** Overrides the mqtt_endpoint the service handed out (e.g. from another network). */
  mqttEndpoint?: string;
  /** A connection lost, a reconnect refused (once per loss, with the broker's reason), a reconnect. */
  onConnection?: (message: string) => void;
  /** Called about once a second while publishing. */
  onProgress?: (progress: Progress) => void;
  /** Each command a gateway received and how it answered (docs/commands.md). */
  onCommand?: (command: ReceivedCommand) => void;
}

export interface Progress {
  elapsedMs: number;
  sent: number;
  acknowledged: number;
}

/** What the run sent and what the broker acknowledged (printed by `scanhub simulate`). */
export interface SimulationSummary {
  gateways: { id: string; name: string }[];
  duration_ms: number;
  messages_sent: number;
  messages_acknowledged: number;
  messages_failed: number;
  events_sent: number;
  scans: number;
  telemetry: number;
  gateway_reports: number;
  jobs: number;
  acknowledged_per_second: number;
}

// Unacknowledged messages per gateway before the simulator waits (it then falls behind the rate).
const MAX_IN_FLIGHT = 1000;
const TICK_MS = 50;
const DRAIN_TIMEOUT_MS = 30_000;

interface Publisher {
  device: GatewayDevice;
  client: MqttClient;
  topic: string;
  generated: number;
}

/** Connects every gateway over mqtts with its key and certificate, publishes at the rate for the duration, waits for the PUBACKs. */
export async function runSimulation(options: SimulationOptions): Promise<SimulationSummary> {
  const counts = { sent: 0, acknowledged: 0, failed: 0, reports: 0 };
  const backdateMs = options.backdateMs ?? 0;
  let settled: (() => void) | undefined;
  const outstanding = () => counts.sent - counts.acknowledged - counts.failed;
  const publish = (publisher: Publisher, message: SimulatedEvent) => {
    counts.sent++;
    publisher.client.publish(publisher.topic, JSON.stringify(message), { qos: 1 }, (error) => {
      if (error) counts.failed++;
      else counts.acknowledged++;
      if (outstanding() === 0) settled?.();
    });
  };

  const publishers = await Promise.all(options.gateways.map((gateway) => connectPublisher(gateway, options)));
  try {
    const started = Date.now();
    for (const publisher of publishers) {
      publish(publisher, publisher.device.report());
      counts.reports++;
    }
    let lastProgress = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const now = Date.now();
        const elapsed = Math.min(now - started, options.durationMs);
        // Events due so far: the first at once, then one every 1/rate seconds.
        const due = Math.floor((elapsed / 1000) * options.rate) + 1;
        for (const publisher of publishers) {
          while (publisher.generated < due && outstanding() < MAX_IN_FLIGHT * publishers.length) {
            publisher.generated++;
            publish(publisher, publisher.device.next(now - backdateMs));
          }
        }
        if (now - lastProgress >= 1000) {
          lastProgress = now;
          options.onProgress?.({ elapsedMs: elapsed, sent: counts.sent, acknowledged: counts.acknowledged });
        }
        if (now - started >= options.durationMs) {
          clearInterval(timer);
          resolve();
        }
      }, TICK_MS);
    });
    for (const publisher of publishers) {
      const end = publisher.device.finish(Date.now() - backdateMs);
      if (end) publish(publisher, end);
    }
    if (outstanding() > 0) {
      // The timer holds the process while gateways reconnect (their sockets may all be closed).
      let timer: NodeJS.Timeout | undefined;
      const drained = new Promise<void>((resolve) => (settled = resolve));
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS)))]);
      clearTimeout(timer);
    }
    const durationMs = Date.now() - started;
    const devices = publishers.map((p) => p.device.counts);
    const sum = (key: keyof GatewayDevice['counts']) => devices.reduce((total, c) => total + c[key], 0);
    return {
      gateways: options.gateways.map(({ id, name }) => ({ id, name })),
      duration_ms: durationMs,
      messages_sent: counts.sent,
      messages_acknowledged: counts.acknowledged,
      messages_failed: counts.failed,
      events_sent: sum('scans') + sum('telemetry'),
      scans: sum('scans'),
      telemetry: sum('telemetry'),
      gateway_reports: counts.reports,
      jobs: sum('jobs'),
      acknowledged_per_second: Math.round((counts.acknowledged / (durationMs / 1000)) * 10) / 10,
    };
  } finally {
    await Promise.all(publishers.map((p) => p.client.endAsync(true).catch(() => undefined)));
  }
}

async function connectPublisher(gateway: SimulatedGateway, options: SimulationOptions): Promise<Publisher> {
  const { credentials } = gateway;
  const endpoint = options.mqttEndpoint ?? credentials.mqtt_endpoint;
  // mqtt.js hands its options to tls.connect: the key and certificates (or a saved PKCS#12) go in as they are.
  const clientOptions: IClientOptions & Pick<ConnectionOptions, 'pfx' | 'passphrase' | 'key' | 'cert' | 'ca'> = {
    ...tlsOptionsOf(credentials),
    clientId: gateway.id,
    protocolVersion: 4,
    clean: true,
    connectTimeout: 10_000,
    // Reconnect after a broker restart; mqtt.js resends what was not acknowledged.
    reconnectPeriod: 1000,
    // A broker whose database is down refuses a CONNECT with code 3 (server unavailable): keep
    // trying, as a gateway does, instead of giving the run up.
    reconnectOnConnackError: true,
  };
  const client = mqtt.connect(endpoint, clientOptions);
  // Only these listeners go once connected: mqtt.js reconnects through listeners of its own on
  // 'close', which must stay (removing every 'close' listener stopped reconnects for good).
  let refused: (error: Error) => void = () => undefined;
  const closedEarly = () => refused(new Error('connection closed before CONNACK (certificate refused?)'));
  const failed = (error: Error) => refused(error);
  try {
    await new Promise<void>((resolve, reject) => {
      refused = reject;
      client.once('connect', () => resolve());
      client.once('error', failed);
      client.once('close', closedEarly);
    });
  } catch (error) {
    await client.endAsync(true);
    throw new Error(`gateway ${gateway.name} could not connect to ${endpoint}: ${(error as Error).message}`, { cause: error });
  }
  client.off('close', closedEarly);
  client.off('error', failed);
  const topic = `${credentials.mqtt_topic_prefix}/gateway/${gateway.id}`;
  await answerCommands(client, gateway.name, topic, options.onCommand ?? (() => undefined));
  // Once connected, a broken connection only reconnects: errors are not fatal for the run, but
  // worth a line (a revoked certificate shows here as every reconnect refused).
  const say = options.onConnection ?? (() => undefined);
  let lost = false;
  let refusal: string | undefined;
  client.on('close', () => {
    if (lost || client.disconnecting) return;
    lost = true;
    refusal = undefined;
    say(`gateway ${gateway.name} lost its connection; reconnecting`);
  });
  client.on('error', (error) => {
    if (!lost || refusal === error.message) return;
    refusal = error.message;
    say(`gateway ${gateway.name}: reconnecting is refused: ${error.message}`);
  });
  client.on('connect', () => {
    if (!lost) return;
    lost = false;
    say(`gateway ${gateway.name} reconnected`);
  });
  return {
    device: new GatewayDevice(gateway.name, options.jobs),
    client,
    topic,
    generated: 0,
  };
}
