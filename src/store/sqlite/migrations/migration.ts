import type Database from 'better-sqlite3';

/** One schema change: its statements run in the migration transaction (index.ts). */
export interface Migration {
  /** File name without extension, e.g. `0001_foundation`; the number orders them. */
  name: string;
  up: (db: Database.Database) => void;
  /** Runs once the transaction that applied it committed (what cannot run inside one: a checkpoint). */
  afterCommit?: (db: Database.Database) => void;
}
