import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../src/auth/passwords.js';
import { ApiClient } from '../../src/client/api.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, TEST_PASSWORD_COST, startTestServer, type TestServer } from './server.js';

/** A clock tests move by hand: real time plus an offset, or a fixed instant. */
export class TestClock {
  private offset = 0;
  private fixed: number | undefined;

  now = (): number => this.fixed ?? Date.now() + this.offset;
  /** Moves time by `ms` (negative: into the past). */
  advance(ms: number): void {
    if (this.fixed !== undefined) this.fixed += ms;
    else this.offset += ms;
  }
  /** Stops time at `ms`. */
  freeze(ms: number): void {
    this.fixed = ms;
  }
  /** Back to real time. */
  reset(): void {
    this.offset = 0;
    this.fixed = undefined;
  }
}

export const OTHER_CUSTOMER = 'globex';
export const OTHER_ADMIN_EMAIL = 'boss@globex.example';
export const USER_PASSWORD = 'user-password-123';

/** A user a test can act as. */
export interface Actor {
  id: string;
  email: string;
  token: string;
  client: ApiClient;
}

/**
 * The world of the foundation's scenario tables: a server of customer `acme` with its admin,
 * a USER_ROLE user, a second customer `globex` with its own admin, and a hand-moved clock.
 */
export interface Foundation {
  t: TestServer;
  url: string;
  clock: TestClock;
  admin: Actor;
  user: Actor;
  otherAdmin: Actor;
  /** A fresh USER_ROLE (or ADMIN_ROLE) user of acme with a password. */
  newUser(role?: 'USER_ROLE' | 'ADMIN_ROLE'): Promise<Actor>;
  /** A fresh user of acme without a password (to invite). */
  newInvitee(role?: 'USER_ROLE' | 'ADMIN_ROLE'): Promise<{ id: string; email: string }>;
  /** A token of the admin issued two hours ago: expired an hour ago. */
  expiredToken(): Promise<string>;
  /** A token of a user that was deleted after it logged in. */
  deletedUserToken(): Promise<string>;
  close(): Promise<void>;
}

let emails = 0;

/** Creates a customer with an administrator straight in the stores (what `operator customers add` does). */
export async function addCustomer(t: TestServer, customerId: string, email: string, password: string): Promise<string> {
  const { ctx } = t.server;
  const id = randomUUID();
  const hash = await hashPassword(password, TEST_PASSWORD_COST);
  const admin = { id, customer_id: customerId, email, roles: ['ADMIN_ROLE'], password_hash: hash, created: ctx.clock() };
  const outcome = await ctx.store.customers.createWithAdmin(customerId, admin, ctx.clock());
  if (outcome !== 'created') throw new Error(`customer ${customerId} not created: ${outcome}`);
  return id;
}

export async function startFoundation(): Promise<Foundation> {
  const clock = new TestClock();
  const t = await startTestServer({ clock: clock.now });
  const me = await t.admin.get<{ id: string }>(`/${CUSTOMER}/me`);
  const admin: Actor = { id: me.id, email: ADMIN_EMAIL, token: t.adminToken, client: t.admin };
  const newUser = async (role: 'USER_ROLE' | 'ADMIN_ROLE' = 'USER_ROLE'): Promise<Actor> => {
    const email = `person${++emails}-${randomUUID().slice(0, 8)}@example.com`;
    const created = await t.createUser(role, email);
    return { ...created, email };
  };
  const newInvitee = async (role: 'USER_ROLE' | 'ADMIN_ROLE' = 'USER_ROLE') => {
    const email = `invitee${++emails}-${randomUUID().slice(0, 8)}@example.com`;
    const { id } = await t.admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'In', last_name: 'Vitee', role, email });
    return { id, email };
  };
  const otherId = await addCustomer(t, OTHER_CUSTOMER, OTHER_ADMIN_EMAIL, USER_PASSWORD);
  const otherToken = await t.login(OTHER_ADMIN_EMAIL, USER_PASSWORD);
  return {
    t,
    url: t.url,
    clock,
    admin,
    user: await newUser('USER_ROLE'),
    otherAdmin: { id: otherId, email: OTHER_ADMIN_EMAIL, token: otherToken, client: new ApiClient(t.url, otherToken) },
    newUser,
    newInvitee,
    async expiredToken() {
      clock.advance(-2 * 3600_000);
      try {
        return await t.login(ADMIN_EMAIL, ADMIN_PASSWORD);
      } finally {
        clock.reset();
      }
    },
    async deletedUserToken() {
      const doomed = await newUser('USER_ROLE');
      await t.admin.delete(`/${CUSTOMER}/users/${doomed.id}`);
      return doomed.token;
    },
    close: () => t.close(),
  };
}
