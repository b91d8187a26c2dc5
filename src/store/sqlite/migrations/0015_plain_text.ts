import type { Migration } from './migration.js';

// `plain_text` (domain/events.ts): 1 when none of the event's texts holds a character that JSON
// escapes, so that the list's JSON writes them without json_quote (bench/README.md "events").
// Events stored before are NULL and take the escaping path, which writes the same bytes. No CHECK:
// SQLite would test it against every stored row, and this migration must cost nothing at millions
// of events; the STRICT table keeps it an INTEGER, and only 1 or NULL is ever written.
export const migration: Migration = {
  name: '0015_plain_text',
  up(db) {
    db.exec('ALTER TABLE events ADD COLUMN plain_text INTEGER');
  },
};
