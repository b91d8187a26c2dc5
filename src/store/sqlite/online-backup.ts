import Database from 'better-sqlite3';
import { openDatabase } from './open.js';

/**
 * Pages copied per step of the online backup: 2,048 pages (8 MiB at SQLite's default 4 KiB) keep
 * each step to a few milliseconds of this process's event loop, so that a signal can cancel it.
 */
const PAGES_PER_STEP = 2048;

/** What the copy holds: the size of the snapshot it copied. */
export interface DatabaseCopy {
  pages: number;
  pageSize: number;
  sqliteVersion: string;
}

/**
 * Copies the live database `source` into the new file `destination` with SQLite's online backup API
 * while `serve` writes it: one read transaction is held across the steps, or every commit between
 * two would start the copy over (docs/backup.md "Backup"). The copy is one self-contained file
 * (`journal_mode = DELETE`) without sealed gateway keys. `shouldStop`, asked before each step, ends
 * the copy with its error (the destination is removed).
 */
export async function copyDatabase(
  source: string,
  destination: string,
  hooks: { onSnapshot?: (pages: number, pageSize: number) => void; onProgress?: (copied: number, total: number) => void; shouldStop?: () => Error | undefined } = {},
): Promise<DatabaseCopy> {
  const db = openDatabase(source, { migrate: false });
  try {
    db.exec('BEGIN');
    // A deferred transaction takes its snapshot at the first read.
    const pages = db.pragma('page_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    hooks.onSnapshot?.(pages, pageSize);
    await db.backup(destination, {
      progress: ({ totalPages, remainingPages }) => {
        const stop = hooks.shouldStop?.();
        if (stop) throw stop;
        hooks.onProgress?.(totalPages - remainingPages, totalPages);
        return PAGES_PER_STEP;
      },
    });
    db.exec('COMMIT');
    const sqliteVersion = db.prepare('SELECT sqlite_version()').pluck().get() as string;
    const copy = new Database(destination, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
      eraseSealedKeys(copy);
    } finally {
      copy.close();
    }
    return { pages, pageSize, sqliteVersion };
  } finally {
    db.close();
  }
}

/**
 * A copy of the database holds no sealed gateway key (docs/backup.md): the key of a pending
 * certificate is erased and its bytes overwritten with zeros. A copy may sit beside a
 * provisioning package, whose token opens such a key; a token of the copy still redeems after a
 * restore, with a fresh key (docs/gateways.md "No gateway key at rest"). The journal stays in
 * memory, so the erased values are written to no other file.
 */
function eraseSealedKeys(db: Database.Database): void {
  // `key_pem`: the clear key of a database that a version before sealed keys wrote, not yet migrated.
  const columns = (db.pragma('table_info(gateway_certificates)') as { name: string }[]).map((column) => column.name).filter((name) => name === 'sealed_key' || name === 'key_pem');
  if (columns.length === 0) return;
  db.pragma('journal_mode = MEMORY');
  db.pragma('secure_delete = ON');
  db.transaction(() => {
    for (const column of columns) db.prepare(`UPDATE gateway_certificates SET ${column} = NULL WHERE ${column} IS NOT NULL`).run();
  })();
  // That version set keys to NULL without zeroing them: what is left of them in free space goes
  // when the copy is rebuilt from its rows.
  if (columns.includes('key_pem')) db.exec('VACUUM');
  db.pragma('journal_mode = DELETE');
}

/**
 * What `PRAGMA integrity_check` finds wrong with the database file (at most `limit` problems),
 * or [] when it is sound. A file that is no SQLite database at all is one problem.
 */
export function integrityProblems(file: string, limit = 5): string[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.prepare(`PRAGMA integrity_check(${Math.max(1, Math.floor(limit))})`).pluck().all() as string[];
    return rows.length === 1 && rows[0] === 'ok' ? [] : rows;
  } catch (error) {
    return [(error as Error).message];
  } finally {
    db?.close();
  }
}
