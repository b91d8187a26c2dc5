import type { Migration } from './migration.js';

// `plain_text` (domain/events.ts): 1 when none of the event's texts holds a character that JSON
// escapes, so that the list's JSON writes them between quotes without json_quote, about a fifth of
// a 500-event page's statement (bench/README.md, "Issue 17: the read path"). Events stored before
// are NULL and take the escaping path, which writes the same bytes. No CHECK: SQLite tests a new
// column's CHECK against every row already stored, and this migration must cost nothing at 10 M
// events; the STRICT table keeps it an INTEGER, and only 1 or NULL is ever written.
export const migration: Migration = {
  name: '0015_plain_text',
  up(db) {
    db.exec('ALTER TABLE events ADD COLUMN plain_text INTEGER');
  },
};
