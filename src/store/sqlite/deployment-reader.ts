import type { CopiedRow, CopiedTable } from '../shared/copied-tables.js';
import type { SecretName } from '../ports/index.js';
import { openDatabase, type Db } from './open.js';
import { FileSecrets } from './secrets.js';

/** Rows per batch handed to the copy: enough to amortise a write, little enough to stream. */
const BATCH_ROWS = 2000;

/**
 * A SQLite deployment read for `scanhub operator migrate`: its tables row by row as
 * dialect-neutral values, and its secret files. Every read happens in one read transaction,
 * so counts and rows come from one snapshot.
 */
export class SqliteDeploymentReader {
  private readonly db: Db;
  private readonly secrets: FileSecrets;

  /** Opens the database of the data directory (applying this version's pending migrations, as `serve` would). */
  constructor(file: string, dataDir: string) {
    this.db = openDatabase(file);
    this.secrets = new FileSecrets(dataDir);
    this.db.exec('BEGIN');
    // The snapshot starts at the first read.
    this.db.prepare('SELECT count(*) FROM customers').get();
  }

  /** The tables of the database, ours and any others, but not SQLite's own or the migrations' record. */
  tables(): string[] {
    return this.db
      .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name`)
      .pluck()
      .all() as string[];
  }

  count(table: CopiedTable): number {
    return this.db.prepare(`SELECT count(*) FROM "${table.name}"`).pluck().get() as number;
  }

  /** The table's rows in batches, in its own order, as the PostgreSQL store would have stored them. */
  *rows(table: CopiedTable): Generator<CopiedRow[]> {
    const statement = this.db.prepare(`SELECT ${table.columns.map((c) => `"${c}"`).join(', ')} FROM "${table.name}" ORDER BY ${table.orderBy ?? 'rowid'}`).raw();
    const convert = CONVERSIONS[table.name];
    let batch: CopiedRow[] = [];
    for (const row of statement.iterate() as IterableIterator<CopiedRow>) {
      if (convert) convert(row, table.columns);
      batch.push(row);
      if (batch.length === BATCH_ROWS) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  secret(name: SecretName): Promise<string | undefined> {
    return this.secrets.get(name);
  }

  /** Ends the read transaction (it wrote nothing) and closes the database. */
  close(): void {
    if (!this.db.open) return;
    try {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
    } finally {
      this.db.close();
    }
  }
}

/**
 * Values SQLite keeps otherwise than the other stores: booleans as 0/1, deleted gateways' names;
 * and the leases of PENDING export tasks, held by the stopped process (as SQLite's own start frees them).
 */
const CONVERSIONS: Record<string, (row: CopiedRow, columns: readonly string[]) => void> = {
  export_tasks(row, columns) {
    if (row[columns.indexOf('status')] !== 'PENDING') return;
    row[columns.indexOf('lease_owner')] = null;
    row[columns.indexOf('lease_until')] = null;
  },
  features(row, columns) {
    const enabled = columns.indexOf('enabled');
    row[enabled] = row[enabled] === 1;
  },
  gateways(row, columns) {
    const [id, name, deleted] = ['id', 'name', 'deleted'].map((column) => columns.indexOf(column)) as [number, number, number];
    if (row[deleted] !== null) row[name] = liveName(row[name] as string, row[id] as string);
  },
};

/**
 * The name a deleted gateway had: SQLite appends NUL and the id on deletion (gateways.ts
 * markDeleted) to free the name; the other stores keep the name and free it by `deleted` alone.
 */
export function liveName(storedName: string, id: string): string {
  const suffix = `\u0000${id}`;
  return storedName.endsWith(suffix) ? storedName.slice(0, -suffix.length) : storedName;
}
