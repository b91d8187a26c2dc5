// The api_keys repository over both stores: the same answers for the same calls.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { ApiKeyRecord, NewApiKey, Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const T0 = 1_800_000_000_000;
const ADMIN = { id: 'u-admin', email: 'admin@a.example', roles: ['ADMIN_ROLE'], created: T0 };

const key = (customer: string, id: string, name: string, created: number, extra: Partial<NewApiKey> = {}): NewApiKey => ({
  id,
  customer_id: customer,
  name,
  key_hash: `hash-${id}`,
  permissions: ['event.read'],
  created,
  created_by: ADMIN.id,
  expires_at: null,
  ...extra,
});
const stored = (k: NewApiKey, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({ ...k, last_used: null, revoked: null, ...extra });

function contract(open: () => Promise<Store>): void {
  let store: Store;
  beforeAll(async () => {
    store = await open();
    expect(await store.customers.createWithAdmin('a', { ...ADMIN, customer_id: 'a' }, T0)).toBe('created');
    expect(await store.customers.createWithAdmin('b', { ...ADMIN, id: 'u-b', email: 'admin@b.example', customer_id: 'b' }, T0)).toBe('created');
  });
  afterAll(async () => {
    await store?.close();
  });

  const k1 = key('a', 'k1', 'ci', T0 + 1, { permissions: ['event.read', 'gateway.read'], expires_at: T0 + 1000 });
  const k2 = key('a', 'k2', 'deploy', T0 + 2);
  const k3 = key('a', 'k3', 'backup', T0 + 2);

  it('creates keys and finds one by its hash, with every field as given', async () => {
    for (const k of [k1, k2, k3]) expect(await store.apiKeys.create(k)).toBe(true);
    expect(await store.apiKeys.byHash('hash-k1')).toEqual(stored(k1));
    expect(await store.apiKeys.byHash('no-such-hash')).toBeUndefined();
  });

  it('withCreator reads the key and its creator together; a creator that is gone is undefined', async () => {
    const found = await store.apiKeys.withCreator('hash-k1');
    expect(found?.key).toEqual(stored(k1));
    expect(found?.creator).toEqual(await store.users.byId(ADMIN.id));
    expect(found?.creator).toMatchObject({ id: ADMIN.id, customer_id: 'a', email: ADMIN.email, roles: ['ADMIN_ROLE'], consent_general_terms: null, created: T0 });
    const orphan = key('a', 'k-orphan', 'orphan', T0 + 5, { created_by: 'u-gone' });
    expect(await store.apiKeys.create(orphan)).toBe(true);
    expect(await store.apiKeys.withCreator('hash-k-orphan')).toEqual({ key: stored(orphan), creator: undefined });
    expect(await store.apiKeys.revoke('a', 'k-orphan', T0 + 6)).toBe('revoked');
    expect(await store.apiKeys.withCreator('no-such-hash')).toBeUndefined();
  });

  it('refuses a second key of the same name in the customer, allows it in another customer', async () => {
    expect(await store.apiKeys.create(key('a', 'k-dup', 'ci', T0 + 3))).toBe(false);
    expect(await store.apiKeys.byHash('hash-k-dup')).toBeUndefined();
    expect(await store.apiKeys.create(key('b', 'kb', 'ci', T0 + 3))).toBe(true);
  });

  it('pages a customer’s keys in (created, id) order', async () => {
    expect((await store.apiKeys.page('a', null, 10)).map((k) => k.id)).toEqual(['k1', 'k2', 'k3']);
    expect((await store.apiKeys.page('a', null, 2)).map((k) => k.id)).toEqual(['k1', 'k2']);
    expect((await store.apiKeys.page('a', { created: T0 + 2, id: 'k2' }, 2)).map((k) => k.id)).toEqual(['k3']);
    expect((await store.apiKeys.page('b', null, 10)).map((k) => k.id)).toEqual(['kb']);
  });

  it('touch writes last_used only when it is null or at or before staleAt', async () => {
    await store.apiKeys.touch('k2', T0 + 100, T0 + 100 - 60_000);
    expect((await store.apiKeys.byHash('hash-k2'))?.last_used).toBe(T0 + 100);
    await store.apiKeys.touch('k2', T0 + 150, T0 + 150 - 60_000);
    expect((await store.apiKeys.byHash('hash-k2'))?.last_used).toBe(T0 + 100);
    await store.apiKeys.touch('k2', T0 + 60_100, T0 + 100);
    expect((await store.apiKeys.byHash('hash-k2'))?.last_used).toBe(T0 + 60_100);
  });

  it('revokes once, only in its own customer; a revoked key is kept, unlisted, and frees its name', async () => {
    expect(await store.apiKeys.revoke('b', 'k3', T0 + 200)).toBe('missing');
    expect(await store.apiKeys.revoke('a', 'k3', T0 + 200)).toBe('revoked');
    expect(await store.apiKeys.revoke('a', 'k3', T0 + 300)).toBe('missing');
    expect(await store.apiKeys.revoke('a', 'no-such-key', T0 + 300)).toBe('missing');
    expect(await store.apiKeys.byHash('hash-k3')).toEqual(stored(k3, { revoked: T0 + 200 }));
    expect((await store.apiKeys.page('a', null, 10)).map((k) => k.id)).toEqual(['k1', 'k2']);
    expect(await store.apiKeys.create(key('a', 'k4', 'backup', T0 + 400))).toBe(true);
    expect((await store.apiKeys.page('a', null, 10)).map((k) => k.name)).toEqual(['ci', 'deploy', 'backup']);
  });
}

describe('SQLite store: API keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-api-keys-'));
  // Registered first, so it runs after the store is closed (hooks run in reverse).
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  contract(() => openStore(sqliteLocator(dir), 'server'));
});

describePostgres('PostgreSQL store: API keys', () => {
  contract(async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: new Uint8Array(32).fill(7) }, 'server'));
});
