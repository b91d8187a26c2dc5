// The audit_log repository over both stores: entries read back field by field, newest-first keyset
// pages per customer, the time range and the action filter.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import { GatewayNameTaken, PreparationRefused, type AuditKey, type Preparation, type Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const T0 = 1_800_000_000_000;
const END: AuditKey = { time: Number.MAX_SAFE_INTEGER, id: '' };

function admin(customer: string) {
  return { id: `admin-${customer}`, customer_id: customer, email: `admin@${customer}.example`, roles: ['ADMIN_ROLE'], created: T0 };
}

/** An entry with every field. */
const FULL: AuditEntry = {
  id: '00000000-0000-4000-8000-000000000001',
  customerId: 'acme',
  time: T0 + 10,
  action: 'gateway.created',
  actor: { type: 'user', id: 'admin-acme', email: 'admin@acme.example' },
  target: { type: 'gateway', id: 'gw-1' },
  ip: '192.0.2.7',
  details: { name: 'dock 1', nested: { list: [1, 'two'] } },
};

/** An entry with only the required fields. */
const BARE: AuditEntry = {
  id: '00000000-0000-4000-8000-000000000002',
  customerId: 'acme',
  time: T0 + 20,
  action: 'feature.set',
  actor: { type: 'operator', id: 'operator' },
};

function entry(id: string, time: number, action: AuditEntry['action'], customerId = 'acme'): AuditEntry {
  return { id, customerId, time, action, actor: { type: 'device', id: 'gw-1' } };
}

function contract(open: () => Promise<Store>): void {
  let store: Store;
  beforeAll(async () => {
    store = await open();
    expect(await store.customers.createWithAdmin('acme', admin('acme'), T0)).toBe('created');
    expect(await store.customers.createWithAdmin('other', admin('other'), T0)).toBe('created');
    await store.audit.append(FULL);
    await store.audit.append(BARE);
    // Two entries in the same millisecond: the id orders them.
    await store.audit.append(entry('00000000-0000-4000-8000-00000000000b', T0 + 30, 'auth.login'));
    await store.audit.append(entry('00000000-0000-4000-8000-00000000000a', T0 + 30, 'auth.login'));
    await store.audit.append(entry('00000000-0000-4000-8000-00000000000c', T0 + 40, 'auth.login_refused'));
    await store.audit.append(entry('00000000-0000-4000-8000-0000000000ff', T0 + 35, 'auth.login', 'other'));
  });
  afterAll(async () => {
    await store?.close();
  });

  it('reads entries back as written, absent fields absent, newest first', async () => {
    const page = await store.audit.newestBefore('acme', 0, END, 10);
    expect(page.more).toBe(false);
    expect(page.entries.map((e) => e.id.slice(-2))).toEqual(['0c', '0b', '0a', '02', '01']);
    expect(page.entries[4]).toEqual(FULL);
    expect(page.entries[3]).toEqual(BARE);
    expect(Object.keys(page.entries[3]!).sort()).toEqual(['action', 'actor', 'customerId', 'id', 'time']);
  });

  it('pages by (time, id) downwards: a page of `limit` and whether more follow', async () => {
    const first = await store.audit.newestBefore('acme', 0, END, 2);
    expect(first.entries.map((e) => e.id.slice(-2))).toEqual(['0c', '0b']);
    expect(first.more).toBe(true);
    const last = first.entries[1]!;
    const second = await store.audit.newestBefore('acme', 0, { time: last.time, id: last.id }, 2);
    expect(second.entries.map((e) => e.id.slice(-2))).toEqual(['0a', '02']);
    expect(second.more).toBe(true);
    const third = await store.audit.newestBefore('acme', 0, { time: T0 + 20, id: BARE.id }, 2);
    expect(third.entries.map((e) => e.id.slice(-2))).toEqual(['01']);
    expect(third.more).toBe(false);
  });

  it('keeps to the time range: start included, before excluded', async () => {
    const page = await store.audit.newestBefore('acme', T0 + 20, { time: T0 + 40, id: '' }, 10);
    expect(page.entries.map((e) => e.id.slice(-2))).toEqual(['0b', '0a', '02']);
  });

  it('filters by action', async () => {
    const page = await store.audit.newestBefore('acme', 0, END, 1, 'auth.login');
    expect(page.entries.map((e) => e.id.slice(-2))).toEqual(['0b']);
    expect(page.more).toBe(true);
    const rest = await store.audit.newestBefore('acme', 0, { time: T0 + 30, id: page.entries[0]!.id }, 10, 'auth.login');
    expect(rest.entries.map((e) => e.id.slice(-2))).toEqual(['0a']);
    expect((await store.audit.newestBefore('acme', 0, END, 10, 'user.deleted')).entries).toEqual([]);
  });

  it("shows only the customer's own entries", async () => {
    const page = await store.audit.newestBefore('other', 0, END, 10);
    expect(page.entries.map((e) => [e.customerId, e.id.slice(-2)])).toEqual([['other', 'ff']]);
  });

  it('refuses a second entry with the same id', async () => {
    await expect(store.audit.append({ ...BARE, time: T0 + 50 })).rejects.toThrow();
    expect((await store.audit.newestBefore('acme', T0 + 50, END, 10)).entries).toEqual([]);
  });
}

