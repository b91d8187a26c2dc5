// The users repository's least-privilege parts over both stores (docs/users.md): e-mail spellings
// found alike (PostgreSQL in a C and in a UTF-8 locale too), session versions, invitations that
// void each other, hash upgrades, secret replacement with its audit entries, and migration 0016 /
// 0011, which keys the refusals of the lockout anew.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { NewInvitation, Store } from '../../src/store/ports/index.js';
import { migrations as postgresMigrations } from '../../src/store/postgres/migrations/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { migrations as sqliteMigrations } from '../../src/store/sqlite/migrations/index.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const T0 = 1_800_000_000_000;
const MASTER_KEY = new Uint8Array(32).fill(7);
const END = { time: Number.MAX_SAFE_INTEGER, id: '' };

/** Spellings of two stored addresses, and which user each must find (undefined: none). */
const SPELLINGS: [string, string | undefined][] = [
  ['admin@corp.test', 'u-admin'],
  ['ADMIN@CORP.TEST', 'u-admin'],
  ['Admin@Corp.Test', 'u-admin'],
  ['adm\u0130n@corp.test', undefined], // U+0130 İ: lower-cases to "i" only in Unicode-aware (Turkish-aware) folding
  ['adm\u0131n@corp.test', undefined], // U+0131 ı, dotless
  ['\uff41\uff44\uff4d\uff49\uff4e@corp.test', undefined], // fullwidth "admin"
  ['\uff21\uff24\uff2d\uff29\uff2e@corp.test', undefined], // fullwidth "ADMIN"
  ['\u00e9mile@corp.test', 'u-emile-lower'],
  ['\u00c9mile@corp.test', 'u-emile-upper'],
  ['\u00c9MILE@CORP.TEST', 'u-emile-upper'],
];

const invitation = (overrides: Partial<NewInvitation>): NewInvitation => ({
  tokenHash: 'token',
  userId: 'u-user',
  customerId: 'acme',
  kind: 'invitation',
  created: T0,
  expiresAt: T0 + 1000,
  ...overrides,
});

