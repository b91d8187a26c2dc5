import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
};

// Which project runs a file is told by its name and folder (test/README.md "Two projects"):
// - `*.postgres.test.ts` only in `postgres`: they stop and start a private cluster, or run several
//   instances on one database;
// - `*.sqlite.test.ts` only in `sqlite`: they test the SQLite store itself (its file, its rows, its
//   threads), or open SQLite and PostgreSQL side by side (`operator migrate`, `backup`);
// - the contract suite directly in test/store/ only in `sqlite`: it chooses its stores itself (and
//   already runs PostgreSQL);
// - test/hostile/ only in `sqlite`: CPU-heavy fuzzing of the HTTP and MQTT layers, which sit above
//   the store seam; running them twice would add minutes on two cores and test nothing new;
// - test/console/ only in `sqlite`: a browser drives the console, which only calls the HTTP API
//   (tested on both stores already); a second chromium run would add a minute and test nothing new.
// Every other file runs in both.
const TESTS = ['test/**/*.test.ts'];

const sqlite: TestProjectInlineConfiguration = {
  test: {
    ...shared,
    name: 'sqlite',
    include: TESTS,
    exclude: ['**/node_modules/**', 'test/**/*.postgres.test.ts'],
    env: { SCANHUB_TEST_STORE: 'sqlite' },
  },
};

/**
 * The same server, API, CLI and MQTT tests again with every test server on a fresh PostgreSQL
 * database (test/helpers/server.ts and serve-process.ts read SCANHUB_TEST_STORE).
 */
const postgres: TestProjectInlineConfiguration = {
  test: {
    ...shared,
    name: 'postgres',
    include: TESTS,
    exclude: ['**/node_modules/**', 'test/**/*.sqlite.test.ts', 'test/store/*.test.ts', 'test/hostile/**', 'test/console/**'],
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
