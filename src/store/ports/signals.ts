import type { CommittedEvents } from '../../domain/ingest.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';

/**
 * What one instance tells every other (and itself): on PostgreSQL `NOTIFY scanhub`
 * (docs/gateways-mqtt.md "Several instances: signals"), on SQLite within the one process. Short
 * field names: a NOTIFY payload is at most 8,000 bytes.
 */
export type Signal =
  /** The gateway was deleted: whoever holds its MQTT connection closes it. Sent by the store with the deletion itself. */
  | { kind: 'gateway-deleted'; gateway_id: string }
  /** The certificate was revoked: whoever holds a connection of the gateway with it closes it. Sent by the store with the revocation. */
  | { kind: 'certificate-revoked'; gateway_id: string; serial: string }
  /** These gateways connected to `instance`: any other instance closes its older connection of each. */
  | { kind: 'gateways-connected'; instance: string; gateway_ids: string[] }
  /**
   * Events of these customers were committed (one signal per committed batch, at most
   * CUSTOMERS_PER_SIGNAL customers each): every instance's live streams of them read on. `through`
   * (PostgreSQL): a position the committed events all lie before; a read that has not reached it
   * yet waits for an older transaction still open, and tries again. `committed` (within the
   * process only, SQLite's ingest): the events themselves, on the first signal of the commit.
   */
  | { kind: 'events-committed'; customers: string[]; through?: StreamPosition; committed?: CommittedEvents }
  /** Commands were queued for these gateways (at most GATEWAYS_PER_COMMAND_SIGNAL): the instance holding each one's connection sends them. */
  | { kind: 'commands-queued'; gateway_ids: string[] }
  /** The webhook was created, changed, deleted, or has a message queued: whoever delivers it (or may take it) looks again. */
  | { kind: 'webhook-changed'; webhook_id: string }
  /** An alert of the customer opened or resolved (`alert` as GET /alerts shows it): live streams that asked for alerts send it. */
  | { kind: 'alert-changed'; customer_id: string; alert: Record<string, unknown> };

/** Customers per `events-committed` signal: 100 ids of at most 64 characters stay well within NOTIFY's 8,000 bytes. */
export const CUSTOMERS_PER_SIGNAL = 100;

export interface SignalBus {
  /** Hears every signal from now on, of any instance (this one too), until the returned function is called; the first subscription starts listening. */
  subscribe(handler: (signal: Signal) => void): () => void;
  /** Sends a signal to every instance; resolves once the database took it. */
  publish(signal: Signal): Promise<void>;
  /** Called each time listening resumes after a gap (the database restarted): signals sent meanwhile were lost, so check state again. */
  onResume(handler: () => void): () => void;
  /** Why signals of other instances cannot be heard now (for /healthz); undefined while listening. */
  fault(): string | undefined;
  /** Resolves once the bus hears signals (after the first subscription), at once within one process. */
  listening(): Promise<void>;
}
