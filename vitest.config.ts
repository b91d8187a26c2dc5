import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
};

/** Tests that only make sense on PostgreSQL: they stop and start a private cluster, or run several instances on one database. */
const POSTGRES_ONLY = [
  'test/serve-outage.test.ts',
  'test/instances.test.ts',
  'test/cluster.test.ts',
  'test/cluster-export.test.ts',
  'test/gateway-certificates.instances.test.ts',
  'test/event-stream.instances.test.ts',
  'test/retention.instances.test.ts',
];

/** Tests that use SQLite and PostgreSQL side by side (`operator migrate`, `backup`): run once, in the sqlite project. */
const BOTH_STORES = ['test/operator-migrate.test.ts', 'test/operator-backup.test.ts'];

const sqlite: TestProjectInlineConfiguration = {
  test: {
    ...shared,
    name: 'sqlite',
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...POSTGRES_ONLY],
    env: { SCANHUB_TEST_STORE: 'sqlite' },
  },
};

/**
 * The same server, API, CLI and MQTT tests again with every test server on a fresh PostgreSQL
 * database (test/helpers/server.ts and serve-process.ts read SCANHUB_TEST_STORE). Left out:
 * - `*.sqlite.test.ts`: they test the SQLite store itself (its file, its rows, its threads);
 * - test/store/**: the store tests choose their store themselves (and already run PostgreSQL);
 * - test/hostile/**: CPU-heavy fuzzing of the HTTP and MQTT layers, which sit above the store
 *   seam; running them twice would add minutes on two cores and test nothing new;
 * - BOTH_STORES: tests that choose both stores themselves;
 * - test/console/**: a browser drives the console, which only calls the HTTP API (tested on both
 *   stores already); a second chromium run would add a minute and test nothing new.
 */
const postgres: TestProjectInlineConfiguration = {
  test: {
    ...shared,
    name: 'postgres',
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/**/*.sqlite.test.ts', 'test/store/**', 'test/hostile/**', 'test/console/**', ...BOTH_STORES],
    env: { SCANHUB_TEST_STORE: 'postgres' },
  },
};

function projects(): TestProjectInlineConfiguration[] {
  if (process.env.SCANHUB_TEST_DATABASE_URL) return [sqlite, postgres];
  if (process.env.CI === 'true') {
    throw new Error('SCANHUB_TEST_DATABASE_URL is not set: CI runs the PostgreSQL project (scripts/postgres.sh start sets it)');
  }
  console.warn('PostgreSQL tests skipped: SCANHUB_TEST_DATABASE_URL is not set (scripts/postgres.sh start sets it)');
  return [sqlite];
}

export default defineConfig({
  test: {
    projects: projects(),
    // The suite starts real servers, brokers and CLI processes; two cores do not gain from more
    // forks. Both projects share these two.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
