import Database from 'better-sqlite3';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { Store, StoreLocator } from '../../src/store/ports/index.js';
import { TEST_DATABASE_URL, withDatabase } from './postgres.js';

/**
 * The store the server, API, CLI and MQTT tests run on: `sqlite` (the default) or `postgres`
 * (vitest.config.ts's `postgres` project sets SCANHUB_TEST_STORE and needs SCANHUB_TEST_DATABASE_URL).
 */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.SCANHUB_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** Stops a test file (its `import.meta.url`) that runs outside vitest's postgres project: it needs PostgreSQL. */
export function requirePostgresProject(file: string): void {
  const name = relative(process.cwd(), fileURLToPath(file));
  if (TEST_STORE !== 'postgres') throw new Error(`${name} runs in the postgres project only (its name ends in .postgres.test.ts: test/README.md)`);
}

/** The master key of test servers on PostgreSQL (base64 of 32 bytes, as SCANHUB_MASTER_KEY). */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString('base64');

/** A test server's database: where it lives, and how a `serve`/`operator` process names it. */
export interface TestDatabase {
  /** The locator for startServer, or undefined for the SQLite file in the data directory. */
  locator(dataDir: string): StoreLocator | undefined;
  /** Arguments for `scanhub serve` / `scanhub operator ...` (`--database URL`, or none). */
  args: string[];
  /** Environment for those processes (SCANHUB_MASTER_KEY, or nothing). */
  env: Record<string, string>;
  /** Drops the PostgreSQL database (nothing for SQLite). */
  drop(): Promise<void>;
}

/**
 * A fresh database on the test store: a new PostgreSQL database (in `locale` when given, e.g.
 * `C.utf8`, instead of the test server's C), or the data directory's SQLite file.
 */
export async function testDatabase(serverUrl = TEST_DATABASE_URL, options: { locale?: string } = {}): Promise<TestDatabase> {
  if (TEST_STORE === 'sqlite') return { locator: () => undefined, args: [], env: {}, drop: async () => undefined };
  if (!serverUrl) throw new Error('SCANHUB_TEST_STORE=postgres needs SCANHUB_TEST_DATABASE_URL (scripts/postgres.sh start sets it)');
  const { url, drop } = await createDatabase(serverUrl, options.locale);
  return {
    locator: () => postgresLocator(url),
    args: ['--database', url],
    env: { SCANHUB_MASTER_KEY: TEST_MASTER_KEY },
    drop,
  };
}

function postgresLocator(url: string): StoreLocator {
  return { kind: 'postgres', url, masterKey: new Uint8Array(Buffer.from(TEST_MASTER_KEY, 'base64')) };
}

/** A new database on the server, and how to drop it. */
async function createDatabase(serverUrl: string, locale?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `scanhub_test_${randomBytes(6).toString('hex')}`;
  await runSql(serverUrl, `CREATE DATABASE ${name}${locale ? ` TEMPLATE template0 LC_COLLATE '${locale}' LC_CTYPE '${locale}'` : ''}`);
  return {
    url: withDatabase(serverUrl, name),
    drop: async () => void (await runSql(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)),
  };
}

/** Runs SQL on the PostgreSQL database of `url` over a connection of its own; the rows it returned. */
export async function runSql(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** Runs one statement on the SQLite database of the data directory over a connection of its own; the rows it returned. */
export function runSqliteSql(dataDir: string, sql: string): Record<string, unknown>[] {
  const db = new Database(join(dataDir, 'scanhub.db'));
  try {
    const statement = db.prepare(sql);
    if (statement.reader) return statement.all() as Record<string, unknown>[];
    statement.run();
    return [];
  } finally {
    db.close();
  }
}

/** A database of a test's own, without a server, that it opens as many stores on as it needs ("instances"). */
export interface OwnDatabase {
  /** Its data (and blob) directory: the SQLite file, export files. */
  dataDir: string;
  locator: StoreLocator;
  /** Opens another store on the database, as a server would (closed by close()). */
  open(): Promise<Store>;
  /** Closes every store opened, drops the PostgreSQL database and deletes the data directory. */
  close(): Promise<void>;
}

/** A fresh database of the kind: the SQLite file of a new data directory, or a new PostgreSQL database. */
export async function ownDatabase(kind: 'sqlite' | 'postgres' = TEST_STORE): Promise<OwnDatabase> {
  if (kind === 'postgres' && !TEST_DATABASE_URL) throw new Error('a PostgreSQL database needs SCANHUB_TEST_DATABASE_URL (scripts/postgres.sh start sets it)');
  const postgres = kind === 'postgres' ? await createDatabase(TEST_DATABASE_URL!) : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-test-'));
  const locator = postgres ? postgresLocator(postgres.url) : sqliteLocator(dataDir);
  const stores: Store[] = [];
  return {
    dataDir,
    locator,
    async open() {
      const store = await openStore(locator, 'server');
      stores.push(store);
      return store;
    },
    async close() {
      await Promise.all(stores.splice(0).map((store) => store.close()));
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
