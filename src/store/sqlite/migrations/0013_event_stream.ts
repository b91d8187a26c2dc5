import type { Migration } from './migration.js';

// The live event stream (docs/events.md "Live events") reads events by seq, their commit order.
// seq is the rowid without AUTOINCREMENT, so SQLite would give the largest seq again once that
// event is deleted (retention deletes by `created`, which need not follow seq), and a stream past
// it would never send the new event. event_seq_mark keeps the largest seq ever deleted (the
// trigger runs only when the deleted row was the largest left), and writers number the next event
// above it (event-rows.ts EventInserter). AUTOINCREMENT would write sqlite_sequence per row.
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
