import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCRYPT_COST, costOf, dummyHash, hashPassword, isWeakerThan, verifyPassword } from '../../src/auth/passwords.js';
import { call } from '../helpers/http.js';
import { ADMIN_EMAIL, CUSTOMER, TEST_PASSWORD_COST, startTestServer } from '../helpers/server.js';

// Password hashes (docs/users.md "Passwords"): scrypt N = 2^17, r = 8, p = 1 for new hashes in
// every `serve`; a log-in with an older, cheaper hash stores a new one. The other test files run
// their servers at TEST_PASSWORD_COST; these use the default.

const OLD_COST = { N: 2 ** 14, r: 8, p: 1 };

describe('scrypt hashes', () => {
  it('are made at N = 2^17, r = 8, p = 1 by default, and verify', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    expect(costOf(hash)).toEqual({ N: 131072, r: 8, p: 1 });
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
  });

  it('the hash verified for an unknown address costs what a new hash costs, and matches nothing', async () => {
    expect(costOf(dummyHash(DEFAULT_SCRYPT_COST))).toEqual(DEFAULT_SCRYPT_COST);
    expect(await verifyPassword('', dummyHash(TEST_PASSWORD_COST))).toBe(false);
  });

  it('tells a weaker hash from one of the cost, and refuses what it cannot have made', async () => {
    expect(isWeakerThan(await hashPassword('x', OLD_COST), DEFAULT_SCRYPT_COST)).toBe(true);
    expect(isWeakerThan(dummyHash(DEFAULT_SCRYPT_COST), DEFAULT_SCRYPT_COST)).toBe(false);
    for (const stored of ['scrypt$1048577$8$1$AA==$AA==', 'scrypt$2097152$8$1$AA==$AA==', 'scrypt$1000$8$1$AA==$AA==', 'bcrypt$x', 'scrypt$16384$8$1$$']) {
      expect({ stored, cost: costOf(stored), matches: await verifyPassword('x', stored) }).toEqual({ stored, cost: undefined, matches: false });
    }
  });
});

describe('a server at the default cost', () => {
  it('stores the first administrator at 2^17, and upgrades an older hash at the next log-in without voiding IdTokens', async () => {
    const t = await startTestServer({ passwordCost: DEFAULT_SCRYPT_COST });
    try {
      const { store } = t.server.ctx;
      expect(costOf((await store.users.byEmail(ADMIN_EMAIL))!.password_hash!)).toEqual({ N: 131072, r: 8, p: 1 });

      // A user from before the upgrade: a hash at 2^14.
      const id = randomUUID();
      const older = await hashPassword('an-older-password', OLD_COST);
      expect(await store.users.create({ id, customer_id: CUSTOMER, email: 'older@example.com', roles: ['USER_ROLE'], password_hash: older, created: Date.now() })).toBe(true);
      const token = await t.login('older@example.com', 'an-older-password');
      const upgraded = (await store.users.byId(id))!;
      expect({ cost: costOf(upgraded.password_hash!), session_version: upgraded.session_version }).toEqual({ cost: { N: 131072, r: 8, p: 1 }, session_version: 0 });
      expect(await verifyPassword('an-older-password', upgraded.password_hash!)).toBe(true);
      // The token of that log-in works: the upgrade is no password change.
      expect((await call(t.url, 'GET', `/${CUSTOMER}/me`, { token })).status).toBe(200);
      // The next log-in finds nothing to upgrade.
      await t.login('older@example.com', 'an-older-password');
      expect((await store.users.byId(id))!.password_hash).toBe(upgraded.password_hash);
    } finally {
      await t.close();
    }
  });
});
