import type { Migration } from './migration.js';

// Webhooks (docs/webhooks.md). A webhook keeps a cursor on the commit order of events (a JSON
// position, as the live stream's) instead of a copy of them; its secrets are sealed
// (store/shared/sealing.ts). Its deliveries are a queue in `seq` order: a batch names the range of
// the commit order it carries (`from_position`..`upto_position`), any other message its `payload`.
export const migration: Migration = {
  name: '0020_webhooks',
  up(db) {
    db.exec(`
      CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        event_types TEXT NOT NULL,
        description TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        secret BLOB NOT NULL,
        previous_secret BLOB,
        previous_until INTEGER,
        created INTEGER NOT NULL,
        last_updated INTEGER NOT NULL,
        cursor TEXT NOT NULL,
        failing_since INTEGER,
        disabled_reason TEXT
      ) STRICT;
      CREATE INDEX webhooks_customer ON webhooks(customer_id, created, id);

      CREATE TABLE webhook_deliveries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        customer_id TEXT NOT NULL,
        type TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        status TEXT NOT NULL,
        response_status INTEGER,
        latency_ms INTEGER,
        next_attempt INTEGER,
        created INTEGER NOT NULL,
        from_position TEXT,
        upto_position TEXT,
        payload TEXT
      ) STRICT;
      CREATE INDEX webhook_deliveries_queue ON webhook_deliveries(webhook_id, status, seq);

      CREATE TABLE alert_rules (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        parameters TEXT NOT NULL,
        created INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX alert_rules_customer ON alert_rules(customer_id, created, id);

      CREATE TABLE alerts (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        rule_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        subject_type TEXT NOT NULL,
        subject_id TEXT NOT NULL,
        state TEXT NOT NULL,
        opened INTEGER NOT NULL,
        resolved INTEGER,
        details TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX alerts_open_once ON alerts(rule_id, subject_type, subject_id) WHERE state = 'OPEN';
      CREATE INDEX alerts_customer ON alerts(customer_id, opened, id);
    `);
  },
};
