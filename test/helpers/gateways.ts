import { afterAll, beforeAll } from 'vitest';
import { error, type World } from './scenarios.js';
import { startTestServer, type TestServer } from './server.js';
import { bearer } from './users.js';
import { addCustomer } from './world.js';

/** A second customer with its own administrator; returns that administrator's IdToken. */
export async function otherCustomerToken(t: TestServer, customerId = 'other'): Promise<string> {
  const email = `admin@${customerId}.example.com`;
  const password = 'other-password-123';
  await addCustomer(t, customerId, email, password);
  return t.login(email, password);
}

/** The 403 of customer "other"'s administrator on a path of acme. */
export const OTHER_CUSTOMER_REFUSED = error('Forbidden', 'Your account belongs to customer "other" and has no access to customer "acme".');

/** The world of the gateway tables: the server, tokens by role, and anything the table set up. */
export interface Fixture extends World {
  t: TestServer;
  tokens: Record<'admin' | 'user' | 'other', string>;
  /** Values the table's setup stored (gateway ids, ...). */
  ids: Record<string, string>;
}

/** A row's Authorization by role: `auth: by.admin`. */
export const by = {
  admin: (f: Fixture) => bearer(f.tokens.admin),
  user: (f: Fixture) => bearer(f.tokens.user),
  other: (f: Fixture) => bearer(f.tokens.other),
};

/** The standing clock of gateway tests (2027-01-15). */
export const T0 = 1_800_000_000_000;

/** A server with a settable clock, tokens of admin, user and another customer's admin. */
export function useFixture(): { fixture: () => Fixture; clock: { now: number } } {
  const clock = { now: T0 };
  let f: Fixture;
  beforeAll(async () => {
    const t: TestServer = await startTestServer({ clock: () => clock.now });
    const user = await t.createUser('USER_ROLE');
    f = { t, url: t.url, close: () => t.close(), tokens: { admin: t.adminToken, user: user.token, other: await otherCustomerToken(t) }, ids: {} };
  });
  afterAll(() => f.t.close());
  return { fixture: () => f, clock };
}

/** The API object of a gateway that was just created at `at`. */
export function fresh(id: string, name: string, usecase: string, station: string, at = T0) {
  return {
    id,
    model: '',
    manufacturer: '',
    class: 'gateway',
    type: 'stationary',
    firmware: '',
    created: at,
    last_updated: at,
    usecase,
    station,
    thing_name: id,
    name,
    connectivity_status: 'NOT_REGISTERED',
    last_seen: null,
    provisioned: null,
  };
}
