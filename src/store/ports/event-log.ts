import type { StreamPosition } from '../../domain/stream-cursor.js';

/**
 * A position in the commit order of events (docs/events.md "Live events"): SQLite `[seq]`, the
 * rowid its one writer assigns in commit order; PostgreSQL `[tx, seq]`, the writing transaction's
 * id and the row's number in it. Positions compare element by element (comparePositions).
 */
export type { StreamPosition };

/** An event as the live stream sends it: its position and its JSON as the events list writes it. */
export interface CommittedEvent {
  position: StreamPosition;
  /** The event's JSON text, absent fields left out (the bytes of an item of GET /events). */
  json: string;
  gatewayId: string | null;
  /**
   * Handed over by a commit (store/shared/committed-events.ts): the commit's events as UTF-8, their
   * JSON texts separated by commas, and this event's bytes in it from `start` to `end`, so that a
   * run of events of one commit is one slice of bytes; and its `type` (`scan` for none), so that
   * it is matched without reading its JSON.
   */
  utf8?: Buffer;
  start?: number;
  end?: number;
  type?: string;
}

/** One read of the commit order. */
export interface EventLogRead {
  /** The customer's events after the position, in commit order. */
  events: CommittedEvent[];
  /** How far the read got: no event of the customer up to here is left out, now or later. At least the position read after. */
  reached: StreamPosition;
  /** The read stopped at its limit or its scan window: more may follow at once. */
  more: boolean;
}

/**
 * The events in commit order, for the live stream: no event is ever read before one committed
 * before it, so a reader that goes on from its position misses none and sees none twice.
 */
export interface EventLogRepository {
  /** Where a stream that starts now begins: nothing committed after this call comes before it. */
  head(): Promise<StreamPosition>;
  /** A position past every event committed so far (a cursor beyond it is not of this database's events). */
  frontier(): Promise<StreamPosition>;
  /** Up to `limit` events of the customer (of one gateway, when given) after the position. */
  after(customerId: string, after: StreamPosition, limit: number, gatewayId?: string): Promise<EventLogRead>;
  /**
   * A position just before the customer's first event (in commit order) created at or after
   * `since`: a reader going on from it reads that event and everything committed after it. The
   * head when there is none.
   */
  before(customerId: string, since: number): Promise<StreamPosition>;
  /** Whether the value has the shape of this store's positions (a cursor is text a client sends). */
  isPosition(value: unknown): value is StreamPosition;
}
