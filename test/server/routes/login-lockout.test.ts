import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/auth/passwords.js';
import { call } from '../../helpers/http.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, TEST_PASSWORD_COST, collectedLogs, startTestServer, type TestServer } from '../../helpers/server.js';
import { TEST_STORE, testDatabase } from '../../helpers/test-store.js';
import { TestClock } from '../../helpers/world.js';

// The per-e-mail lockout of DESIGN.md "Trust" ("Brute force"): 10 refused log-ins of one address
// within 15 minutes, then 429 with Retry-After until the oldest of them leaves the window.

const WINDOW_MS = 15 * 60_000;
const T0 = 1_800_000_000_000;
const WRONG = { title: 'Unauthorized', details: 'The e-mail address or password is wrong.' };
const locked = (email: string, seconds: number) => ({
  title: 'Too Many Requests',
  details: `10 refused log-ins for ${JSON.stringify(email)} within 15 minutes: retry in ${seconds} seconds.`,
});

let t: TestServer;
const clock = new TestClock();
const logs = collectedLogs('warn');
let user: { email: string; password: string };

const login = (email: string, password: string) => call(t.url, 'POST', '/auth/login', { json: { email, password } });

/** `count` refused log-ins of the address at the clock's present time, each answered 401. */
async function refuse(email: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const answer = await login(email, 'not-the-password');
    expect([answer.status, answer.body]).toEqual([401, WRONG]);
  }
}

beforeAll(async () => {
  t = await startTestServer({ clock: clock.now, logger: logs.logger });
  const created = await t.createUser('USER_ROLE', 'locked-out@example.com');
  user = { email: 'locked-out@example.com', password: 'user-password-123' };
  expect(created.id).toEqual(expect.any(String));
});
afterAll(async () => {
  await t?.close();
});

