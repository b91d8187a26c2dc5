import type pg from 'pg';
import { ADVISORY_LOCKS } from '../locks.js';
import { migration as m0001 } from './0001_foundation.js';
import { migration as m0002 } from './0002_export_leases.js';
import { migration as m0003 } from './0003_login_failures.js';
import { migration as m0004 } from './0004_audit_log.js';
import { migration as m0005 } from './0005_api_keys.js';
import { migration as m0006 } from './0006_gateway_certificates.js';
import { migration as m0007 } from './0007_retention.js';
import { migration as m0008 } from './0008_event_stream.js';
import { migration as m0009 } from './0009_event_key.js';
import { migration as m0010 } from './0010_plain_text.js';
import { migration as m0011 } from './0011_least_privilege.js';
import { migration as m0012 } from './0012_sealed_gateway_keys.js';
import { migration as m0013 } from './0013_devices.js';
import { migration as m0014 } from './0014_commands.js';
import { migration as m0015 } from './0015_webhooks.js';
import { migration as m0016 } from './0016_alert_trackers.js';
import { migration as m0017 } from './0017_gateway_presence.js';
import type { Migration } from './migration.js';

/** Every migration, in order. A new one is a new file and one line here. */
export const migrations: Migration[] = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011, m0012, m0013, m0014, m0015, m0016, m0017];

const MIGRATION_LOCK = ADVISORY_LOCKS.migrations;

/**
 * Applies the pending migrations in one transaction under `pg_advisory_lock`, so that of several
 * processes starting together one migrates and the others wait and find nothing to do. A failure
 * names the migration and applies none. Returns the names applied.
 */
export async function applyMigrations(client: pg.PoolClient): Promise<string[]> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied bigint NOT NULL)');
    const applied = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name));
    const pending = migrations.filter((m) => !applied.has(m.name));
    if (pending.length === 0) return [];
    await client.query('BEGIN');
    try {
      for (const m of pending) {
        try {
          await m.up(client);
        } catch (cause) {
          throw new Error(`migration ${m.name} failed: ${(cause as Error).message}`, { cause });
        }
        await client.query('INSERT INTO schema_migrations (name, applied) VALUES ($1, $2)', [m.name, Date.now()]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    return pending.map((m) => m.name);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}
