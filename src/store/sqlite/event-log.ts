import type { Statement } from 'better-sqlite3';
import type { CommittedEvent, EventLogRead, EventLogRepository, StreamPosition } from '../ports/index.js';
import { ITEM_JSON } from './event-json.js';
import type { Db } from './open.js';
import { LIMIT } from './statements.js';

/**
 * Rows of the events table one read walks at most (by seq, of every customer): the reads run on
 * the server's thread, and a customer whose events are sparse among others' must not make one
 * read walk millions of rows.
 */
export const SCAN_WINDOW = 20_000;

/** The largest seq given so far: the largest left, or the largest deleted (migration 0013). */
const HIGH_WATER_SQL = `SELECT max(coalesce((SELECT max(seq) FROM events), 0), (SELECT seq FROM event_seq_mark WHERE id = 1))`;

/**
 * A range of seq (the rowid: no index needed), the customer checked on the row. NOT INDEXED: the
 * planner would otherwise take the customer's (or gateway's) index, walk every event of it and
 * sort them, a cost per event read that grows with the table.
 */
export const AFTER_SQL = `SELECT seq, ${ITEM_JSON}, gateway_id FROM events NOT INDEXED
  WHERE seq > @after AND seq <= @upto AND customer_id = @customerId ORDER BY seq ${LIMIT}`;
export const GATEWAY_AFTER_SQL = `SELECT seq, ${ITEM_JSON}, gateway_id FROM events NOT INDEXED
  WHERE seq > @after AND seq <= @upto AND customer_id = @customerId AND gateway_id = @gatewayId ORDER BY seq ${LIMIT}`;

/**
 * The events in commit order on SQLite: seq, which one writer at a time assigns inside its
 * transaction, so a later commit always has larger seqs. A position is `[seq]`.
 */
export class SqliteEventLog implements EventLogRepository {
  private readonly highWater: Statement<[], number>;
  private readonly afterStatement: Statement;
  private readonly gatewayAfterStatement: Statement;
  private readonly firstSince: Statement<[string, number], number | null>;

  constructor(db: Db) {
    this.highWater = db.prepare<[], number>(HIGH_WATER_SQL).pluck();
    this.afterStatement = db.prepare(AFTER_SQL).raw(true);
    this.gatewayAfterStatement = db.prepare(GATEWAY_AFTER_SQL).raw(true);
    this.firstSince = db.prepare<[string, number], number | null>('SELECT min(seq) FROM events WHERE customer_id = ? AND created >= ?').pluck();
  }

  async head(): Promise<StreamPosition> {
    return [this.highWater.get()!];
  }

  /** The head: one writer at a time numbers events in commit order, so nothing committed lies beyond it. */
  frontier(): Promise<StreamPosition> {
    return this.head();
  }

  async after(customerId: string, after: StreamPosition, limit: number, gatewayId?: string): Promise<EventLogRead> {
    // The high water first: an event committed after it has a larger seq, so the range below it
    // is complete whatever commits while it is read.
    const highWater = this.highWater.get()!;
    const from = after[0]!;
    const upto = Math.min(from + SCAN_WINDOW, highWater);
    if (upto <= from) return { events: [], reached: after, more: false };
    const parameters = { after: from, upto, customerId, limit, gatewayId };
    const rows = (gatewayId === undefined ? this.afterStatement : this.gatewayAfterStatement).all(parameters) as [number, string, string | null][];
    const events: CommittedEvent[] = rows.map(([seq, json, gateway]) => ({ position: [seq], json, gatewayId: gateway }));
    if (rows.length === limit) return { events, reached: events[events.length - 1]!.position, more: true };
    return { events, reached: [upto], more: upto < highWater };
  }

  async before(customerId: string, since: number): Promise<StreamPosition> {
    const first = this.firstSince.get(customerId, since);
    return first === null || first === undefined ? this.head() : [first - 1];
  }

  /** A SQLite position: `[seq]`. */
  isPosition(value: unknown): value is StreamPosition {
    return Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0]) && (value[0] as number) >= 0;
  }
}