describe('log-in lockout per e-mail address', () => {
  it('the 11th log-in within 15 minutes is refused with 429 and Retry-After, even with the right password, until the window passes', async () => {
    clock.freeze(T0);
    await refuse(user.email, 9);
    clock.freeze(T0 + 60_000);
    await refuse(user.email, 1);

    const lockedAnswer = await login(user.email, user.password);
    expect([lockedAnswer.status, lockedAnswer.body]).toEqual([429, locked(user.email, 840)]);
    expect([lockedAnswer.headers['retry-after'], lockedAnswer.headers['access-control-allow-origin']]).toEqual(['840', '*']);

    // Another user logs in meanwhile, and that clears nothing.
    expect((await login(ADMIN_EMAIL, ADMIN_PASSWORD)).status).toBe(200);
    expect((await login(user.email, user.password)).status).toBe(429);

    // One millisecond before the first nine refusals leave the window: still locked, for 1 second.
    clock.freeze(T0 + WINDOW_MS - 1);
    const last = await login(user.email, user.password);
    expect([last.status, last.headers['retry-after']]).toEqual([429, '1']);

    clock.freeze(T0 + WINDOW_MS);
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  it('logs one warning when an address becomes locked', () => {
    const warnings = logs.lines.filter((line) => line.msg === 'log-in locked: too many refused log-ins for this e-mail address');
    expect(warnings.map((line) => [line.email, line.until])).toEqual([[user.email, T0 + WINDOW_MS]]);
  });

  it('compares addresses case-insensitively and counts unknown addresses alike', async () => {
    clock.freeze(T0 + 10 * WINDOW_MS);
    await refuse('Nobody@Example.com', 5);
    await refuse('  nobody@example.COM', 5);
    const answer = await login('NOBODY@example.com', 'whatever');
    expect([answer.status, answer.body, answer.headers['retry-after']]).toEqual([429, locked('NOBODY@example.com', 900), '900']);
  });

  it('attempts while locked are not counted: the lock ends when the window passes', async () => {
    clock.freeze(T0 + 20 * WINDOW_MS);
    await refuse(user.email, 10);
    clock.advance(WINDOW_MS / 2);
    for (let i = 0; i < 20; i++) expect((await login(user.email, 'not-the-password')).status).toBe(429);
    clock.advance(WINDOW_MS / 2);
    expect((await login(user.email, user.password)).status).toBe(200);
  });
});

describe('lockout per user, whatever the spelling (both stores; PostgreSQL in a UTF-8 locale)', () => {
  // PostgreSQL where lower() folds every letter (an operator's default database): there
  // "p\u0130lot@..." (U+0130) found pilot@... while its lockout key did not, and logged in while locked.
  let s: TestServer;
  const spellingClock = new TestClock();
  const PASSWORD = 'spelled-password-1';
  const login = (email: string, password: string) => call(s.url, 'POST', '/auth/login', { json: { email, password } });
  /** A user made as `operator customers add` does (straight in the store): the API takes ASCII addresses only. */
  const addUser = async (email: string) => {
    const user = { id: randomUUID(), customer_id: CUSTOMER, email, roles: ['USER_ROLE'], password_hash: await hashPassword(PASSWORD, TEST_PASSWORD_COST), created: spellingClock.now() };
    expect(await s.server.ctx.store.users.create(user)).toBe(true);
  };
  beforeAll(async () => {
    s = await startTestServer({ clock: spellingClock.now }, await testDatabase(undefined, { locale: TEST_STORE === 'postgres' ? 'C.utf8' : undefined }));
    for (const email of ['pilot@example.com', '\u00c9mile@example.com', '\u00e9mile@example.com']) await addUser(email);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('spellings that find the user share its count and its lock; spellings that find no user never log in', async () => {
    spellingClock.freeze(T0);
    for (const spelling of ['Pilot@Example.com', ' PILOT@EXAMPLE.COM ', 'pilot@example.com', 'piLot@example.COM', 'PILOT@example.com']) {
      for (const password of ['wrong-1', 'wrong-2']) expect((await login(spelling, password)).status).toBe(401);
    }
    for (const spelling of ['pilot@example.com', 'PILOT@EXAMPLE.COM', '  Pilot@example.com']) {
      const answer = await login(spelling, PASSWORD);
      expect([answer.status, answer.body]).toEqual([429, locked(spelling.trim(), 900)]);
    }
    // U+0130 (dotted capital I), U+0131 (dotless i), fullwidth letters: other addresses, with no user.
    for (const spelling of ['p\u0130lot@example.com', 'p\u0131lot@example.com', '\uff50\uff49\uff4c\uff4f\uff54@example.com', '\uff30\uff29\uff2c\uff2f\uff34@example.com']) {
      const answer = await login(spelling, PASSWORD);
      expect({ spelling, status: answer.status, body: answer.body }).toEqual({ spelling, status: 401, body: WRONG });
    }
  });

  it('two users whose addresses differ only in the case of a non-ASCII letter are two users, locked apart', async () => {
    spellingClock.freeze(T0 + 10 * WINDOW_MS);
    await Promise.all(Array.from({ length: 10 }, () => login('\u00c9mile@example.com', 'not-the-password')));
    expect((await login('\u00c9mile@example.com', PASSWORD)).status).toBe(429);
    expect((await login('\u00e9mile@example.com', PASSWORD)).status).toBe(200);
  });
});

describe('per-address rate limits', () => {
  let limited: TestServer;
  beforeAll(async () => {
    // The helper's own log-in as the administrator is the first of the three.
    limited = await startTestServer({ rateLimits: { auth: 3, provisioning: 2 }, trustProxy: ['127.0.0.1'] });
  });
  afterAll(async () => {
    await limited?.close();
  });

  const tooMany = (path: string, max: number, seconds: number, ip = '127.0.0.1') => ({
    title: 'Too Many Requests',
    details: `More than ${max} requests a minute from ${ip} to POST ${path}: retry in ${seconds} seconds.`,
  });

  it('POST /auth/* share one limit per address, answered 429 in the error body with Retry-After', async () => {
    expect((await call(limited.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
    expect((await call(limited.url, 'POST', '/auth/accept-invitation', { json: { invitation_token: 'x', password: 'long-enough-password' } })).status).toBe(401);
    for (const [path, json] of [
      ['/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }],
      ['/auth/accept-invitation', { invitation_token: 'x', password: 'long-enough-password' }],
    ] as const) {
      const answer = await call(limited.url, 'POST', path, { json });
      const seconds = Number(answer.headers['retry-after']);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60);
      expect([answer.status, answer.body, answer.headers['access-control-allow-origin']]).toEqual([429, tooMany(path, 3, seconds), '*']);
    }
    // Other routes are not limited.
    expect((await call(limited.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('keys the limit by the client address, X-Forwarded-For of a trusted balancer included', async () => {
    const from = (ip: string) => call(limited.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, headers: { 'x-forwarded-for': ip } });
    expect([(await from('203.0.113.7')).status, (await from('203.0.113.7')).status, (await from('203.0.113.7')).status]).toEqual([200, 200, 200]);
    const fourth = await from('203.0.113.7');
    expect([fourth.status, fourth.body]).toEqual([429, tooMany('/auth/login', 3, Number(fourth.headers['retry-after']), '203.0.113.7')]);
    expect((await from('203.0.113.8')).status).toBe(200);
  });

  it('POST /provisioning has its own limit', async () => {
    const redeem = () => call(limited.url, 'POST', '/provisioning', { json: { token: 'not-a-token' } });
    const answers = [await redeem(), await redeem(), await redeem()];
    expect(answers.map((answer) => answer.status)).toEqual([403, 403, 429]);
    expect(answers[2]!.body).toEqual(tooMany('/provisioning', 2, Number(answers[2]!.headers['retry-after'])));
  });
});
