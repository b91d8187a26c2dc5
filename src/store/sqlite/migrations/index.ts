import type Database from 'better-sqlite3';
import { migration as m0001 } from './0001_foundation.js';
import { migration as m0002 } from './0002_provisioning.js';
import { migration as m0003 } from './0003_exports.js';
import { migration as m0004 } from './0004_jobs_assets.js';
import { migration as m0005 } from './0005_dead_letters.js';
import { migration as m0006 } from './0006_export_cells.js';
import { migration as m0007 } from './0007_export_leases.js';
import { migration as m0008 } from './0008_login_failures.js';
import { migration as m0009 } from './0009_audit_log.js';
import { migration as m0010 } from './0010_api_keys.js';
import { migration as m0011 } from './0011_gateway_certificates.js';
import { migration as m0012 } from './0012_retention.js';
import { migration as m0013 } from './0013_event_stream.js';
import { migration as m0014 } from './0014_event_key.js';
import { migration as m0015 } from './0015_plain_text.js';
import { migration as m0016 } from './0016_least_privilege.js';
import { migration as m0017 } from './0017_sealed_gateway_keys.js';
import { migration as m0018 } from './0018_devices.js';
import { migration as m0019 } from './0019_commands.js';
import { migration as m0020 } from './0020_webhooks.js';
import { migration as m0021 } from './0021_alert_trackers.js';
import type { Migration } from './migration.js';

/** Every migration, in order. A new one is a new file and one line here. */
export const migrations: Migration[] = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011, m0012, m0013, m0014, m0015, m0016, m0017, m0018, m0019, m0020, m0021];

/**
 * Applies the pending migrations in one transaction; a failure names the migration and applies
 * none. What is pending is read inside that IMMEDIATE transaction: of two processes starting on
 * one database together (serve and an operator command, after an upgrade), one migrates and the
 * other, waiting for the write lock, then finds nothing to do.
 */
export function applyMigrations(db: Database.Database): string[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)');
  const appliedNames = db.prepare('SELECT name FROM schema_migrations').pluck();
  const pendingNow = () => {
    const applied = new Set(appliedNames.all() as string[]);
    return migrations.filter((m) => !applied.has(m.name));
  };
  // Nothing to do (nearly every start): no write lock taken.
  if (pendingNow().length === 0) return [];
  const record = db.prepare('INSERT INTO schema_migrations (name, applied) VALUES (?, ?)');
  const applied = db
    .transaction(() => {
      const pending = pendingNow();
      for (const m of pending) {
        try {
          m.up(db);
        } catch (cause) {
          throw new Error(`migration ${m.name} failed: ${(cause as Error).message}`, { cause });
        }
        record.run(m.name, Date.now());
      }
      return pending;
    })
    .immediate();
  for (const m of applied) m.afterCommit?.(db);
  return applied.map((m) => m.name);
}
