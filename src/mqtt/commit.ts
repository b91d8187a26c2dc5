import type { IngestGateway, IngestStore } from '../store/ingest.js';
import type { CreatedWindow } from './payload-limits.js';
import { COLUMN, parsePayload, type EventValues, type ParsedMessage } from './payload.js';

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
  /** Set when the writer thread died with the batch: nothing is known of its messages. */
  crash?: { cause: string; /** The thread had opened the database: the batch, not the start, killed it. */ whileRunning: boolean };
}

// SQLite result codes that say the data of the message was at fault, not the database.
const DATA_ERRORS = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

/** Whether the error says the database itself failed (disk full, I/O error, locked), not one message. */
function isDatabaseFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !DATA_ERRORS.test(code);
}

/** A function that commits one batch; build it once per database connection. */
export type Committer = (batch: IngestMessage[]) => BatchResult;

/** Stands for a quarantined message, which is kept as it came, never parsed. */
const NOT_PARSED: ParsedMessage = { valid: false, reason: 'quarantined' };

/** Group commit over the store: parses the messages, stores them all in one transaction (per-message fallback on failure). */
export function createCommitter(store: IngestStore, window?: CreatedWindow): Committer {
  const transaction = store.db.transaction(applyMessages);
  return (batch) => commitBatch(store, transaction, batch, window);
}

function commitBatch(store: IngestStore, transaction: typeof applyMessages, batch: IngestMessage[], window: CreatedWindow | undefined): BatchResult {
  // parsePayload never throws: one message's trouble stays that message's.
  const parsed = batch.map((message) => (message.quarantine ? NOT_PARSED : parsePayload(message.payload, message.receivedAt, window)));
  try {
    return transaction(store, batch, parsed);
  } catch (batchError) {
    const result = emptyResult(batch.length);
    if (isDatabaseFailure(batchError)) {
      // The database itself failed (disk full, I/O error, locked too long): nothing is stored,
      // nothing is acknowledged; the gateways redeliver.
      result.outcomes.fill(Outcome.FAILED);
      result.reasons.fill(`commit failed: ${(batchError as Error).message}`);
      return result;
    }
    // One message the validation let through but SQLite (or our code) refused must not fail its
    // neighbours: store each message alone; the one refused alone is dropped as invalid.
    for (let i = 0; i < batch.length; i++) {
      try {
        const single = transaction(store, [batch[i]!], [parsed[i]!]);
        result.outcomes[i] = single.outcomes[0]!;
        result.reasons[i] = single.reasons[0];
        result.events += single.events;
        result.duplicates += single.duplicates;
        result.reports += single.reports;
      } catch (error) {
        result.outcomes[i] = isDatabaseFailure(error) ? Outcome.FAILED : Outcome.INVALID;
        result.reasons[i] = `could not be stored: ${String((error as Error)?.message ?? error).slice(0, 300)}`;
      }
    }
    return result;
  }
}

function emptyResult(size: number): BatchResult {
  return { outcomes: new Array<Outcome>(size).fill(Outcome.STORED), reasons: new Array(size), events: 0, duplicates: 0, reports: 0 };
}

/** The body of the transaction: touch each gateway once, apply reports, insert the events. */
function applyMessages(store: IngestStore, batch: IngestMessage[], parsed: ParsedMessage[]): BatchResult {
  const result = emptyResult(batch.length);
  // Once per gateway per batch: its last message time and its current usecase/station.
  const lastMessage = new Map<string, number>();
  for (const message of batch) {
    if (!(message.receivedAt <= (lastMessage.get(message.gatewayId) ?? -1))) lastMessage.set(message.gatewayId, message.receivedAt);
  }
  const gateways = new Map<string, IngestGateway | undefined>();
  for (const [id, at] of lastMessage) gateways.set(id, store.touchGateway(id, at));

  const events: EventValues[] = [];
  for (let i = 0; i < batch.length; i++) {
    const { gatewayId, receivedAt, quarantine, payload } = batch[i]!;
    const gateway = gateways.get(gatewayId);
    const message = parsed[i]!;
    if (quarantine) {
      // Kept whether or not the gateway still exists: it is evidence for the operator.
      if (!quarantine.copy) {
        const seq = store.insertDeadLetter({ gatewayId, received: receivedAt, quarantined: quarantine.at, reason: quarantine.reason, payload });
        result.reasons[i] = String(seq);
      }
      result.outcomes[i] = Outcome.QUARANTINED;
    } else if (!gateway) {
      result.outcomes[i] = Outcome.GATEWAY_GONE;
      result.reasons[i] = `gateway ${gatewayId} is deleted`;
    } else if (!message.valid) {
      result.outcomes[i] = Outcome.INVALID;
      result.reasons[i] = message.reason;
    } else {
      for (const report of message.reports) if (store.applyReport(gatewayId, report, receivedAt)) result.reports++;
      for (const values of message.events) {
        values[COLUMN.customer_id] = gateway.customer_id;
        values[COLUMN.gateway_id] = gatewayId;
        values[COLUMN.gateway_usecase] = gateway.usecase;
        values[COLUMN.gateway_station] = gateway.station;
        events.push(values);
      }
    }
  }
  const inserted = store.insertEvents(events);
  result.events += inserted;
  result.duplicates += events.length - inserted;
  return result;
}
