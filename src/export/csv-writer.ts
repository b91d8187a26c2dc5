import { closeSync, openSync, writeSync } from 'node:fs';
import { csvRecord, type CellMode } from '../domain/csv.js';
import type { TimeRange } from '../domain/event-listing.js';
import { EVENT_COLUMNS } from '../domain/events.js';
import type { CreatedIdKey } from '../domain/page-token.js';
import type { EventRepository } from '../store/ports/index.js';

/** Rows per read: one short read transaction each, so WAL checkpoints keep up with ingest meanwhile. */
export const EXPORT_CHUNK_ROWS = 5000;

/** The key before a range that starts at `start`: no id is empty, so `(created, id) > (start, '')` is `created >= start`. */
export function startKey(start: number): CreatedIdKey {
  return { created: start, id: '' };
}

/**
 * Writes the customer's events of the range to `file` as CSV, oldest first, one chunk (one read) at
 * a time so that memory stays flat whatever the count; run it in a worker. Returns the events
 * written.
 */
export async function writeEventsCsv(
  events: Pick<EventRepository, 'csvAfter'>,
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
      const chunk = await events.csvAfter(customerId, after, range.end, EXPORT_CHUNK_ROWS, cells);
      if (chunk.count === 0 || !chunk.last) break;
      writeAll(fd, chunk.csv);
      rows += chunk.count;
      after = chunk.last;
      if (chunk.count < EXPORT_CHUNK_ROWS) break;
    }
    return rows;
  } finally {
    closeSync(fd);
  }
}

/** Writes all of the bytes (a write may take fewer). */
function writeAll(fd: number, bytes: Buffer): void {
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
}
