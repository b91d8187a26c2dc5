import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '../../src/serve/start.js';
import { sqliteLocator } from '../../src/store/open.js';
import type { Db } from '../../src/store/sqlite/open.js';
import { openSqliteStore, SqliteStore, type SqliteLocator } from '../../src/store/sqlite/store.js';

/** The SQLite connection behind a test server's store: for tests that look at the rows themselves. */
export function dbOf(server: RunningServer): Db {
  const { store } = server.ctx;
  if (!(store instanceof SqliteStore)) throw new Error(`the test server runs on a ${store.locator.kind} store, not SQLite`);
  return store.db;
}

/** A migrated SqliteStore over a fresh temporary data directory; close() removes it. */
export function openTempStore(): { store: SqliteStore; dataDir: string; close(): Promise<void> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-store-'));
  const store = openSqliteStore(sqliteLocator(dataDir) as SqliteLocator, 'server');
  return {
    store,
    dataDir,
    async close() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
