/** A received MQTT message on its way to the store, and what became of it (ingest's shapes, shared by broker and stores). */
import type { StreamPosition } from './stream-cursor.js';

/** Why and when a message was quarantined: it is kept as a dead letter, not parsed. */
export interface Quarantine {
  reason: string;
  at: number;
  /** A copy of a message already kept: acknowledged, not kept again. */
  copy?: boolean;
}

/** One received PUBLISH waiting for its transaction. */
export interface IngestMessage {
  gatewayId: string;
  receivedAt: number;
  payload: Uint8Array;
  /** Set once the message crashed the writer thread alone (IngestWriter). */
  quarantine?: Quarantine;
}

/**
 * What became of one message; STORED, INVALID and QUARANTINED (kept as a dead letter) are
 * acknowledged to the client. CRASHED: the writer thread died with the batch (the backend says so).
 */
export const Outcome = { STORED: 0, INVALID: 1, GATEWAY_GONE: 2, FAILED: 3, QUARANTINED: 4, CRASHED: 5 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** The result of one group commit: an outcome per message, and the counts for the stats. */
export interface BatchResult {
  outcomes: Outcome[];
  /** Why a message was invalid, or why the commit failed, by message index; for QUARANTINED, the dead letter's seq. */
  reasons: (string | undefined)[];
  events: number;
  duplicates: number;
  reports: number;
  /** Device rows written: at most one per device of the new events (docs/devices.md "Kept by ingest"). */
  devices: number;
  /**
   * The customers whose new events the commit stored, for a store whose commit does not announce
   * them itself (SQLite: its signals stay in the process, and the writer thread is not the server's
   * thread; the IngestWriter announces them). PostgreSQL announces in the transaction (NOTIFY).
   */
  unannounced?: string[];
  /** The events the commit stored, when the batch asked for them (SQLite): see CommittedEvents. */
  committed?: CommittedEvents;
  /**
   * Set when messages FAILED because the database has no space left (the reason): IngestWriter
   * keeps them, unacknowledged, and commits them again once space returns.
   */
  storageFull?: string;
  /** Set when the writer thread died with the batch: nothing is known of its messages. */
  crash?: { cause: string; /** The thread had opened the database: the batch, not the start, killed it. */ whileRunning: boolean };
}

/**
 * The events one commit stored, in commit order, each as the event log reads it back (its
 * position `[seq]`, its JSON as GET /{c}/events lists it): SQLite's writer thread hands them to the
 * server's thread, so that readers following the commit order there (the webhooks) need not read
 * them back. No other event lies after `after` up to `through`. Packed (store/shared/committed-events.ts):
 * event i's JSON is the UTF-8 of `utf8` from `ends[i - 1] + 1` (after the comma; 0 for the first)
 * to `ends[i]`; its customer, gateway and type indexes into `names` (-1: none; a type of none is a
 * scan). `utf8` is the commit's own buffer, moved to the other thread, not copied.
 */
export interface CommittedEvents {
  after: StreamPosition;
  through: StreamPosition;
  utf8: Uint8Array;
  ends: Uint32Array;
  seqs: Float64Array;
  customers: Int32Array;
  gateways: Int32Array;
  types: Int32Array;
  names: string[];
}
