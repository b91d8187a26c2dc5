import { LAST_MESSAGE_RESOLUTION_MS } from '../../domain/connectivity.js';
import { Outcome, type BatchResult, type IngestMessage } from '../../domain/ingest.js';
import type { CreatedWindow } from '../../domain/payload-limits.js';
import { customersOf, emptyBatchResult, mergeSingle, planBatch, planParsed, settleBatch, type BatchPlan, type IngestGateway } from '../../domain/ingest-batch-plan.js';
import type { ConnectingGateway, IngestRepository } from '../ports/index.js';
import { insertAndAnnounce } from './events.js';
import { isConnectionFailure, isStorageFull, mapFailure, SQLSTATE, type Database, type Queryable } from './pool.js';

// Each gateway of the batch once, as it is now (an event is stamped with the gateway as it is
// when the event is stored), locked in id order with the lock an UPDATE takes (FOR NO KEY UPDATE:
// concurrent batches of several processes lock gateways in one order, a deletion in flight is
// waited for and seen, and the UPDATE below needs no stronger lock, so it cannot deadlock). Its last
// message, which feeds connectivity_status, is written only when due (lastMessageDue,
// LAST_MESSAGE_RESOLUTION_MS): not a new row version per gateway per batch.
const TOUCH_SQL = `WITH current AS (
    SELECT g.id, g.customer_id, g.usecase, g.station, g.last_message, t.at
    FROM gateways AS g JOIN unnest($1::text[], $2::bigint[]) AS t(id, at) ON g.id = t.id
    WHERE g.deleted IS NULL ORDER BY g.id FOR NO KEY UPDATE OF g),
  touched AS (
    UPDATE gateways AS g SET last_message = c.at FROM current AS c
    WHERE g.id = c.id AND (c.last_message IS NULL OR c.at - c.last_message >= $3))
  SELECT id, customer_id, usecase, station FROM current`;

// A report that changes nothing must not bump the version (the ETag of the gateway).
const REPORT_SQL = `UPDATE gateways SET
    model = coalesce($2, model), manufacturer = coalesce($3, manufacturer),
    firmware = coalesce($4, firmware), type = coalesce($5, type),
    version = version + 1, last_updated = $6
  WHERE id = $1 AND deleted IS NULL AND (
    model IS DISTINCT FROM coalesce($2, model) OR manufacturer IS DISTINCT FROM coalesce($3, manufacturer)
    OR firmware IS DISTINCT FROM coalesce($4, firmware) OR type IS DISTINCT FROM coalesce($5, type))`;

const DEAD_LETTER_SQL = `INSERT INTO dead_letters (gateway_id, customer_id, received, quarantined, reason, payload)
  VALUES ($1, (SELECT customer_id FROM gateways WHERE id = $1), $2, $3, $4, $5) RETURNING seq`;

/** MQTT ingest: group commits of received messages, one transaction each. */
export class PgIngest implements IngestRepository {
  constructor(private readonly db: Database) {}

  /** One query per connect (never per message): the gateway, and the status of the presented certificate (NULL when unknown). */
  async connectingGateway(id: string, serial: string): Promise<ConnectingGateway | undefined> {
    return (
      await this.db.query<ConnectingGateway>(
        `SELECT id, customer_id, deleted,
           (SELECT CASE WHEN revoked IS NOT NULL THEN 'revoked' WHEN delivered_at IS NULL THEN 'pending' ELSE 'active' END
            FROM gateway_certificates WHERE serial = $2) AS certificate
         FROM gateways WHERE id = $1`,
        [id, serial.toLowerCase()],
      )
    ).rows[0];
  }