function contract(open: () => Promise<Store>): void {
  let store: Store;
  beforeAll(async () => {
    store = await open();
    expect(await store.customers.createWithAdmin('acme', { id: 'u-admin', customer_id: 'acme', email: 'Admin@corp.test', roles: ['ADMIN_ROLE'], created: T0 }, T0)).toBe('created');
    for (const [id, email] of [['u-emile-lower', '\u00e9mile@corp.test'], ['u-emile-upper', '\u00c9mile@corp.test'], ['u-user', 'user@corp.test']]) {
      expect(await store.users.create({ id: id!, customer_id: 'acme', email: email!, roles: ['USER_ROLE'], created: T0 })).toBe(true);
    }
  });
  afterAll(async () => {
    await store?.close();
  });

  it('finds a user by the spellings that equal its address in ASCII letters case-insensitively, and by no other', async () => {
    const found: Record<string, string | undefined> = {};
    for (const [spelling] of SPELLINGS) found[spelling] = (await store.users.byEmail(spelling))?.id;
    expect(found).toEqual(Object.fromEntries(SPELLINGS));
    // Unique alike: an ASCII case variant is taken, a non-ASCII one is another address.
    expect(await store.users.create({ id: 'u-x', customer_id: 'acme', email: 'ADMIN@corp.TEST', roles: [], created: T0 })).toBe(false);
    expect(await store.users.create({ id: 'u-y', customer_id: 'acme', email: 'adm\u0130n@corp.test', roles: [], created: T0 })).toBe(true);
    expect(await store.users.delete('acme', 'u-y')).toBe('deleted');
  });

  it('raises the session version when the roles change, not when names do; never demotes the last administrator', async () => {
    const entries: AuditEntry[] = [];
    const audit = ({ before, after }: { before: { roles: string[] }; after: { roles: string[] } }): AuditEntry => {
      const entry: AuditEntry = { id: `00000000-0000-4000-8000-00000000000${entries.length}`, customerId: 'acme', time: T0, action: 'user.updated', actor: { type: 'operator', id: 'operator' }, details: { before: before.roles, after: after.roles } };
      entries.push(entry);
      return entry;
    };
    expect(await store.users.update('acme', 'u-user', { first_name: 'Ulla', language: 'de' }, T0 + 1, audit)).toMatchObject({ first_name: 'Ulla', language: 'de', session_version: 0, last_updated: T0 + 1 });
    expect(await store.users.update('acme', 'u-user', { roles: ['USER_ROLE'] }, T0 + 2, audit)).toMatchObject({ roles: ['USER_ROLE'], session_version: 0 });
    expect(await store.users.update('acme', 'u-user', { roles: ['USER_ROLE', 'ADMIN_ROLE'] }, T0 + 3, audit)).toMatchObject({ roles: ['USER_ROLE', 'ADMIN_ROLE'], first_name: 'Ulla', session_version: 1 });
    expect(await store.users.update('acme', 'u-admin', { roles: ['USER_ROLE'] }, T0 + 4, audit)).toMatchObject({ roles: ['USER_ROLE'], session_version: 1 });
    expect(await store.users.update('acme', 'u-user', { roles: ['USER_ROLE'] }, T0 + 5, audit)).toBe('last-admin');
    expect(await store.users.update('other', 'u-user', { roles: ['USER_ROLE'] }, T0 + 5, audit)).toBe('missing');
    expect(await store.users.update('acme', 'u-admin', { roles: ['ADMIN_ROLE'] }, T0 + 6, audit)).toMatchObject({ session_version: 2 });
    // One entry per change made, none for the refused ones, each in the log.
    const logged = (await store.audit.newestBefore('acme', 0, END, 100, 'user.updated')).entries;
    expect(logged.map((e) => e.details).reverse()).toEqual(entries.slice(0, 5).map((e) => e.details));
  });

  it('issues an invitation only to a user without a password and a reset only to one with a password, each voiding the earlier ones', async () => {
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'i-1' }))).toBe('issued');
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'i-2' }))).toBe('issued');
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'r-0', kind: 'password-reset' }))).toBe('no-password');
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'x', customerId: 'other' }))).toBe('missing');
    // The older invitation was voided by the newer.
    expect(await store.users.redeemInvitation('i-1', 'hash-1', T0 + 10)).toBeUndefined();
    const before = (await store.users.byId('u-user'))!.session_version;
    expect(await store.users.redeemInvitation('i-2', 'hash-2', T0 + 10)).toBe('u-user');
    expect(await store.users.byId('u-user')).toMatchObject({ password_hash: 'hash-2', session_version: before + 1 });
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'i-3' }))).toBe('has-password');
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'r-1', kind: 'password-reset' }))).toBe('issued');
    expect(await store.users.issueInvitation(invitation({ tokenHash: 'r-2', kind: 'password-reset' }))).toBe('issued');
    expect(await store.users.redeemInvitation('r-1', 'hash-3', T0 + 20)).toBeUndefined();
    const kinds: string[] = [];
    expect(await store.users.redeemInvitation('r-2', 'hash-3', T0 + 20, ({ user, kind }) => (kinds.push(`${user.id} ${kind}`), { id: '00000000-0000-4000-8000-0000000000aa', customerId: 'acme', time: T0, action: 'user.invitation_accepted', actor: { type: 'user', id: user.id } }))).toBe('u-user');
    expect(kinds).toEqual(['u-user password-reset']);
    expect(await store.users.redeemInvitation('r-2', 'hash-4', T0 + 20)).toBeUndefined();
    expect((await store.users.byId('u-user'))!).toMatchObject({ password_hash: 'hash-3', session_version: before + 2 });
  });

  it('accepting one token voids the others; setting a password does too', async () => {
    expect(await store.users.issueInvitation(invitation({ userId: 'u-emile-lower', tokenHash: 'e-1' }))).toBe('issued');
    await store.users.setPassword('u-emile-lower', 'set-by-operator', T0 + 30);
    expect(await store.users.byId('u-emile-lower')).toMatchObject({ password_hash: 'set-by-operator', session_version: 1 });
    expect(await store.users.redeemInvitation('e-1', 'hash', T0 + 31)).toBeUndefined();
  });

  it('upgrades a hash only while it is the one read, and keeps the session version', async () => {
    const { session_version } = (await store.users.byId('u-user'))!;
    expect(await store.users.upgradePasswordHash('u-user', 'not-the-stored-one', 'stronger')).toBe(false);
    expect(await store.users.upgradePasswordHash('u-user', 'hash-3', 'stronger')).toBe(true);
    expect(await store.users.byId('u-user')).toMatchObject({ password_hash: 'stronger', session_version });
  });

  it('replaces a secret with its audit entries, one entry per customer, and one replacement at a time', async () => {
    expect(await store.customers.createWithAdmin('beta', { id: 'u-beta', customer_id: 'beta', email: 'b@beta.test', roles: ['ADMIN_ROLE'], created: T0 }, T0)).toBe('created');
    const entry = (customerId: string, n: number): AuditEntry => ({
      id: `00000000-0000-4000-8000-0000000001${customerId === 'acme' ? 0 : 1}${n}`,
      customerId,
      time: T0 + n,
      action: 'signing_key.rotated',
      actor: { type: 'operator', id: 'operator' },
    });
    const appended = await Promise.all([1, 2, 3].map((n) => store.secrets.replace('keys/links.key', (current) => `${current ?? ''}${n}`, (ids) => ids.map((id) => entry(id, n)))));
    expect(appended.map((value) => value.length).sort()).toEqual([1, 2, 3]);
    expect([...(await store.secrets.get('keys/links.key'))!].sort()).toEqual(['1', '2', '3']);
    for (const customer of ['acme', 'beta']) {
      expect((await store.audit.newestBefore(customer, 0, END, 10, 'signing_key.rotated')).entries.map((e) => e.id).sort()).toEqual([1, 2, 3].map((n) => entry(customer, n).id));
    }
  });
}

