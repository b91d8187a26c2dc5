import type { GatewayReport, EventValues } from '../mqtt/payload.js';
import { EVENT_COLUMNS, EVENT_SELECT } from './event-rows.js';
import type { Db } from './open.js';

/** The gateway fields an event is stamped with at ingest (DESIGN.md "Events"). */
export interface IngestGateway {
  customer_id: string;
  usecase: string;
  station: string;
}

/** A gateway as the broker sees it at connect: its customer, and whether it was deleted. */
export interface ConnectingGateway {
  id: string;
  customer_id: string;
  deleted: number | null;
}

// Rows per multi-row INSERT: one native call for many rows; 32 x 16 parameters stays far below
// SQLite's limit of 32766 host parameters.
const CHUNK = 32;

/**
 * Settings of the connection that commits ingest batches. A batch of random event ids touches
 * about one page of the id index per event: a bigger page cache spares re-reading them, and a
 * larger WAL before the automatic checkpoint lets a page changed by many batches be copied back once.
 */
export function tuneForIngest(db: Db): void {
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 10000');
}

/** The statements of MQTT ingest, prepared once per connection (main thread or writer thread). */
export class IngestStore {
  private readonly touch;
  private readonly report;
  private readonly lookup;
  private readonly insertOne;
  private readonly insertChunk;

  constructor(readonly db: Db) {
    // The last message feeds connectivity_status; RETURNING gives the current usecase and station,
    // so an event is stamped with the gateway as it is when the event is stored.
    this.touch = db.prepare<[number, string], IngestGateway>(
      `UPDATE gateways SET last_message = max(coalesce(last_message, 0), ?)
       WHERE id = ? AND deleted IS NULL
       RETURNING customer_id, usecase, station`,
    );
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
    this.lookup = db.prepare<[string], ConnectingGateway>('SELECT id, customer_id, deleted FROM gateways WHERE id = ?');
    const row = `(?, ${EVENT_COLUMNS.map(() => '?').join(', ')})`;
    const insert = (rows: number) =>
      db.prepare(
        `INSERT INTO events (customer_id, ${EVENT_SELECT}) VALUES ${new Array(rows).fill(row).join(', ')}
         ON CONFLICT (id) DO NOTHING`,
      );
    this.insertOne = insert(1);
    this.insertChunk = insert(CHUNK);
  }

  /** The gateway a client certificate names, deleted or not; undefined when unknown. */
  gateway(id: string): ConnectingGateway | undefined {
    return this.lookup.get(id);
  }

  /** Records a message of the gateway at `at`; undefined when the gateway is gone or deleted. */
  touchGateway(id: string, at: number): IngestGateway | undefined {
    return this.touch.get(at, id);
  }

  /** Applies a `class: "gateway"` report; true when the record changed (version bumped). */
  applyReport(id: string, report: GatewayReport, at: number): boolean {
    const { model = null, manufacturer = null, firmware = null, type = null } = report;
    return this.report.run({ id, at, model, manufacturer, firmware, type }).changes === 1;
  }

  /**
   * Inserts events of one customer (gateway slots already filled); returns how many were new,
   * the rest being ids already stored (idempotent ingest).
   */
  insertEvents(customerId: string, events: EventValues[]): number {
    let inserted = 0;
    let i = 0;
    if (events.length >= CHUNK) {
      const params: (string | number | null)[] = [];
      for (; i + CHUNK <= events.length; i += CHUNK) {
        params.length = 0;
        for (let j = i; j < i + CHUNK; j++) params.push(customerId, ...events[j]!);
        inserted += this.insertChunk.run(params).changes;
      }
    }
    for (; i < events.length; i++) inserted += this.insertOne.run(customerId, ...events[i]!).changes;
    return inserted;
  }
}
