import type { Migration } from './migration.js';

// Idempotent ingest on the event's customer, `created` and id, as SQLite's migration 0014 (whose
// comment says why): the listing's index becomes UNIQUE, stamped events (the device sent no
// `created`) keep a UNIQUE (customer_id, id) of their own, and the primary key on the id goes,
// so that one customer's ids no longer hide another customer's events.
export const migration: Migration = {
  name: '0009_event_key',
  async up(client) {
    await client.query(`
      ALTER TABLE events ADD COLUMN created_stamped smallint CHECK (created_stamped = 1);
      DROP INDEX events_customer_created;
      CREATE UNIQUE INDEX events_customer_created ON events (customer_id, created DESC, id DESC);
      CREATE UNIQUE INDEX events_stamped_id ON events (customer_id, id) WHERE created_stamped IS NOT NULL;
      ALTER TABLE events DROP CONSTRAINT events_pkey;
    `);
  },
};
