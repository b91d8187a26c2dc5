import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { COPIED_TABLES, SQLITE_ONLY_TABLES } from '../shared/copied-tables.js';
import { copyBlobFiles, planBlobCopy, removeFiles, type BlobCopyPlan } from './blob-copy.js';
import { SECRET_NAMES, StoreUnavailable } from '../ports/index.js';
import { PgDeploymentWriter } from '../postgres/deployment-writer.js';
import { DataDirBusy, lockDataDir, type DataDirLock } from '../sqlite/data-dir-lock.js';
import { SqliteDeploymentReader } from '../sqlite/deployment-reader.js';

/**
 * `scanhub operator migrate` (docs/postgresql.md "From one box to a cluster"): a stopped SQLite
 * deployment copied into an empty PostgreSQL database, counts verified, in one transaction. The SQL
 * of each side lives in its folder (src/store/sqlite/deployment-reader.ts,
 * src/store/postgres/deployment-writer.ts); this file only orders the steps.
 */

/** Bad input, refused before anything was written (the CLI exits 2). */
export class MigrationRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationRefused';
  }
}

export interface MigrationOptions {
  /** The data directory of the stopped deployment. */
  dataDir: string;
  /** The PostgreSQL connection string of the target. */
  url: string;
  /** The master key that will encrypt the secrets. */
  masterKey: Uint8Array;
  /** The cluster's blob directory: when it is not the data directory, the files are copied there. */
  blobDir: string;
  /** Told before each table is copied (progress on a terminal). */
  onTable?: (table: string, rows: number) => void;
}

/** One line of the summary: a table and its rows on each side (`secrets`: files and rows). */
export interface TableCount {
  table: string;
  sqlite: number;
  postgresql: number;
}

export interface MigrationSummary {
  tables: TableCount[];
  /** Text values whose NUL characters (PostgreSQL cannot store them) became U+FFFD. */
  replacedNul: number;
  /** Where the files are: copied to the blob directory, or left in the data directory. */
  files: BlobCopyPlan;
}

/** Every table the target must not have rows in: the copied ones and the secrets. */
const TARGET_TABLES = [...COPIED_TABLES.map((table) => table.name), 'secrets'];

/** Copies the deployment; throws MigrationRefused on bad input (nothing written), anything else when the copy failed (rolled back). */
export async function migrateToPostgres(options: MigrationOptions): Promise<MigrationSummary> {
  const dataDir = resolve(options.dataDir);
  const file = join(dataDir, 'scanhub.db');
  if (!existsSync(file)) throw new MigrationRefused(`no scanhub database in ${dataDir} (no scanhub.db): give --data-dir of the deployment to migrate`);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir, 'operator migrate');
  } catch (error) {
    if (error instanceof DataDirBusy) throw new MigrationRefused(`${error.message}: stop it first, migrate copies a stopped deployment`);
    throw error;
  }
  try {
    const reader = new SqliteDeploymentReader(file, dataDir);
    try {
      const known = new Set([...TARGET_TABLES, ...SQLITE_ONLY_TABLES]);
      const unknown = reader.tables().filter((table) => !known.has(table));
      if (unknown.length > 0) {
        throw new MigrationRefused(`${file} has tables this version of scanhub does not know (${unknown.join(', ')}): migrate with the version that made them, or a later one`);
      }
      const files = await planBlobCopy(dataDir, resolve(options.blobDir));
      if (files.kind === 'copy' && files.conflicts.length > 0) {
        const [first] = files.conflicts;
        throw new MigrationRefused(`--blob-dir ${files.to} holds ${first} with other content than ${join(dataDir, first!)}: give an empty blob directory`);
      }
      const writer = await connect(options);
      try {
        return await copy(reader, writer, files, options.onTable);
      } finally {
        await writer.close();
      }
    } finally {
      reader.close();
    }
  } finally {
    lock.release();
  }
}

async function connect(options: MigrationOptions): Promise<PgDeploymentWriter> {
  try {
    return await PgDeploymentWriter.connect(options.url, options.masterKey);
  } catch (error) {
    // node-postgres's own words ("database ... does not exist", "connect ECONNREFUSED ..."), not the store's 503 framing.
    const reason = error instanceof StoreUnavailable && error.cause ? error.cause : error;
    throw new MigrationRefused(`cannot connect to the PostgreSQL database of --database: ${firstLine(reason)}`, { cause: error });
  }
}

/** Checks that the target is empty, migrates it, and copies everything in one transaction. */
async function copy(
  reader: SqliteDeploymentReader,
  writer: PgDeploymentWriter,
  files: BlobCopyPlan,
  onTable: MigrationOptions['onTable'],
): Promise<MigrationSummary> {
  const occupied = await writer.tablesWithRows(TARGET_TABLES);
  if (occupied.length > 0) throw notEmpty(occupied);
  await writer.migrate();
  const copied: string[] = [];
  try {
    return await writer.transaction(TARGET_TABLES, async (target) => {
      // Checked again under the locks: a `serve` may have started on the database meanwhile.
      const occupiedNow = await target.tablesWithRows(TARGET_TABLES);
      if (occupiedNow.length > 0) throw notEmpty(occupiedNow);
      const summary: MigrationSummary = { tables: [], replacedNul: 0, files };
      for (const table of COPIED_TABLES) {
        const sqlite = reader.count(table);
        onTable?.(table.name, sqlite);
        const outcome = await target.copy(table, reader.rows(table));
        const postgresql = await target.count(table.name);
        if (outcome.rows !== sqlite || postgresql !== sqlite) {
          throw new Error(`table ${table.name}: ${sqlite} rows in SQLite, ${postgresql} stored in PostgreSQL`);
        }
        summary.replacedNul += outcome.replacedNul;
        summary.tables.push({ table: table.name, sqlite, postgresql });
      }
      let secrets = 0;
      for (const name of SECRET_NAMES) {
        const value = await reader.secret(name);
        if (value === undefined) continue;
        await target.storeSecret(name, value);
        secrets++;
      }
      summary.tables.push({ table: 'secrets', sqlite: secrets, postgresql: await target.count('secrets') });
      // Last, so that a failure before leaves no file behind; removed again if the commit fails.
      await copyBlobFiles(files, copied);
      return summary;
    });
  } catch (error) {
    await removeFiles(copied);
    throw error;
  }
}

function notEmpty(tables: string[]): MigrationRefused {
  return new MigrationRefused(`the PostgreSQL database is not empty (rows in ${tables.join(', ')}): migrate into a new, empty database`);
}

function firstLine(error: unknown): string {
  const { message, code } = (error ?? {}) as { message?: string; code?: string };
  return String(message || code || error).split('\n')[0]!;
}
