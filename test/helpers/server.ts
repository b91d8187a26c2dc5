import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { ScryptCost } from '../../src/auth/passwords.js';
import { ApiClient } from '../../src/client/api.js';
import type { ServeOptions } from '../../src/serve/options.js';
import { startServer, type RunningServer } from '../../src/serve/start.js';
import type { StoreLocator } from '../../src/store/ports/index.js';
import { testDatabase, type TestDatabase } from './test-store.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-123';
export const CUSTOMER = 'acme';

/**
 * The scrypt cost of passwords on the in-process test servers: the suite sets and checks
 * thousands of them, and DEFAULT_SCRYPT_COST takes about half a second each. `serve` processes and
 * the tests of the default (test/auth/passwords.test.ts) keep the default.
 */
export const TEST_PASSWORD_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

export interface TestServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  /** A client logged in as the bootstrap administrator of CUSTOMER. */
  admin: ApiClient;
  adminToken: string;
  /** A client without a token. */
  anonymous: ApiClient;
  /** Logs in and returns the IdToken. */
  login(email: string, password: string): Promise<string>;
  /** Creates a user of CUSTOMER with the role, sets its password through an invitation, returns its client. */
  createUser(role: 'USER_ROLE' | 'ADMIN_ROLE', email?: string): Promise<{ id: string; token: string; client: ApiClient }>;
  /** `--data-dir DIR` plus `--database URL` on PostgreSQL: for `scanhub operator ...` on this server's store. */
  operatorArgs: string[];
  /** The environment such a process needs (SCANHUB_MASTER_KEY on PostgreSQL, else nothing). */
  operatorEnv: Record<string, string>;
  close(): Promise<void>;
}

let counter = 0;

/** What startTestServer starts `serve` with over a data directory and store: also for starting it again on them (a restart). */
export function testServeOptions(dataDir: string, locator: StoreLocator | undefined, options: Partial<ServeOptions> = {}): ServeOptions {
  return {
    dataDir,
    ...(locator ? { locator } : {}),
    host: '127.0.0.1',
    port: 0,
    mqttPort: 0,
    customerId: CUSTOMER,
    adminEmail: ADMIN_EMAIL,
    adminPassword: ADMIN_PASSWORD,
    mqttPublicHost: 'localhost',
    // Tests log in and redeem tokens far faster than people do; rate-limit tests pass their own.
    rateLimits: { auth: 10_000, provisioning: 10_000 },
    passwordCost: TEST_PASSWORD_COST,
    ...options,
  };
}

/**
 * Another instance of `a`'s deployment: the same PostgreSQL database and public URL (the audience
 * of its IdTokens), listeners and a store of its own (vitest.config.ts runs such files on PostgreSQL).
 */
export function secondInstance(a: TestServer, options: Partial<ServeOptions> = {}): Promise<TestServer> {
  return startTestServer({ ...options, locator: a.server.ctx.store.locator, publicUrl: a.server.publicUrl.url });
}

/**
 * A real `serve` (HTTP on port 0, MQTT on port 0) over a fresh data directory and, when the tests
 * run on PostgreSQL (TEST_STORE), a fresh PostgreSQL database (or `database`, a testDatabase()).
 */
export async function startTestServer(options: Partial<ServeOptions> = {}, database?: TestDatabase): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-test-'));
  database ??= await testDatabase();
  const locator = database.locator(dataDir);
  const server = await startServer(testServeOptions(dataDir, locator, options));
  const anonymous = new ApiClient(server.url);
  const login = async (email: string, password: string) =>
    (await anonymous.post<{ id_token: string }>('/auth/login', { email, password })).id_token;
  const adminToken = await login(ADMIN_EMAIL, ADMIN_PASSWORD);
  const admin = new ApiClient(server.url, adminToken);
  return {
    server,
    url: server.url,
    dataDir,
    admin,
    adminToken,
    anonymous,
    login,
    operatorArgs: ['--data-dir', dataDir, ...database.args],
    operatorEnv: database.env,
    async createUser(role, email = `user${++counter}@example.com`) {
      const user = await admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'Test', last_name: 'User', role, email });
      const { invitation_token } = await admin.post<{ invitation_token: string }>(`/${CUSTOMER}/users/${user.id}/invitation`);
      const password = 'user-password-123';
      const { id_token } = await anonymous.post<{ id_token: string }>('/auth/accept-invitation', { invitation_token, password });
      return { id: user.id, token: id_token, client: new ApiClient(server.url, id_token) };
    },
    async close() {
      await server.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A logger option for startTestServer that keeps each JSON log line, parsed, in `lines`. */
export function collectedLogs(level: string): { lines: { msg: string; [field: string]: unknown }[]; logger: ServeOptions['logger'] } {
  const lines: { msg: string; [field: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, logger: { level, stream } };
}
