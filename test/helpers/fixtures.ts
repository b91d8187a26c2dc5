import { readFileSync } from 'node:fs';
import type { EventRow } from '../../src/store/sqlite/event-rows.js';
import { eventRow } from './events.js';

const here = new URL('../fixtures/', import.meta.url);

/**
 * The export fixture: events (two outside the range), the range, and the CSV their export must be
 * byte for byte, by default (`csv`) and with cells=raw (`rawCsv`, the stored values).
 */
export function exportFixture(): { rows: EventRow[]; start: number; end: number; csv: string; rawCsv: string } {
  const fixture = JSON.parse(readFileSync(new URL('export-events.json', here), 'utf8')) as {
    start_time_millis: number;
    end_time_millis: number;
    events: (Partial<EventRow> & { created: number })[];
  };
  return {
    rows: fixture.events.map((event) => eventRow(event)),
    start: fixture.start_time_millis,
    end: fixture.end_time_millis,
    csv: readFileSync(new URL('export-events.csv', here), 'utf8'),
    rawCsv: readFileSync(new URL('export-events.raw.csv', here), 'utf8'),
  };
}
