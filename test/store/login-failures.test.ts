// The login_failures repository (the per-e-mail lockout's memory) over both stores: the same
// answers for the same calls.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { Store } from '../../src/store/ports.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const T0 = 1_800_000_000_000;

function contract(open: () => Promise<Store>): void {
  let store: Store;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(async () => {
    await store?.close();
  });

  it('answers the times after `since`, oldest first, of that key only', async () => {
    await store.loginFailures.record('a@example.com', T0 + 2, T0 - 1000);
    await store.loginFailures.record('a@example.com', T0 + 1, T0 - 1000);
    await store.loginFailures.record('b@example.com', T0 + 3, T0 - 1000);
    expect(await store.loginFailures.since('a@example.com', T0)).toEqual([T0 + 1, T0 + 2]);
    expect(await store.loginFailures.since('a@example.com', T0 + 1)).toEqual([T0 + 2]);
    expect(await store.loginFailures.since('b@example.com', 0)).toEqual([T0 + 3]);
    expect(await store.loginFailures.since('c@example.com', 0)).toEqual([]);
  });

  it('a record forgets every refusal at or before `forgetUpTo`, of every key', async () => {
    await store.loginFailures.record('c@example.com', T0 + 10, T0 + 2);
    expect(await store.loginFailures.since('a@example.com', 0)).toEqual([]);
    expect(await store.loginFailures.since('b@example.com', 0)).toEqual([T0 + 3]);
    expect(await store.loginFailures.since('c@example.com', 0)).toEqual([T0 + 10]);
  });
}

describe('SQLite store: login failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-login-failures-'));
  // Registered first, so it runs after the store is closed (hooks run in reverse).
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  contract(() => openStore(sqliteLocator(dir), 'server'));
});

describePostgres('PostgreSQL store: login failures', () => {
  contract(async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: new Uint8Array(32).fill(7) }, 'server'));
});