describe('SQLite store: users, least privilege', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-users-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  contract(() => openStore(sqliteLocator(dir), 'server'));
});

describePostgres('PostgreSQL store (C locale): users, least privilege', () => {
  contract(async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: MASTER_KEY }, 'server'));
});

// Where lower() folds every letter, as an operator's default database does: the store must still
// compare as SQLite does (the escape a security review found: "admİn@..." logged in as "admin@...").
describePostgres('PostgreSQL store (C.utf8 locale): users, least privilege', () => {
  contract(async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(undefined, { locale: 'C.utf8' }), masterKey: MASTER_KEY }, 'server'));
});

/** Refusals as the lockout kept them before migration 0016 / 0011: lower-cased addresses. */
const OLD_REFUSALS = [['admin@corp.test', 1], ['nobody@corp.test', 2]] as const;
const NEW_KEYS = [['user:u-admin', 1], ['email:nobody@corp.test', 2]];

describe('migration 0016 (SQLite): refusals keyed by user, or by address when it found none', () => {
  it('keys the refusals in the window anew', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scanhub-users-migration-'));
    const db = new Database(join(dir, 'scanhub.db'));
    try {
      const index = sqliteMigrations.findIndex((m) => m.name === '0016_least_privilege');
      for (const migration of sqliteMigrations.slice(0, index)) migration.up(db);
      db.prepare("INSERT INTO customers (id, created) VALUES ('acme', 0)").run();
      db.prepare("INSERT INTO users (id, customer_id, email, roles, created, last_updated) VALUES ('u-admin', 'acme', 'Admin@Corp.test', '[]', 0, 0)").run();
      for (const [key, at] of OLD_REFUSALS) db.prepare('INSERT INTO login_failures (email_lower, at) VALUES (?, ?)').run(key, at);
      sqliteMigrations[index]!.up(db);
      expect(db.prepare('SELECT lockout_key, at FROM login_failures ORDER BY at').raw().all()).toEqual(NEW_KEYS);
      expect(db.prepare('SELECT session_version FROM users').pluck().all()).toEqual([0]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describePostgres('migration 0011 (PostgreSQL, UTF-8 locale): refusals keyed by user, or by address when it found none', () => {
  it('keys the refusals in the window anew, matching addresses as the store does', async () => {
    const client = new pg.Client({ connectionString: await freshDatabase(undefined, { locale: 'C.utf8' }) });
    await client.connect();
    try {
      const index = postgresMigrations.findIndex((m) => m.name === '0011_least_privilege');
      for (const migration of postgresMigrations.slice(0, index)) await migration.up(client as pg.PoolClient);
      await client.query("INSERT INTO customers (id, created) VALUES ('acme', 0)");
      await client.query("INSERT INTO users (id, customer_id, email, roles, created, last_updated) VALUES ('u-admin', 'acme', 'Admin@Corp.test', '[]', 0, 0)");
      // What the old lockout key of "admİn@corp.test" was (JavaScript's toLowerCase): an unknown address to the store.
      for (const [key, at] of [...OLD_REFUSALS, ['admi\u0307n@corp.test', 3]] as const) await client.query('INSERT INTO login_failures (email_lower, at) VALUES ($1, $2)', [key, at]);
      await postgresMigrations[index]!.up(client as pg.PoolClient);
      const { rows } = await client.query<{ lockout_key: string; at: string }>('SELECT lockout_key, at FROM login_failures ORDER BY at');
      expect(rows.map((row) => [row.lockout_key, Number(row.at)])).toEqual([...NEW_KEYS, ['email:admi\u0307n@corp.test', 3]]);
    } finally {
      await client.end();
    }
  });
});
