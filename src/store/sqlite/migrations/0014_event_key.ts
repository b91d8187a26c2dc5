import type { Migration } from './migration.js';

// Idempotent ingest without a global index of random ids, which cost the writer a page per event
// (docs/gateways-mqtt.md "Payloads"; bench/README.md "writer-floor"): an event is the same when its
// customer, `created` and id are, so the listing's index becomes UNIQUE. Events whose `created` the
// service stamped keep a UNIQUE (customer_id, id), since a redelivery would be stamped anew. Events
// stored before are not marked as stamped (nothing tells which were).
export const migration: Migration = {
  name: '0014_event_key',
  up(db) {
    db.exec(`
      ALTER TABLE events ADD COLUMN created_stamped INTEGER CHECK (created_stamped = 1);
      DROP INDEX events_customer_created;
      CREATE UNIQUE INDEX events_customer_created ON events(customer_id, created, id);
      CREATE UNIQUE INDEX events_stamped_id ON events(customer_id, id) WHERE created_stamped IS NOT NULL;
      DROP INDEX events_id;
    `);
  },
};
