import type { Migration } from './migration.js';

// The live event stream (docs/events.md "Live events") in commit order. Instances commit
// concurrently, so no sequence is commit order: a row with a smaller number may commit later, and
// a reader that went past it would never send it. Each row records the id of the transaction that
// wrote it (tx, pg_current_xact_id()) and its number in that transaction (seq); readers take only
// rows whose transaction is older than the oldest one still running (pg_snapshot_xmin), which can
// never gain a row again, in (tx, seq) order. Rows written before this migration have no tx: they
// are history and never streamed. The columns are added without a default first and the default
// set after, so no existing row is rewritten; the index is partial, so it is built empty and holds
// only streamed rows.
export const migration: Migration = {
  name: '0008_event_stream',
  async up(client) {
    await client.query(`
      CREATE SEQUENCE events_seq CACHE 1000;
      ALTER TABLE events ADD COLUMN tx bigint;
      ALTER TABLE events ADD COLUMN seq bigint;
      ALTER TABLE events ALTER COLUMN tx SET DEFAULT (pg_current_xact_id()::text::bigint);
      ALTER TABLE events ALTER COLUMN seq SET DEFAULT nextval('events_seq');
      ALTER SEQUENCE events_seq OWNED BY events.seq;
      CREATE INDEX events_commit_order ON events (customer_id, tx, seq) WHERE tx IS NOT NULL;
    `);
  },
};
