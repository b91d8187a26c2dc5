import type { Migration } from './migration.js';

// Idempotent ingest without a global index of random ids (docs/gateways-mqtt.md "Payloads"). The
// UNIQUE index on the event id dirtied a page of its own for nearly every event (ids are random),
// which held the writer to a third of its rate without it (bench/README.md, "the SQLite ingest
// writer alone"). An event is now the same event when its customer, `created` and id are: the
// listing's index (customer_id, created, id), which every insert updates anyway and near its end,
// becomes UNIQUE. A QoS 1 redelivery is an exact copy, so it is still ignored; an event whose
// `created` the service stamped at receipt (the device sent none) would be stamped anew when
// redelivered, so those events, and only those, keep a UNIQUE (customer_id, id) of their own.
// One customer's ids no longer hide another customer's events. Events stored before this
// migration are not marked as stamped (nothing tells which were).
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
