import type { Migration } from './migration.js';

// Commands to gateways (docs/commands.md). `seq` is a gateway's queue order (creation order, also
// within one bulk call); the partial index holds only what waits to be sent, so that the claim of
// a gateway's next commands reads no delivered or finished ones. A stored subscription to the
// command topic is the session state a gateway with a persistent session finds again at connect.
export const migration: Migration = {
  name: '0019_commands',
  up(db) {
    db.exec(`
      CREATE TABLE commands (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        customer_id TEXT NOT NULL,
        gateway_id TEXT NOT NULL REFERENCES gateways (id),
        device_id TEXT,
        name TEXT NOT NULL,
        parameters TEXT NOT NULL,
        status TEXT NOT NULL,
        created INTEGER NOT NULL,
        last_updated INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        delivered_at INTEGER,
        completed_at INTEGER,
        details TEXT,
        attempts INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX commands_of_gateway ON commands (customer_id, gateway_id, created, id);
      CREATE INDEX commands_queued ON commands (gateway_id, seq) WHERE status = 'QUEUED';
      CREATE INDEX commands_open ON commands (expires_at) WHERE status IN ('QUEUED', 'DELIVERED');

      CREATE TABLE command_subscriptions (
        gateway_id TEXT PRIMARY KEY REFERENCES gateways (id),
        qos INTEGER NOT NULL,
        created INTEGER NOT NULL
      ) STRICT;
    `);
  },
};
