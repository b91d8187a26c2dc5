import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations as postgresMigrations } from '../../src/store/postgres/migrations/index.js';
import { migrations as sqliteMigrations } from '../../src/store/sqlite/migrations/index.js';
import { runCli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { freshDatabase } from '../helpers/postgres.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { TEST_MASTER_KEY, TEST_STORE } from '../helpers/test-store.js';

// Upgrading: a newer scanhub started on the database of an older one applies the migrations the
// older lacked, once, even when two processes start on it together (PostgreSQL: two instances,
// under pg_advisory_lock; SQLite: `serve` and an operator command, under one IMMEDIATE transaction).

/** The migrations of "the older version": all but the last three. */
const OLDER = 3;

const started: ServeProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(started.map((serve) => stop(serve)));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-upgrade-'));
  dirs.push(dir);
  return dir;
}

async function serveOn(dataDir: string, database?: string): Promise<{ serve: ServeProcess; url: string }> {
  const port = await freePort();
  const serve = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0', ...(database ? ['--database', database] : [])], {
    SCANHUB_ADMIN_PASSWORD: 'upgrade-admin-password',
    SCANHUB_LOG_LEVEL: 'warn',
    ...(database ? { SCANHUB_MASTER_KEY: TEST_MASTER_KEY } : {}),
  });
  started.push(serve);
  return { serve, url: `http://127.0.0.1:${port}` };
}

describe(`starting a newer scanhub on the database of an older one (${TEST_STORE})`, () => {
  // One case per store: each project runs its own (vitest.config.ts), neither is skipped.
  if (TEST_STORE === 'postgres') it('two instances started together apply each missing migration once', async () => {
    const database = await freshDatabase();
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      const older = postgresMigrations.slice(0, -OLDER);
      await client.query('BEGIN');
      await client.query('CREATE TABLE schema_migrations (name text PRIMARY KEY, applied bigint NOT NULL)');
      for (const migration of older) {
        await migration.up(client as pg.PoolClient);
        await client.query('INSERT INTO schema_migrations (name, applied) VALUES ($1, 0)', [migration.name]);
      }
      await client.query('COMMIT');

      const instances = await Promise.all([serveOn(tempDir(), database), serveOn(tempDir(), database)]);
      await Promise.all(instances.map(({ serve }) => serve.stderrMatches(/scanhub is serving/)));
      for (const { url } of instances) expect((await call(url, 'GET', '/healthz')).status).toBe(200);

      const { rows } = await client.query<{ name: string; applied: string }>('SELECT name, applied FROM schema_migrations ORDER BY name');
      expect(rows.map((row) => row.name)).toEqual(postgresMigrations.map((m) => m.name));
      // The older ones kept their mark (0); the newer ones were applied now, by one of the two.
      expect(rows.map((row) => Number(row.applied) > 0)).toEqual(postgresMigrations.map((_, i) => i >= postgresMigrations.length - OLDER));
    } finally {
      await client.end();
    }
  }, 120_000);

  else it('serve and an operator command started together apply each missing migration once', async () => {
    const dataDir = tempDir();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, 'scanhub.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)');
    for (const migration of sqliteMigrations.slice(0, -OLDER)) {
      migration.up(db);
      db.prepare('INSERT INTO schema_migrations (name, applied) VALUES (?, 0)').run(migration.name);
    }
    db.close();

    const [{ serve, url }, added] = await Promise.all([
      serveOn(dataDir),
      runCli(['operator', 'customers', 'add', 'beta', '--admin-email', 'admin@beta.example.com', '--password-stdin', '--data-dir', dataDir], {
        input: 'beta-admin-password\n',
      }),
    ]);
    await serve.stderrMatches(/scanhub is serving/);
    expect([added.code, added.stderr]).toEqual([0, expect.any(String)]);
    expect((await call(url, 'GET', '/healthz')).status).toBe(200);

    const check = new Database(file, { readonly: true });
    try {
      const rows = check.prepare('SELECT name, applied FROM schema_migrations ORDER BY name').all() as { name: string; applied: number }[];
      expect(rows.map((row) => row.name)).toEqual(sqliteMigrations.map((m) => m.name));
      expect(rows.map((row) => row.applied > 0)).toEqual(sqliteMigrations.map((_, i) => i >= sqliteMigrations.length - OLDER));
      // The operator's customer is there (serve creates "default" only when it found none).
      expect(check.prepare('SELECT id FROM customers ORDER BY id').pluck().all()).toContain('beta');
    } finally {
      check.close();
    }
  }, 120_000);
});
