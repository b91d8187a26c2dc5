import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EventRow } from '../../src/store/sqlite/event-rows.js';
import { eventRow } from './events.js';

/** The repository's fixtures/ folder: sample payloads and event sets, for tests, benches and demos. */
export const FIXTURES = new URL('../../fixtures/', import.meta.url);

/** The file path of `name` under fixtures/ (`forge-ca/ca.crt`). */
export const fixturePath = (name: string): string => fileURLToPath(new URL(name, FIXTURES));

/** The text of `name` under fixtures/. */
export const readFixture = (name: string): string => readFileSync(fixturePath(name), 'utf8');

/**
 * The export fixture: events (two outside the range), the range, and the CSV their export must be
 * byte for byte, by default (`csv`) and with cells=raw (`rawCsv`, the stored values).
 */
export function exportFixture(): { rows: EventRow[]; start: number; end: number; csv: string; rawCsv: string } {
  const fixture = JSON.parse(readFixture('export-events.json')) as {
    start_time_millis: number;
    end_time_millis: number;
    events: (Partial<EventRow> & { created: number })[];
  };
  return {
    rows: fixture.events.map((event) => eventRow(event)),
    start: fixture.start_time_millis,
    end: fixture.end_time_millis,
    csv: readFixture('export-events.csv'),
    rawCsv: readFixture('export-events.raw.csv'),
  };
}
