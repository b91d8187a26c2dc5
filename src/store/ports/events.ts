import type { CellMode } from '../../domain/csv.js';
import type { EventRow } from '../../domain/events.js';
import type { CreatedIdKey } from '../../domain/page-token.js';

/** A raw event row (as the export reads them): the values of EVENT_COLUMNS in order. */
export type RawEvent = (string | number | null)[];

/** Up to `limit` events, newest first, as JSON bytes the store built. */
export interface EventItems {
  /**
   * The prefix, then the items' JSON texts joined by commas, without members for absent fields
   * (members in EVENT_COLUMNS order, numbers as JSON.stringify writes them). A buffer of its own:
   * nobody else holds the bytes behind it (src/server/event-text.ts writes into them).
   */
  json: Buffer;
  count: number;
  /** More events follow in the range. */
  more: boolean;
  /** The keyset position of the last item, when there is one. */
  last?: CreatedIdKey;
}

/** Up to `limit` events, oldest first, as CSV records (src/domain/csv.ts) the store wrote. */
export interface CsvChunk {
  /** The records' bytes. */
  csv: Buffer;
  count: number;
  /** The keyset position of the last record, when there is one. */
  last?: CreatedIdKey;
}

export interface EventRepository {
  /** Up to `limit` events of the customer with `start <= created` and `(created, id) < before`, newest first, their JSON after `prefix`. */
  newestBefore(customerId: string, start: number, before: CreatedIdKey, limit: number, prefix?: string): Promise<EventItems>;
  /** As newestBefore, for the events one gateway transmitted. */
  gatewayNewestBefore(customerId: string, gatewayId: string, start: number, before: CreatedIdKey, limit: number, prefix?: string): Promise<EventItems>;
  /** Up to `limit` raw events of the customer with `(created, id) > after` and `created < end`, oldest first. */
  oldestAfter(customerId: string, after: CreatedIdKey, end: number, limit: number): Promise<RawEvent[]>;
  /** The events oldestAfter reads, as CSV records of EVENT_COLUMNS with text cells as `cells` says (a chunk of an export). */
  csvAfter(customerId: string, after: CreatedIdKey, end: number, limit: number, cells: CellMode): Promise<CsvChunk>;
  /** Inserts events of the customer as given (tests, benches, migration) and sends `events-committed`; how many were new. */
  insert(customerId: string, rows: EventRow[]): Promise<number>;
}
