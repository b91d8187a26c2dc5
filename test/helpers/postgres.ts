import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe } from 'vitest';

/**
 * PostgreSQL tests run against the server named by SCANHUB_TEST_DATABASE_URL (start one with
 * `eval "$(scripts/postgres.sh start)"`). Without it they are skipped with a printed reason,
 * except in CI (CI=true), which never skips: there a missing server fails the suite.
 */
export const TEST_DATABASE_URL = process.env.SCANHUB_TEST_DATABASE_URL;

let explained = false;

/** describe() for tests that need a PostgreSQL server. */
export function describePostgres(name: string, fn: () => void): void {
  if (TEST_DATABASE_URL) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') {
    throw new Error('SCANHUB_TEST_DATABASE_URL is not set: CI runs the PostgreSQL tests (.ci/run starts a server with scripts/postgres.sh)');
  }
  if (!explained) {
    explained = true;
    console.warn('PostgreSQL tests skipped: SCANHUB_TEST_DATABASE_URL is not set (eval "$(scripts/postgres.sh start)" to run them)');
  }
  describe.skip(name, fn);
}

/**
 * The URL with another database: a connection string's database is its path, the part before
 * `?` after the authority (`postgresql://user@/db?host=/dir` included, which `new URL()` refuses).
 */
export function withDatabase(url: string, database: string): string {
  const match = /^(postgres(?:ql)?:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/.exec(url);
  if (!match) throw new Error(`not a PostgreSQL URL: ${url}`);
  return `${match[1]}/${database}${match[3] ?? ''}`;
}

const created: { admin: string; name: string }[] = [];

/**
 * A new, empty database on the test server (or on `serverUrl`); dropped after the file's tests.
 * With `locale` (e.g. `C.utf8`), its collation and character classes are that locale's instead of
 * the server's (scripts/postgres.sh makes a C cluster, where lower() folds ASCII letters only).
 */
export async function freshDatabase(serverUrl = TEST_DATABASE_URL, options: { locale?: string } = {}): Promise<string> {
  if (!serverUrl) throw new Error('SCANHUB_TEST_DATABASE_URL is not set');
  const name = `scanhub_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const locale = options.locale ? ` TEMPLATE template0 LC_COLLATE '${options.locale}' LC_CTYPE '${options.locale}'` : '';
    await client.query(`CREATE DATABASE ${name}${locale}`);
  } finally {
    await client.end();
  }
  if (created.length === 0) afterAll(dropCreated);
  created.push({ admin: serverUrl, name });
  return withDatabase(serverUrl, name);
}

async function dropCreated(): Promise<void> {
  for (const { admin, name } of created.splice(0)) {
    const client = new pg.Client({ connectionString: admin });
    try {
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } catch {
      // The server of a test that stopped it; its cluster is removed with its directory.
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