  /**
   * One group commit. When the database fails as a whole (down, restarting, disk full), every
   * message is FAILED and nothing is acknowledged; when the batch fails on its data, each message
   * is retried alone and the one refused alone is INVALID. Never throws.
   */
  async commit(batch: IngestMessage[], window?: CreatedWindow): Promise<BatchResult> {
    const plan = planBatch(batch, window);
    try {
      return await this.apply(plan);
    } catch (batchError) {
      const result = emptyBatchResult(batch.length);
      if (isDatabaseFailure(batchError)) {
        failFrom(result, 0, batchError);
        return result;
      }
      for (let i = 0; i < batch.length; i++) {
        try {
          mergeSingle(result, i, await this.apply(planParsed([batch[i]!], [plan.parsed[i]!])));
        } catch (error) {
          if (isDatabaseFailure(error)) {
            // The rest would fail alike: they stay unacknowledged, in order behind this one.
            failFrom(result, i, error);
            break;
          }
          result.outcomes[i] = Outcome.INVALID;
          result.reasons[i] = `could not be stored: ${oneLine(error).slice(0, 300)}`;
        }
      }
      return result;
    }
  }

  /** The transaction: touch each gateway once, then keep dead letters, apply reports, insert the events. */
  private apply(plan: BatchPlan): Promise<BatchResult> {
    return this.db.transaction(async (client) => {
      const gateways = await touchGateways(client, plan.lastMessage);
      const { result, events, reports, deadLetters } = settleBatch(plan, gateways);
      for (const i of deadLetters) {
        const { gatewayId, receivedAt, quarantine, payload } = plan.batch[i]!;
        const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
        const { rows } = await client.query<{ seq: number }>(DEAD_LETTER_SQL, [gatewayId, receivedAt, quarantine!.at, quarantine!.reason, bytes]);
        result.reasons[i] = String(rows[0]!.seq);
      }
      for (const { gatewayId, report, at } of reports) {
        const { model = null, manufacturer = null, firmware = null, type = null } = report;
        const changed = await client.query(REPORT_SQL, [gatewayId, model, manufacturer, firmware, type, at]);
        if (changed.rowCount === 1) result.reports++;
      }
      if (events.length > 0) {
        // Announced in the transaction: every instance hears of the events when, and only if, they commit.
        const inserted = await insertAndAnnounce(client, events, customersOf(events));
        result.events += inserted.events;
        result.duplicates += events.length - inserted.events;
        result.devices += inserted.devices;
      }
      return result;
    });
  }
}

/** Touches the gateways (one statement, the same rule as lastMessageDue); each id maps to the gateway, or undefined when gone or deleted. */
async function touchGateways(client: Queryable, lastMessage: Map<string, number>): Promise<Map<string, IngestGateway | undefined>> {
  const ids = [...lastMessage.keys()].sort();
  const { rows } = await client.query<IngestGateway & { id: string }>(TOUCH_SQL, [ids, ids.map((id) => lastMessage.get(id)!), LAST_MESSAGE_RESOLUTION_MS]);
  const touched = new Map<string, IngestGateway | undefined>(ids.map((id) => [id, undefined]));
  for (const { id, customer_id, usecase, station } of rows) touched.set(id, { customer_id, usecase, station });
  return touched;
}

// SQLSTATE classes that say a message's data was at fault: 22 data exception (a value out of
// range, invalid text), 23 integrity constraint violation, 54 program limit exceeded (a value too
// large for an index entry). Any other SQLSTATE is the database's or the schema's (42: a statement
// the schema does not match, as an older or newer version's; 40: serialization failure, deadlock;
// XX: internal), never the message's: nothing is acknowledged and the gateways resend, rather
// than their messages being dropped as invalid.
const DATA_SQLSTATE = /^(22|23|54)/;

/** Whether the database failed as a whole (down, restarting, disk full, a schema it cannot run), not the batch's data. */
function isDatabaseFailure(error: unknown): boolean {
  if (isConnectionFailure(error) || isStorageFull(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && SQLSTATE.test(code) && !DATA_SQLSTATE.test(code);
}

/** Messages `from` on failed with the database; a full disk says so for the whole batch. */
function failFrom(result: BatchResult, from: number, error: unknown): void {
  const mapped = mapFailure(error) as Error;
  const full = isStorageFull(mapped);
  // The server's own words too ("could not extend file ..."): they name the file for the log.
  const cause = full && mapped.cause ? ` (${oneLine(mapped.cause)})` : '';
  result.outcomes.fill(Outcome.FAILED, from);
  result.reasons.fill(`commit failed: ${oneLine(mapped)}${cause}`, from);
  if (full) result.storageFull = mapped.message;
}

function oneLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]!;
}
