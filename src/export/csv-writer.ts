import { closeSync, openSync, writeSync } from 'node:fs';
import { csvRecord, type CellMode } from '../domain/csv.js';
import type { TimeRange } from '../domain/event-listing.js';
import { EVENT_COLUMNS } from '../domain/events.js';
import type { CreatedIdKey } from '../domain/page-token.js';
import type { EventRepository } from '../store/ports.js';

/** Rows per read: one short read transaction each, so WAL checkpoints keep up with ingest meanwhile. */
export const EXPORT_CHUNK_ROWS = 5000;

/** Positions of the keyset columns in a raw row. */
const CREATED_INDEX = EVENT_COLUMNS.indexOf('created');
const ID_INDEX = EVENT_COLUMNS.indexOf('id');

/** The key before a range that starts at `start`: no id is empty, so `(created, id) > (start, '')` is `created >= start`. */
export function startKey(start: number): CreatedIdKey {
  return { created: start, id: '' };
}

/**
 * Writes the customer's events of the range to `file` as CSV (the header unless `header` is
 * false, then oldest first, text cells as `cells` says), one chunk at a time, so memory stays
 * flat whatever the count: one read (one await) per chunk. Run it in a worker. Returns the
 * number of events written.
 */
export async function writeEventsCsv(
  events: Pick<EventRepository, 'oldestAfter'>,
  customerId: string,
  range: TimeRange,
  file: string,
  header: boolean,
  cells: CellMode,
): Promise<number> {
  const fd = openSync(file, 'w', 0o600);
  try {
    if (header) writeSync(fd, csvRecord(EVENT_COLUMNS));
    let after = startKey(range.start);
    let rows = 0;
    for (;;) {
      const chunk = await events.oldestAfter(customerId, after, range.end, EXPORT_CHUNK_ROWS);
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
