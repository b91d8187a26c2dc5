import type { Transaction } from 'better-sqlite3';
import { Outcome, type BatchResult, type IngestMessage } from '../../domain/ingest.js';
import type { CreatedWindow } from '../../domain/payload-limits.js';
import { customersOf, emptyBatchResult, mergeSingle, planBatch, planParsed, settleBatch, type BatchPlan, type IngestGateway } from '../../domain/ingest-batch-plan.js';
import type { IngestStore } from './ingest.js';
import { storageFullOf } from './storage.js';

// SQLite result codes that say the data of the message was at fault, not the database.
const DATA_ERRORS = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

/** Whether the error says the database itself failed (disk full, I/O error, locked), not one message. */
function isDatabaseFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !DATA_ERRORS.test(code);
}

/** A function that commits one batch; build it once per database connection. Never throws. */
export type Committer = (batch: IngestMessage[], window?: CreatedWindow) => BatchResult;

/**
 * Group commit over the store: parses the messages, stores them all in one transaction (per-message
 * fallback on failure). The transactions are IMMEDIATE: they begin by reading the gateways, and a
 * read transaction that then asks to write gets SQLITE_BUSY at once when another connection holds
 * the write lock (SQLite calls no busy handler for that), where BEGIN IMMEDIATE waits busy_timeout.
 */
export function createCommitter(store: IngestStore): Committer {
  const transaction = store.db.transaction(applyPlan);
  return (batch, window) => commitBatch(store, transaction, planBatch(batch, window));
}

function commitBatch(store: IngestStore, transaction: Transaction<typeof applyPlan>, plan: BatchPlan): BatchResult {
  try {
    return transaction.immediate(store, plan);
  } catch (batchError) {
    const { batch, parsed } = plan;
    const result = emptyBatchResult(batch.length);
    if (isDatabaseFailure(batchError)) {
      // The database itself failed (disk full, I/O error, locked too long): nothing is stored,
      // nothing is acknowledged; the gateways redeliver (or, disk full, IngestWriter retries).
      failFrom(result, 0, store, batchError);
      return result;
    }
    // One message the validation let through but SQLite (or our code) refused must not fail its
    // neighbours: store each message alone; the one refused alone is dropped as invalid.
    for (let i = 0; i < batch.length; i++) {
      try {
        mergeSingle(result, i, transaction.immediate(store, planParsed([batch[i]!], [parsed[i]!])));
      } catch (error) {
        if (isDatabaseFailure(error)) {
          // The rest would fail alike: they stay unacknowledged, in order behind this one.
          failFrom(result, i, store, error);
          break;
        }
        result.outcomes[i] = Outcome.INVALID;
        result.reasons[i] = `could not be stored: ${String((error as Error)?.message ?? error).slice(0, 300)}`;
      }
    }
    return result;
  }
}

/** Messages `from` on failed with the database; a disk found full says so for the whole batch. */
function failFrom(result: BatchResult, from: number, store: IngestStore, error: unknown): void {
  const full = storageFullOf(error, store.db.name);
  result.outcomes.fill(Outcome.FAILED, from);
  result.reasons.fill(`commit failed: ${full?.message ?? (error as Error).message}`, from);
  if (full) result.storageFull = full.message;
}

/** The body of the transaction: touch each gateway once, then keep dead letters, apply reports, insert the events. */
function applyPlan(store: IngestStore, plan: BatchPlan): BatchResult {
  const gateways = new Map<string, IngestGateway | undefined>();
  for (const [id, at] of plan.lastMessage) gateways.set(id, store.touchGateway(id, at));
  const { result, events, reports, deadLetters } = settleBatch(plan, gateways);
  for (const i of deadLetters) {
    const { gatewayId, receivedAt, quarantine, payload } = plan.batch[i]!;
    const seq = store.insertDeadLetter({ gatewayId, received: receivedAt, quarantined: quarantine!.at, reason: quarantine!.reason, payload });
    result.reasons[i] = String(seq);
  }
  for (const { gatewayId, report, at } of reports) if (store.applyReport(gatewayId, report, at)) result.reports++;
  const inserted = store.insertEvents(events);
  result.events += inserted;
  result.duplicates += events.length - inserted;
  // The live streams of these customers read on once the server's thread hears of the commit.
  if (inserted > 0) result.unannounced = customersOf(events);
  return result;
}
