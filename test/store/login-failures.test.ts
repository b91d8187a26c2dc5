// The login_failures repository (the per-e-mail lockout's memory) over both stores: the same
// answers for the same calls.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { AuditEntry } from '../../src/domain/audit.js';
import type { Store } from '../../src/store/ports/index.js';
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

  it('concurrent refusals of one key count 1, 2, 3, ... once each; only the one that counts `lock.refusals` writes the lock entry', async () => {
    expect(await store.customers.createWithAdmin('acme', { id: 'admin-acme', customer_id: 'acme', email: 'admin@acme.example', roles: ['ADMIN_ROLE'], created: T0 }, T0)).toBe(
      'created',
    );
    const entry = (id: number, action: AuditEntry['action']): AuditEntry => ({
      id: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
      customerId: 'acme',
      time: T0 + 100 + id,
      action,
      actor: { type: 'user', id: 'admin-acme' },
    });
    const counts = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.loginFailures.record('d@example.com', T0 + 100 + i, T0 + 50, [entry(i, 'auth.login_refused')], { refusals: 10, entry: entry(100 + i, 'auth.locked_out') }),
      ),
    );
    expect([...counts].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const page = await store.audit.newestBefore('acme', 0, { time: Number.MAX_SAFE_INTEGER, id: '' }, 100);
    const actions = page.entries.map((e) => e.action);
    expect({ refused: actions.filter((a) => a === 'auth.login_refused').length, locked: actions.filter((a) => a === 'auth.locked_out').length }).toEqual({
      refused: 12,
      locked: 1,
    });
    // The lock entry belongs to the refusal that counted 10.
    const tenth = counts.indexOf(10);
    expect(page.entries.find((e) => e.action === 'auth.locked_out')!.id).toBe(entry(100 + tenth, 'auth.locked_out').id);
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