/** The audit parameter of the repositories: an entry is written with its change, none with a refused one. */
function writesWithTheChange(open: () => Promise<Store>): void {
  let store: Store;
  const ids = async (customer = 'acme') => (await store.audit.newestBefore(customer, 0, END, 500)).entries.map((e) => e.id).sort();
  const mark = (n: number, action: AuditEntry['action'] = 'gateway.created', customerId = 'acme'): AuditEntry => ({
    ...entry(`00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, T0 + n, action, customerId),
  });
  let serials = 0;
  const preparation = (gatewayId: string): Preparation => ({
    gatewayId,
    certificate: { serial: `0a${++serials}`, commonName: gatewayId, certPem: 'CERT', sealedKey: Buffer.from('SEALED'), notAfter: T0 + 1e9 },
    tokenHash: `hash-${gatewayId}`,
    expiresAt: T0 + 1e9,
  });
  beforeAll(async () => {
    store = await open();
    expect(await store.customers.createWithAdmin('acme', admin('acme'), T0, mark(1, 'user.created'))).toBe('created');
  });
  afterAll(async () => {
    await store?.close();
  });

  it('customers and users: the entry of a creation or deletion, none when refused', async () => {
    expect(await store.customers.createWithAdmin('acme', admin('acme2'), T0, mark(2, 'user.created'))).toBe('customer-exists');
    expect(await store.users.create({ ...admin('acme'), id: 'u2', email: 'u2@acme.example' }, mark(3, 'user.created'))).toBe(true);
    expect(await store.users.create({ ...admin('acme'), id: 'u3', email: 'U2@acme.example' }, mark(4, 'user.created'))).toBe(false);
    expect(await store.users.delete('acme', 'nobody', mark(5, 'user.deleted'))).toBe('missing');
    expect(await store.users.delete('acme', 'u2', mark(6, 'user.deleted'))).toBe('deleted');
    expect(await ids()).toEqual([mark(1).id, mark(3).id, mark(6).id]);
  });

  it('gateways: all entries of a creation, none when a name is taken; a deletion once', async () => {
    const gateway = (id: string, name: string) => ({ id, name, usecase: 'u', station: 's' });
    await store.gateways.createAll('acme', [gateway('g1', 'one')], T0, [mark(10)]);
    await expect(store.gateways.createAll('acme', [gateway('g2', 'two'), gateway('g3', 'one')], T0, [mark(11), mark(12)])).rejects.toBeInstanceOf(GatewayNameTaken);
    expect(await store.gateways.markDeleted('acme', 'g1', T0, mark(13, 'gateway.deleted'))).toBe(true);
    expect(await store.gateways.markDeleted('acme', 'g1', T0, mark(14, 'gateway.deleted'))).toBe(false);
    expect(await ids()).toEqual([mark(1).id, mark(3).id, mark(6).id, mark(10).id, mark(13).id]);
  });

  it('provisioning: a preparation once, a redemption with the entry built from it, a package all or nothing', async () => {
    const gateway = (id: string, name: string) => ({ id, name, usecase: 'u', station: 's' });
    await store.gateways.createAll('acme', [gateway('p1', 'p-one')], T0);
    expect(await store.provisioning.prepare('acme', preparation('p1'), T0, mark(20, 'gateway.prepared'))).toBe('prepared');
    expect(await store.provisioning.prepare('acme', preparation('p1'), T0, mark(21, 'gateway.prepared'))).toBe('already-prepared');
    expect(await store.provisioning.prepare('acme', preparation('nope'), T0, mark(22, 'gateway.prepared'))).toBe('missing');
    const built: string[] = [];
    const redeemed = await store.provisioning.redeem('hash-p1', T0, undefined, ({ gateway: g }) => (built.push(g.id), mark(23, 'gateway.provisioned', g.customer_id)));
    expect(typeof redeemed).toBe('object');
    expect(await store.provisioning.redeem('hash-p1', T0, undefined, () => mark(24, 'gateway.provisioned'))).toBe('invalid');
    expect(built).toEqual(['p1']);
    // A package with a gateway already prepared is refused whole: neither its new gateway nor any entry.
    await expect(
      store.provisioning.preparePackage('acme', [gateway('p2', 'p-two')], [preparation('p2'), { ...preparation('p1'), tokenHash: 'other' }], T0, [mark(25), mark(26, 'gateway.prepared')]),
    ).rejects.toBeInstanceOf(PreparationRefused);
    await store.provisioning.preparePackage('acme', [gateway('p3', 'p-three')], [preparation('p3')], T0, [mark(27), mark(28, 'gateway.prepared')]);
    expect(await ids()).toEqual([1, 3, 6, 10, 13, 20, 23, 27, 28].map((n) => mark(n).id));
  });
}

describe('SQLite store: audit log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-audit-'));
  // Registered first, so it runs after the store is closed (hooks run in reverse).
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  contract(() => openStore(sqliteLocator(dir), 'server'));
  describe('written with the change', () => writesWithTheChange(() => openStore(sqliteLocator(mkdtempSync(join(dir, 'changes-'))), 'server')));
});

describePostgres('PostgreSQL store: audit log', () => {
  contract(async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: new Uint8Array(32).fill(7) }, 'server'));
  describe('written with the change', () =>
    writesWithTheChange(async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: new Uint8Array(32).fill(7) }, 'server')));
});
