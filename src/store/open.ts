import { join } from 'node:path';
import type { Store, StoreLocator, StorePurpose } from './ports/index.js';
import { openSqliteStore } from './sqlite/store.js';

export { DataDirBusy, dataDirHolder, lockDataDir, type DataDirLock } from './sqlite/data-dir-lock.js';

/** The locator of the SQLite database of a data directory (`<dataDir>/scanhub.db`). */
export function sqliteLocator(dataDir: string): StoreLocator {
  return { kind: 'sqlite', file: join(dataDir, 'scanhub.db'), dataDir };
}

// Not a literal, so that neither tsc nor the runtime needs the PostgreSQL store where it is not built.
const POSTGRES_STORE = './postgres/store.js';

/** Opens the store the locator names, for its purpose (the server migrates; ingest and readers do not). */
export async function openStore(locator: StoreLocator, purpose: StorePurpose): Promise<Store> {
  if (locator.kind === 'sqlite') return openSqliteStore(locator, purpose);
  let module: { openPostgresStore(locator: StoreLocator, purpose: StorePurpose): Promise<Store> };
  try {
    module = (await import(POSTGRES_STORE)) as typeof module;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error('PostgreSQL support is not built into this scanhub', { cause: error });
  }
  return module.openPostgresStore(locator, purpose);
}
