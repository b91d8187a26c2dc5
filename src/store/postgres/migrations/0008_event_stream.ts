import type { Migration } from './migration.js';

// The live event stream reads events in commit order (docs/events.md "Live events"). Instances
// commit concurrently, so no sequence is commit order: each row records its transaction's id (tx)
// and its number in it (seq), and readers take only rows of transactions older than the oldest one
// still running (pg_snapshot_xmin), in (tx, seq) order. Rows written before have no tx and are
// never streamed. The default is set after the columns are added, so no row is rewritten; the index
// is partial, so it is built empty.
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
