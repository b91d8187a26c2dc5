import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { CopiedRow, CopiedTable, CopiedValue } from '../shared/copied-tables.js';
import type { SecretName } from '../ports/index.js';
import { applyMigrations } from './migrations/index.js';
import { Database, type Queryable } from './pool.js';
import { INSERT_SECRET_SQL, cipherKey, openSecret, sealSecret, type SecretRow } from './secrets.js';

/** What one table's COPY stored, and how many text values had NUL characters replaced. */
export interface CopyOutcome {
  rows: number;
  replacedNul: number;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The PostgreSQL side of `scanhub operator migrate`: whether the database is empty, its
 * migrations, and one transaction in which the copy fills every table (COPY FROM STDIN), stores
 * the secrets under the master key, and counts what it stored. Nothing is visible to anyone
 * until that transaction commits; when it fails, nothing is stored.
 */
export class PgDeploymentWriter {
  private constructor(
    private readonly db: Database,
    private readonly key: Buffer,
  ) {}

  /** Connects (one statement to prove it); throws what node-postgres throws when it cannot. */
  static async connect(url: string, masterKey: Uint8Array): Promise<PgDeploymentWriter> {
    const key = cipherKey(masterKey);
    const db = new Database(url, 'server', { max: 1 });
    try {
      await db.query('SELECT 1');
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
    return new PgDeploymentWriter(db, key);
  }

  /** Which of the tables exist and hold at least one row ("empty": none does). */
  tablesWithRows(tables: readonly string[]): Promise<string[]> {
    return tablesWithRows(this.db, tables);
  }

  /** Applies the store's pending migrations (under its advisory lock, as `serve` does). */
  migrate(): Promise<string[]> {
    return this.db.withClient((client) => applyMigrations(client));
  }

  /**
   * Runs `work` in one transaction that holds every table of `tables` exclusively (no `serve`
   * started meanwhile reads or writes them before the commit); committed when `work` resolves.
   */
  transaction<T>(tables: readonly string[], work: (target: CopyTarget) => Promise<T>): Promise<T> {
    return this.db.transaction(async (client) => {
      await client.query(`LOCK TABLE ${tables.map(ident).join(', ')} IN ACCESS EXCLUSIVE MODE`);
      return work(new CopyTarget(client, this.key));
    });
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** The database inside the copy's transaction. */
export class CopyTarget {
  constructor(
    private readonly client: pg.PoolClient,
    private readonly key: Buffer,
  ) {}

  /** Streams the batches into the table with COPY FROM STDIN (text format); numbered columns keep their values. */
  async copy(table: CopiedTable, batches: Iterable<CopiedRow[]>): Promise<CopyOutcome> {
    const outcome: CopyOutcome = { rows: 0, replacedNul: 0 };
    const stream = this.client.query(copyFrom(`COPY ${ident(table.name)} (${table.columns.map(ident).join(', ')}) FROM STDIN`));
    function* lines(): Generator<Buffer> {
      for (const batch of batches) {
        let text = '';
        for (const row of batch) text += copyLine(row, outcome);
        yield Buffer.from(text);
      }
    }
    await pipeline(Readable.from(lines()), stream);
    outcome.rows = stream.rowCount;
    // COPY writes the values of an identity column as given; the next number must follow them.
    if (table.numbered) {
      await this.client.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${ident(table.numbered)}) FROM ${ident(table.name)}), 0) + 1, false)`,
        [table.name, table.numbered],
      );
    }
    return outcome;
  }

  /** As PgDeploymentWriter.tablesWithRows, inside the transaction (after its locks). */
  tablesWithRows(tables: readonly string[]): Promise<string[]> {
    return tablesWithRows(this.client, tables);
  }

  async count(table: string): Promise<number> {
    return (await this.client.query<{ count: number }>(`SELECT count(*) AS count FROM ${ident(table)}`)).rows[0]!.count;
  }

  /** Stores the secret encrypted under the master key, and reads it back through the key to prove it. */
  async storeSecret(name: SecretName, value: string): Promise<void> {
    const { nonce, ciphertext, tag } = sealSecret(this.key, name, value);
    const stored = await this.client.query(INSERT_SECRET_SQL, [name, nonce, ciphertext, tag, Date.now()]);
    if (stored.rowCount !== 1) throw new Error(`the secret ${JSON.stringify(name)} is stored already`);
    const row = (await this.client.query<SecretRow>('SELECT nonce, ciphertext, tag FROM secrets WHERE name = $1', [name])).rows[0]!;
    if (openSecret(this.key, name, row) !== value) throw new Error(`the secret ${JSON.stringify(name)} does not read back as written`);
  }
}

async function tablesWithRows(db: Queryable, tables: readonly string[]): Promise<string[]> {
  const existing = (
    await db.query<{ name: string }>(
      'SELECT t.name FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n) WHERE to_regclass(quote_ident(t.name)) IS NOT NULL ORDER BY t.n',
      [tables],
    )
  ).rows.map((row) => row.name);
  const withRows: string[] = [];
  for (const table of existing) {
    if ((await db.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${ident(table)}) AS any`)).rows[0]!.any) withRows.push(table);
  }
  return withRows;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * One row in COPY's text format: tab-separated, `\N` for null, backslash escapes. PostgreSQL
 * text cannot hold NUL (SQLite's can): such characters become U+FFFD, as ingest does with lone
 * surrogates, and are counted.
 */
function copyLine(row: readonly CopiedValue[], outcome: CopyOutcome): string {
  let line = '';
  for (let i = 0; i < row.length; i++) {
    if (i > 0) line += '\t';
    line += copyValue(row[i]!, outcome);
  }
  return line + '\n';
}

function copyValue(value: CopiedValue, outcome: CopyOutcome): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (value instanceof Uint8Array) return `\\\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  let text = value;
  if (text.includes('\u0000')) {
    outcome.replacedNul++;
    text = text.replaceAll('\u0000', '\uFFFD');
  }
  return text.replace(/[\\\n\r\t]/g, (character) => ESCAPES[character]!);
}
