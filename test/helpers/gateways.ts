import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { TEST_PASSWORD_COST, startTestServer, type TestServer } from './server.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** One HTTP call that never throws: status, headers and parsed body, for scenario tables. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await request(base + path, { method: method as 'GET', headers, body });
  const text = await response.body.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.statusCode, headers: response.headers, body: parsed };
}

/** A request/expectation row of a scenario table. */
export interface Scenario {
  name: string;
  method: string;
  path: string;
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  status: number;
  /** The exact body expected, when given. */
  expect?: unknown;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A second customer with its own administrator; returns that administrator's IdToken. */
export async function otherCustomerToken(t: TestServer, customerId = 'other'): Promise<string> {
  const ctx = t.server.ctx;
  const email = `admin@${customerId}.example.com`;
  const password = 'other-password-123';
  const admin = { id: randomUUID(), customer_id: customerId, email, roles: ['ADMIN_ROLE'], password_hash: await hashPassword(password, TEST_PASSWORD_COST), created: ctx.clock() };
  await ctx.store.customers.createWithAdmin(customerId, admin, ctx.clock());
  return t.login(email, password);
}

export const UNAUTHORIZED = {
  title: 'Unauthorized',
  details: 'No authentication header found: send the IdToken in the Authorization header.',
};

export const OTHER_CUSTOMER = {
  title: 'Forbidden',
  details: 'Your account belongs to customer "other" and has no access to customer "acme".',
};

/** The 403 of a USER_ROLE caller on a call that needs `permission`. */
export const lacks = (permission: string) => ({
  title: 'Forbidden',
  details: `Your role USER_ROLE lacks the permission "${permission}" this call needs; ask an administrator.`,
});

/** What scenario rows may refer to: the server, tokens by role, and anything the table set up. */
export interface Fixture {
  t: TestServer;
  tokens: Record<'admin' | 'user' | 'other', string>;
  /** Values the table's setup stored (gateway ids, ...). */
  ids: Record<string, string>;
}

type Lazy<T> = T | ((f: Fixture) => T);

/** One row of a scenario table (after PocketBase's ApiScenario): request and exact expectation. */
export interface Row {
  name: string;
  method: string;
  path: Lazy<string>;
  /** Whose IdToken goes into Authorization; none when omitted. */
  as?: 'admin' | 'user' | 'other';
  body?: Lazy<unknown>;
  rawBody?: string;
  headers?: Lazy<Record<string, string>>;
  status: number;
  /** The exact body expected, when given. */
  expect?: Lazy<unknown>;
  /** Further checks on the response. */
  check?: (response: RawResponse, f: Fixture) => void | Promise<void>;
}

const resolve = <T>(value: Lazy<T>, f: Fixture): T => (typeof value === 'function' ? (value as (f: Fixture) => T)(f) : value);

/** Sends the row's request and returns the response (assertions are the caller's). */
export async function send(row: Row, f: Fixture): Promise<RawResponse> {
  return call(f.t.url, row.method, resolve(row.path, f), {
    token: row.as ? f.tokens[row.as] : undefined,
    body: row.body === undefined ? undefined : resolve(row.body, f),
    rawBody: row.rawBody,
    headers: row.headers === undefined ? undefined : resolve(row.headers, f),
  });
}

/** Resolves a row's expected body against the fixture. */
export function expected(row: Row, f: Fixture): unknown {
  return resolve(row.expect, f);
}

/** Defines one test per row, run in order against the fixture's server. */
export function scenarioTable(rows: Row[], fixture: () => Fixture): void {
  it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const f = fixture();
    const response = await send(row, f);
    if (row.expect !== undefined) expect({ status: response.status, body: response.body }).toEqual({ status: row.status, body: expected(row, f) });
    else expect(response.status).toBe(row.status);
    await row.check?.(response, f);
  });
}

/** The standing clock of gateway tests (2027-01-15). */
export const T0 = 1_800_000_000_000;

/** A server with a settable clock, tokens of admin, user and another customer's admin. */
export function useFixture(): { fixture: () => Fixture; clock: { now: number } } {
  const clock = { now: T0 };
  let f: Fixture;
  beforeAll(async () => {
    const t: TestServer = await startTestServer({ clock: () => clock.now });
    const user = await t.createUser('USER_ROLE');
    f = { t, tokens: { admin: t.adminToken, user: user.token, other: await otherCustomerToken(t) }, ids: {} };
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
  };
}

