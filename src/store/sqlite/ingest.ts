import { lastMessageDue } from '../../domain/connectivity.js';
import type { GatewayReport, EventValues } from '../../domain/payload.js';
import type { IngestGateway } from '../../domain/ingest-batch-plan.js';
export type { IngestGateway } from '../../domain/ingest-batch-plan.js';
import { DeadLetterStore } from './dead-letters.js';
import { EventInserter } from './event-rows.js';
import type { Db } from './open.js';
import type { ConnectingGateway, DeadLetter } from '../ports/index.js';

/**
 * Settings of the connection that commits ingest batches. A batch of random event ids touches
 * about one page of the id index per event: a bigger page cache spares re-reading them. The
 * checkpointer thread copies the WAL back into the database; this connection checkpoints itself
 * only when the WAL grows past `walLimitPages` anyway (so that it is restarted and stays bounded).
 */
export function tuneForIngest(db: Db, walLimitPages: number): void {
  db.pragma('cache_size = -65536');
  db.pragma(`wal_autocheckpoint = ${walLimitPages}`);
}

/** The statements of MQTT ingest, prepared once per connection (main thread or writer thread). */
export class IngestStore {
  private readonly current;
  private readonly touch;
  private readonly report;
  private readonly lookup;
  private readonly insert;
  private readonly deadLetters;

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
    // One lookup per connect (never per message): the gateway, and the status of the presented certificate.
    // The status as domain/gateway-certificates.ts names it; NULL for a serial no gateway has.
    this.lookup = db.prepare<[string, string], ConnectingGateway>(
      `SELECT id, customer_id, deleted,
         (SELECT CASE WHEN revoked IS NOT NULL THEN 'revoked' WHEN delivered_at IS NULL THEN 'pending' ELSE 'active' END
          FROM gateway_certificates WHERE serial = ?) AS certificate
       FROM gateways WHERE id = ?`,
    );
    this.insert = new EventInserter(db);
    this.deadLetters = new DeadLetterStore(db);
  }

  /** The gateway a client certificate names, deleted or not, and the status of the certificate `serial`; undefined when unknown. */
  gateway(id: string, serial: string): ConnectingGateway | undefined {
    return this.lookup.get(serial.toLowerCase(), id);
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

  /** Keeps a quarantined message; returns its seq. */
  insertDeadLetter(letter: DeadLetter): number {
    return this.deadLetters.add(letter);
  }

  /**
   * Inserts events (values in STORED_EVENT_COLUMNS order, gateway slots filled); returns how
   * many were new, the rest being events already stored (idempotent ingest).
   */
  insertEvents(events: EventValues[]): number {
    return this.insert.insertAll(events);
  }
}
