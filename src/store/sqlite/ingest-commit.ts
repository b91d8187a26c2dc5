import type { Transaction } from 'better-sqlite3';
import { lastMessageDue } from '../../domain/connectivity.js';
import { customersOf, emptyBatchResult, mergeSingle, planBatch, planParsed, settleBatch, type BatchPlan, type IngestGateway } from '../../domain/ingest-batch-plan.js';
import { Outcome, type BatchResult, type IngestMessage } from '../../domain/ingest.js';
import type { GatewayReport } from '../../domain/payload.js';
import type { CreatedWindow } from '../../domain/payload-limits.js';
import { CommittedPacker } from '../shared/committed-events.js';
import { insertDeadLetter } from './dead-letters.js';
import { deviceCacheOf } from './devices.js';
import { EventInserter } from './event-rows.js';
import type { Db } from './open.js';
import { storageFullOf } from './storage.js';

// SQLite result codes that say the data of the message was at fault, not the database.
const DATA_ERRORS = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

/** Whether the error says the database itself failed (disk full, I/O error, locked), not one message. */
function isDatabaseFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !DATA_ERRORS.test(code);
}

/** A function that commits one batch (`handOff`: with the events it stored, BatchResult.committed); build it once per database connection. Never throws. */
export type Committer = (batch: IngestMessage[], window?: CreatedWindow, handOff?: boolean) => BatchResult;

/** The statements of a group commit, prepared once per connection (main thread or writer thread). */
class CommitStatements {
  private readonly current;
  private readonly touch;
  private readonly report;
  readonly events;

  constructor(readonly db: Db) {
    // The gateway as it is now (an event is stamped with its current usecase and station), and
    // its last message, which feeds connectivity_status: rewritten only when it is
    // LAST_MESSAGE_RESOLUTION_MS old, since an UPDATE per gateway per batch wrote a page each.
    this.current = db.prepare<[string], IngestGateway & { last_message: number | null }>(
      'SELECT customer_id, usecase, station, last_message FROM gateways WHERE id = ? AND deleted IS NULL',
    );
    this.touch = db.prepare<[number, string]>('UPDATE gateways SET last_message = ? WHERE id = ?');
    // A report that changes nothing must not bump the version (the ETag of the gateway).
    this.report = db.prepare(
      `UPDATE gateways SET
         model = coalesce(@model, model), manufacturer = coalesce(@manufacturer, manufacturer),
         firmware = coalesce(@firmware, firmware), type = coalesce(@type, type),
         version = version + 1, last_updated = @at
       WHERE id = @id AND deleted IS NULL AND (
         model IS NOT coalesce(@model, model) OR manufacturer IS NOT coalesce(@manufacturer, manufacturer)
         OR firmware IS NOT coalesce(@firmware, firmware) OR type IS NOT coalesce(@type, type))`,
    );
    this.events = new EventInserter(db);
  }

  /** Records a message of the gateway at `at` (lastMessageDue); undefined when the gateway is gone or deleted. */
  touchGateway(id: string, at: number): IngestGateway | undefined {
    const gateway = this.current.get(id);
    if (gateway && lastMessageDue(gateway.last_message, at)) this.touch.run(at, id);
    return gateway;
  }

  /** Applies a `class: "gateway"` report; true when the record changed (version bumped). */
  applyReport(id: string, report: GatewayReport, at: number): boolean {
    const { model = null, manufacturer = null, firmware = null, type = null } = report;
    return this.report.run({ id, at, model, manufacturer, firmware, type }).changes === 1;
  }
}

/**
 * Group commit on a connection: parses the messages, stores them all in one transaction
 * (per-message fallback on failure). The transactions are IMMEDIATE: they begin by reading the
 * gateways, and a read transaction that then asks to write gets SQLITE_BUSY at once when another
 * connection holds the write lock (SQLite calls no busy handler for that), where BEGIN IMMEDIATE
 * waits busy_timeout.
 */
export function createCommitter(db: Db): Committer {
  const statements = new CommitStatements(db);
  const transaction = db.transaction(applyPlan);
  return (batch, window, handOff) => commitBatch(statements, transaction, planBatch(batch, window), handOff ?? false);
}

function commitBatch(store: CommitStatements, transaction: Transaction<typeof applyPlan>, plan: BatchPlan, handOff: boolean): BatchResult {
  try {
    return transaction.immediate(store, plan, handOff);
  } catch (batchError) {
    // The devices rolled back with the rest; the cache may hold their rows as written.
    deviceCacheOf(store.db).clear();
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
        // Not handed off: the server's thread reads these back (the next hand-off shows the gap).
        mergeSingle(result, i, transaction.immediate(store, planParsed([batch[i]!], [parsed[i]!]), false));
      } catch (error) {
        deviceCacheOf(store.db).clear();
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
function failFrom(result: BatchResult, from: number, store: CommitStatements, error: unknown): void {
  const full = storageFullOf(error, store.db.name);
  result.outcomes.fill(Outcome.FAILED, from);
  result.reasons.fill(`commit failed: ${full?.message ?? (error as Error).message}`, from);
  if (full) result.storageFull = full.message;
}

/** The body of the transaction: touch each gateway once, then keep dead letters, apply reports, insert the events. */
function applyPlan(store: CommitStatements, plan: BatchPlan, handOff: boolean): BatchResult {
  const gateways = new Map<string, IngestGateway | undefined>();
  for (const [id, at] of plan.lastMessage) gateways.set(id, store.touchGateway(id, at));
  const { result, events, reports, deadLetters } = settleBatch(plan, gateways);
  for (const i of deadLetters) {
    const { gatewayId, receivedAt, quarantine, payload } = plan.batch[i]!;
    const seq = insertDeadLetter(store.db, { gatewayId, received: receivedAt, quarantined: quarantine!.at, reason: quarantine!.reason, payload });
    result.reasons[i] = String(seq);
  }
  for (const { gatewayId, report, at } of reports) if (store.applyReport(gatewayId, report, at)) result.reports++;
  const committed = handOff ? new CommittedPacker() : undefined;
  const { events: inserted, devices } = store.events.insertAll(events, committed && ((row, seq) => committed.add(row, seq)));
  result.events += inserted;
  result.devices += devices;
  result.duplicates += events.length - inserted;
  // The live streams of these customers read on once the server's thread hears of the commit.
  if (inserted > 0) result.unannounced = customersOf(events);
  if (committed?.size) result.committed = committed.packed();
  return result;
}

