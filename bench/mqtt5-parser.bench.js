// The listener's own reader of MQTT 5 packets (src/mqtt/packets.ts PacketReader, readConnect,
// src/mqtt/mqtt5.ts publishPayloadStart) against mqtt-packet's parser (mqtt.js's, which aedes
// used) on the same bytes: CONNECT with properties, PUBLISH with properties and a 1 KB payload,
// and PUBLISH without properties (what mosquitto_pub sends), fed in 16 KiB chunks as TLS hands
// them over. ns of CPU per packet (process.cpuUsage: the machine it runs on is shared, so wall
// time would count other processes' turns), in one thread, no sockets (bench/README.md "mqtt5-parser").
import mqttPacket from 'mqtt-packet';
import { PacketReader, readConnect } from '../dist/mqtt/packets.js';
import { checkPublishFlags5, publishPayloadStart } from '../dist/mqtt/mqtt5.js';
import { median, report } from './lib.js';

const BENCH = 'mqtt5-parser';
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PACKETS = Number(process.env.BENCH_PACKETS ?? 200_000);
const CHUNK_BYTES = 16 * 1024;
const GATEWAY = '0b7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a01';
const TOPIC = `scanhub/acme/gateway/${GATEWAY}`;
const TOPIC_BYTES = Buffer.from(TOPIC);

/** A scan message of about 1 KB, as JSON. */
function payloadOfAboutOneKilobyte() {
  const event = { id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', type: 'scan', created: 1_700_000_000_000, device_id: 'ring-42', scan_code: '' };
  event.scan_code = 'X'.repeat(1024 - JSON.stringify(event).length);
  return Buffer.from(JSON.stringify(event));
}

// Written by mqtt-packet's generator, so that neither side reads bytes of its own making.
const generate = (packet) => mqttPacket.generate(packet, { protocolVersion: 5 });
const SAMPLES = {
  connect: generate({
    cmd: 'connect',
    protocolId: 'MQTT',
    protocolVersion: 5,
    clean: true,
    keepalive: 60,
    clientId: `gateway-${GATEWAY}`,
    properties: { sessionExpiryInterval: 3600, receiveMaximum: 100, maximumPacketSize: 65_536, requestProblemInformation: true, userProperties: { firmware: '1.2.3' } },
  }),
  publish_properties_1kb: generate({
    cmd: 'publish',
    qos: 1,
    dup: false,
    retain: false,
    topic: TOPIC,
    messageId: 7,
    payload: payloadOfAboutOneKilobyte(),
    properties: { payloadFormatIndicator: true, messageExpiryInterval: 60, contentType: 'application/json', userProperties: { station: 'gate-5' } },
  }),
  publish_bare_1kb: generate({ cmd: 'publish', qos: 1, dup: false, retain: false, topic: TOPIC, messageId: 7, payload: payloadOfAboutOneKilobyte() }),
};

/** `count` copies of the packet, cut into chunks as a TLS socket would deliver them. */
function chunksOf(packet, count) {
  const stream = Buffer.concat(Array.from({ length: count }, () => packet));
  const chunks = [];
  for (let at = 0; at < stream.length; at += CHUNK_BYTES) chunks.push(stream.subarray(at, at + CHUNK_BYTES));
  return chunks;
}

/** What gateway-connection.ts does with each packet: CONNECT read whole; PUBLISH's topic compared, its properties checked, its payload a view. */
function ownReader(onRead) {
  return new PacketReader(1 << 20, (firstByte, body) => {
    if (firstByte >> 4 === 1) return onRead(readConnect(firstByte, body));
    checkPublishFlags5(firstByte);
    const topicEnd = 2 + body.readUInt16BE(0);
    const packetId = body.readUInt16BE(topicEnd);
    const payloadStart = publishPayloadStart(body, topicEnd + 2);
    if (TOPIC_BYTES.compare(body, 2, topicEnd) !== 0 || packetId === 0) throw new Error('not the gateway topic');
    onRead(body.subarray(payloadStart));
  });
}

/** ns of CPU per packet for one pass over `chunks` holding `count` packets. */
function nsPerPacket(side, chunks, count) {
  let read = 0;
  const started = process.cpuUsage();
  if (side === 'own') {
    const reader = ownReader(() => read++);
    for (const chunk of chunks) reader.push(chunk);
  } else {
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    parser.on('packet', () => read++);
    parser.on('error', (error) => {
      throw error;
    });
    for (const chunk of chunks) parser.parse(chunk);
  }
  const { user, system } = process.cpuUsage(started);
  if (read !== count) throw new Error(`${side} read ${read} packets of ${count}`);
  return ((user + system) * 1000) / count;
}

for (const [name, packet] of Object.entries(SAMPLES)) {
  const chunks = chunksOf(packet, PACKETS);
  // One pass each to warm up, then RUNS alternating.
  nsPerPacket('own', chunks, PACKETS);
  nsPerPacket('mqtt-packet', chunks, PACKETS);
  const runs = { own: [], 'mqtt-packet': [] };
  for (let run = 0; run < RUNS; run++) for (const side of ['own', 'mqtt-packet']) runs[side].push(nsPerPacket(side, chunks, PACKETS));
  for (const side of ['own', 'mqtt-packet']) {
    const key = side === 'own' ? 'own' : 'mqtt_packet';
    report(BENCH, `${name}_${key}_ns_per_packet_median`, median(runs[side]), 'ns');
    report(BENCH, `${name}_${key}_spread`, (Math.max(...runs[side]) - Math.min(...runs[side])) / median(runs[side]), 'fraction');
  }
  report(BENCH, `${name}_ratio_mqtt_packet_to_own`, median(runs['mqtt-packet']) / median(runs.own), 'x');
  console.error(`${BENCH} ${name} (${packet.length} bytes): own [${runs.own.map((v) => v.toFixed(0)).join(', ')}] ns, mqtt-packet [${runs['mqtt-packet'].map((v) => v.toFixed(0)).join(', ')}] ns`);
}
