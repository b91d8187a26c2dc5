import { closeSync, openSync, writeSync } from 'node:fs';
import { csvRecord, type CellMode } from '../domain/csv.js';
import type { TimeRange } from '../domain/event-listing.js';
import { EVENT_COLUMNS } from '../domain/events.js';
import { CREATED_INDEX, ID_INDEX, exportChunkStatement, readChunk, startKey } from '../store/events.js';
import type { Db } from '../store/open.js';

/** Rows per read: one short read transaction each, so WAL checkpoints keep up with ingest meanwhile. */
export const EXPORT_CHUNK_ROWS = 5000;

/**
 * Writes the customer's events of the range to `file` as CSV (the header unless `header` is
 * false, then oldest first, text cells as `cells` says), one chunk at a time, so memory stays
 * flat whatever the count. Synchronous: run it in a worker. Returns the number of events written.
 */
export function writeEventsCsv(db: Db, customerId: string, range: TimeRange, file: string, header: boolean, cells: CellMode): number {
  const statement = exportChunkStatement(db);
  const fd = openSync(file, 'w', 0o600);
  try {
    if (header) writeSync(fd, csvRecord(EVENT_COLUMNS));
    let after = startKey(range.start);
    let rows = 0;
    for (;;) {
      const chunk = readChunk(statement, customerId, after, range.end, EXPORT_CHUNK_ROWS);
      if (chunk.length === 0) break;
      let text = '';
      for (const row of chunk) text += csvRecord(row, cells);
      writeSync(fd, text);
      rows += chunk.length;
      const last = chunk[chunk.length - 1]!;
      after = { created: last[CREATED_INDEX] as number, id: last[ID_INDEX] as string };
      if (chunk.length < EXPORT_CHUNK_ROWS) break;
    }
    return rows;
  } finally {
    closeSync(fd);
  }
}
