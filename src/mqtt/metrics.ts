import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { refusedHandshakes, type BrokerStats } from './broker-stats.js';
import type { IngestStats } from './ingest.js';
import { HANDSHAKE_REFUSALS } from './refusals.js';

// The MQTT and ingest part of GET /metrics (docs/metrics.md has the table). Ingest and MQTT keep
// plain counters that cost one increment per message; they are read here only when Prometheus
// scrapes. Per batch (commit latency) a histogram is observed directly.

/** Commits take a millisecond or a few on SQLite, more on PostgreSQL over a network: 0.5 ms to 5 s. */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The ingest counters each plain counter of IngestStats becomes, with its help text. */
const INGEST_COUNTERS: [keyof IngestStats, string, string][] = [
  ['messages', 'scanhub_ingest_messages_total', 'MQTT PUBLISH packets handed to the ingest writer.'],
  ['events', 'scanhub_ingest_events_total', 'Events stored (new ids).'],
  ['duplicates', 'scanhub_ingest_duplicate_events_total', 'Events already stored (the same customer, created and id: a QoS 1 redelivery): acknowledged, not stored again.'],
  ['invalid', 'scanhub_ingest_invalid_messages_total', 'Messages acknowledged and dropped: bad JSON, wrong field types, unknown type, over a limit.'],
  ['quarantined', 'scanhub_ingest_quarantined_messages_total', 'Messages kept as dead letters (they killed the writer thread), and copies of them, acknowledged.'],
  ['failed', 'scanhub_ingest_failed_messages_total', 'Messages not acknowledged: the commit failed or the writer was down (the gateway resends).'],
  ['reports', 'scanhub_ingest_gateway_reports_total', 'Gateway report messages that changed a gateway record.'],
  ['devices', 'scanhub_ingest_device_updates_total', 'Device rows written by ingest: at most one per device per transaction that stored new events of it (docs/devices.md).'],
  ['batches', 'scanhub_ingest_batches_total', 'Ingest transactions committed.'],
];

/** The MQTT counters and gauges read from BrokerStats. */
const BROKER_COUNTERS: [keyof BrokerStats, string, string][] = [
  ['connections', 'scanhub_mqtt_connections_accepted_total', 'MQTT connections of gateways accepted (CONNACK 0).'],
  ['publishesRefused', 'scanhub_mqtt_refused_publishes_total', 'PUBLISHes refused and their connection closed: foreign topic, payload or packet over the limit.'],
  ['subscriptionsRefused', 'scanhub_mqtt_refused_subscriptions_total', 'SUBSCRIBE topic filters refused (any but the gateway\'s own command topic).'],
  ['commandsSent', 'scanhub_mqtt_commands_sent_total', 'Command PUBLISHes written to gateways, resends included.'],
  ['commandsResent', 'scanhub_mqtt_commands_resent_total', 'Command PUBLISHes sent again with DUP (no PUBACK in time, or on a later connection).'],
  ['commandsDelivered', 'scanhub_mqtt_commands_delivered_total', 'Commands the gateways acknowledged (PUBACK), stored as DELIVERED.'],
  ['commandResponses', 'scanhub_mqtt_command_responses_total', 'Command responses of gateways stored as SUCCEEDED or FAILED.'],
  ['commandResponsesDropped', 'scanhub_mqtt_command_responses_dropped_total', 'Command responses dropped: not a response, an unknown command or another gateway\'s, or one already final or expired.'],
  ['protocolViolations', 'scanhub_mqtt_protocol_violations_total', 'Connections closed for a protocol violation (a QoS 1 or 2 PUBLISH with packet identifier 0).'],
];
const BROKER_GAUGES: [keyof BrokerStats, string, string][] = [
  ['connected', 'scanhub_mqtt_connections', 'MQTT connections of gateways open now.'],
  ['unauthenticated', 'scanhub_mqtt_unauthenticated_connections', 'MQTT connections accepted and not yet answered CONNACK 0, now.'],
];

/** What the broker shows of itself: its counters and those of ingest. */
export interface BrokerCounters {
  stats: BrokerStats;
  ingest: IngestStats;
}

/** The MQTT and ingest metrics of one server, in its registry: zero until the broker they watch has started. */
export class MqttMetrics {
  private broker: BrokerCounters | undefined;
  private readonly commitDuration: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    const metrics = this;

    for (const [field, name, help] of INGEST_COUNTERS) mirroredCounter(registry, name, help, () => this.broker?.ingest[field]);
    for (const [field, name, help] of BROKER_COUNTERS) mirroredCounter(registry, name, help, () => this.broker?.stats[field]);
    for (const [field, name, help] of BROKER_GAUGES) {
      new Gauge({ name, help, registers, collect() {
        this.set(metrics.broker?.stats[field] ?? 0);
      } });
    }
    new Counter({
      name: 'scanhub_mqtt_refused_handshakes_total',
      help: 'Connections that never became a gateway\'s, by reason (docs/metrics.md lists the reasons).',
      labelNames: ['reason'],
      registers,
      collect() {
        const refused = metrics.broker ? refusedHandshakes(metrics.broker.stats) : undefined;
        this.reset();
        for (const reason of HANDSHAKE_REFUSALS) this.inc({ reason }, refused?.[reason] ?? 0);
      },
    });
    this.commitDuration = new Histogram({
      name: 'scanhub_ingest_commit_duration_seconds',
      help: 'Seconds from handing an ingest batch to the writer thread until its result (measured in the main thread).',
      buckets: COMMIT_BUCKETS,
      registers,
    });
  }

  /** The broker's counters are reported from now on (zero until it has started). */
  watch(broker: BrokerCounters): void {
    this.broker = broker;
  }

  /** For IngestOptions.onCommit: one batch's hand-over-to-result time. */
  readonly observeCommit = (seconds: number): void => this.commitDuration.observe(seconds);
}

/** A counter that shows a plain number kept elsewhere (0 while there is none yet). */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read() ?? 0);
    },
  });
}
