import type { Migration } from './migration.js';

// Webhooks, as SQLite's 0020 (whose comment says why), and the leases of background work that one
// instance does at a time (docs/webhooks.md "Several instances"): a row per lease, its holder and
// its expiry in milliseconds of the database's clock, so instances with skewed clocks agree.
const T = 'text COLLATE "C"';

export const migration: Migration = {
  name: '0015_webhooks',
  async up(client) {
    await client.query(`
      CREATE TABLE webhooks (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        url text NOT NULL,
        event_types text NOT NULL,
        description text NOT NULL,
        enabled boolean NOT NULL,
        secret bytea NOT NULL,
        previous_secret bytea,
        previous_until bigint,
        created bigint NOT NULL,
        last_updated bigint NOT NULL,
        cursor text NOT NULL,
        failing_since bigint,
        disabled_reason text
      );
      CREATE INDEX webhooks_customer ON webhooks (customer_id, created, id);

      CREATE TABLE webhook_deliveries (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id ${T} NOT NULL UNIQUE,
        webhook_id ${T} NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        customer_id ${T} NOT NULL,
        type text NOT NULL,
        attempts integer NOT NULL,
        status text NOT NULL,
        response_status integer,
        latency_ms integer,
        next_attempt bigint,
        created bigint NOT NULL,
        from_position text,
        upto_position text,
        payload text
      );
      CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (webhook_id, status, seq);

      CREATE TABLE alert_rules (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        kind text NOT NULL,
        parameters text NOT NULL,
        created bigint NOT NULL
      );
      CREATE INDEX alert_rules_customer ON alert_rules (customer_id, created, id);

      CREATE TABLE alerts (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        rule_id ${T} NOT NULL,
        kind text NOT NULL,
        subject_type text NOT NULL,
        subject_id ${T} NOT NULL,
        state text NOT NULL,
        opened bigint NOT NULL,
        resolved bigint,
        details text NOT NULL
      );
      CREATE UNIQUE INDEX alerts_open_once ON alerts (rule_id, subject_type, subject_id) WHERE state = 'OPEN';
      CREATE INDEX alerts_customer ON alerts (customer_id, opened, id);

      CREATE TABLE leases (
        name ${T} PRIMARY KEY,
        holder ${T} NOT NULL,
        expires bigint NOT NULL
      );
    `);
  },
};
