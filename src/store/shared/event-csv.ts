import { csvRecord, type CellMode } from '../../domain/csv.js';
import { EVENT_COLUMNS } from '../../domain/events.js';
import type { CsvChunk, RawEvent } from '../ports/index.js';

/**
 * Export chunks written in JavaScript from raw rows, shared by both stores: the PostgreSQL store
 * writes every chunk so, the SQLite store those its own writer leaves to it (see
 * src/store/sqlite/event-csv.ts).
 */

/** Positions of the keyset columns in a raw row. */
const CREATED_INDEX = EVENT_COLUMNS.indexOf('created');
const ID_INDEX = EVENT_COLUMNS.indexOf('id');

/** The rows (oldest first) as CSV records, text cells as `cells` says, keyed by the last row. */
export function csvChunkOfRows(rows: readonly RawEvent[], cells: CellMode): CsvChunk {
  if (rows.length === 0) return { csv: Buffer.alloc(0), count: 0 };
  let text = '';
  for (const row of rows) text += csvRecord(row, cells);
  const last = rows[rows.length - 1]!;
  return { csv: Buffer.from(text), count: rows.length, last: { created: last[CREATED_INDEX] as number, id: last[ID_INDEX] as string } };
}
