import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { applyMigrations } from './migrations/index.js';

export type Db = Database.Database;

/** Opens the deployment database with the pragmas every connection needs; migrates unless `readonly`. */
export function openDatabase(file: string, options: { readonly?: boolean; migrate?: boolean } = {}): Db {
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  // busy_timeout first: every later statement, the WAL switch included, may meet a writer in another process.
  db.pragma('busy_timeout = 5000');
  if (!options.readonly) {
    if (file !== ':memory:') chmodSync(file, 0o600);
    db.pragma('journal_mode = WAL');
    // NORMAL is durable in WAL mode against process crashes; an OS crash may lose the last transactions only.
    db.pragma('synchronous = NORMAL');
    // A long reader (an online backup, a big export) holds checkpoints back and the WAL grows
    // meanwhile; whichever connection restarts it afterwards gives that disk space back above 64 MiB.
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    // A value deleted or set to NULL is overwritten with zeros in its page (no extra I/O), so a
    // sealed gateway key erased at redemption leaves no copy in the file or in a backup of it
    // (docs/gateways.md "No gateway key at rest").
    db.pragma('secure_delete = FAST');
  }
  db.pragma('foreign_keys = ON');
  if (options.migrate ?? !options.readonly) applyMigrations(db);
  return db;
}

/** The database file of a data directory. */
export function databaseFile(dataDir: string): string {
  return join(dataDir, 'scanhub.db');
}
