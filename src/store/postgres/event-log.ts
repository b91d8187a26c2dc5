import { comparePositions } from '../../domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, EventLogRepository, StreamPosition } from '../ports/index.js';
import { EVENT_SELECT } from './events.js';
import type { Database } from './pool.js';
import { eventJson } from '../shared/event-json.js';

/**
 * The oldest transaction still running when the statement began: every transaction below it has
 * ended, so no row with a smaller tx can ever appear again (migration 0008).
 */
const HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())::text::bigint';

/** One range of the partial index (customer_id, tx, seq), below the horizon; the horizon comes back even when no row does. */
const afterSql = (gatewayFilter: string) => `SELECT h.horizon, e.* FROM (SELECT ${HORIZON} AS horizon) h
  LEFT JOIN LATERAL (SELECT tx, seq, ${EVENT_SELECT} FROM events
    WHERE customer_id = $1 AND tx IS NOT NULL AND (tx, seq) > ($2, $3) AND tx < h.horizon${gatewayFilter}
    ORDER BY tx, seq LIMIT $4) e ON true`;
const AFTER_SQL = afterSql('');
const GATEWAY_AFTER_SQL = afterSql(' AND gateway_id = $5');

/**
 * The events in commit order on PostgreSQL: a position is `[tx, seq]`, read only below the
 * horizon. A stream may so lag the commit by as long as the oldest write transaction of the
 * database runs (an ingest batch: milliseconds).
 */
export class PgEventLog implements EventLogRepository {
  constructor(private readonly db: Database) {}

  /** `[horizon, 0]`: transactions still running may commit after the stream starts, and are sent. */
  async head(): Promise<StreamPosition> {
    const { rows } = await this.db.query<{ horizon: number }>(`SELECT ${HORIZON} AS horizon`);
    return [rows[0]!.horizon, 0];
  }

  /** `[xmax, 0]`: every transaction that has begun writing is below the snapshot's xmax. */
  async frontier(): Promise<StreamPosition> {
    const { rows } = await this.db.query<{ next: number }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next');
    return [rows[0]!.next, 0];
  }

  async after(customerId: string, after: StreamPosition, limit: number, gatewayId?: string): Promise<EventLogRead> {
    const parameters: unknown[] = [customerId, after[0], after[1], limit];
    if (gatewayId !== undefined) parameters.push(gatewayId);
    const rows = await this.db.queryArrays(gatewayId === undefined ? AFTER_SQL : GATEWAY_AFTER_SQL, parameters);
    const horizon = rows[0]![0] as number;
    const events: CommittedEvent[] = [];
    for (const row of rows) {
      if (row[1] === null) continue;
      const values = row.slice(3);
      events.push({ position: [row[1] as number, row[2] as number], json: eventJson(values), gatewayId: values[GATEWAY_ID] as string | null });
    }
    if (events.length === limit) return { events, reached: events[events.length - 1]!.position, more: true };
    const below: StreamPosition = [horizon, 0];
    return { events, reached: comparePositions(below, after) > 0 ? below : after, more: false };
  }

  async before(customerId: string, since: number): Promise<StreamPosition> {
    const { rows } = await this.db.query<{ tx: number; seq: number }>(
      'SELECT tx, seq FROM events WHERE customer_id = $1 AND created >= $2 AND tx IS NOT NULL ORDER BY tx, seq LIMIT 1',
      [customerId, since],
    );
    const first = rows[0];
    return first ? [first.tx, first.seq - 1] : this.head();
  }

  isPosition(value: unknown): value is StreamPosition {
    return Array.isArray(value) && value.length === 2 && value.every((n) => Number.isSafeInteger(n) && n >= 0);
  }
}

const GATEWAY_ID = EVENT_SELECT.split(', ').indexOf('gateway_id');
