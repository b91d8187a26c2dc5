import pg from 'pg';
import { randomBytes } from 'node:crypto';
import type { StoreLocator } from '../../src/store/ports.js';
import { TEST_DATABASE_URL, withDatabase } from './postgres.js';

/**
 * The store the server, API, CLI and MQTT tests run on: `sqlite` (the default) or `postgres`
 * (vitest.config.ts's `postgres` project sets SCANHUB_TEST_STORE and needs SCANHUB_TEST_DATABASE_URL).
 */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.SCANHUB_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

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

/** A fresh database on the test store: a new PostgreSQL database, or the data directory's SQLite file. */
export async function testDatabase(serverUrl = TEST_DATABASE_URL): Promise<TestDatabase> {
  if (TEST_STORE === 'sqlite') return { locator: () => undefined, args: [], env: {}, drop: async () => undefined };
  if (!serverUrl) throw new Error('SCANHUB_TEST_STORE=postgres needs SCANHUB_TEST_DATABASE_URL (scripts/postgres.sh start sets it)');
  const name = `scanhub_test_${randomBytes(6).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  return {
    locator: () => ({ kind: 'postgres', url, masterKey: new Uint8Array(Buffer.from(TEST_MASTER_KEY, 'base64')) }),
    args: ['--database', url],
    env: { SCANHUB_MASTER_KEY: TEST_MASTER_KEY },
    drop: () => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined),
  };
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
