import type { Migration } from './migration.js';

// The live event stream (docs/events.md "Live events") reads events by seq, their commit order.
// seq is the rowid without AUTOINCREMENT: SQLite gives a new row the largest rowid plus one, so
// once the event with the largest seq is deleted (retention deletes by `created`, and an event
// with an old `created` may be the newest), its seq would be given again, and a stream that had
// passed it would never send the new event. event_seq_mark keeps the largest seq ever deleted as
// the largest: the trigger runs only when the deleted row was the largest left (a rowid max is
// one look at the end of the table), and writers (event-rows.ts EventSeqFloor) number the next
// event above the mark. AUTOINCREMENT would do the same at the cost of a write of
// sqlite_sequence per inserted row, and of rebuilding the events table to add it.
export const migration: Migration = {
  name: '0013_event_stream',
  up(db) {
    db.exec(`
      CREATE TABLE event_seq_mark (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL
      ) STRICT;
      INSERT INTO event_seq_mark (id, seq) VALUES (1, coalesce((SELECT max(seq) FROM events), 0));
      CREATE TRIGGER events_seq_mark AFTER DELETE ON events
        WHEN old.seq > coalesce((SELECT max(seq) FROM events), 0)
        BEGIN
          UPDATE event_seq_mark SET seq = max(seq, old.seq) WHERE id = 1;
        END;
    `);
  },
};
