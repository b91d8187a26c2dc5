import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, importJWK, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ID_TOKEN_LIFETIME_SECONDS, IdTokens } from '../src/auth/idtoken.js';
import { FileSecrets } from '../src/store/sqlite/secrets.js';
import { BAD_TOKEN, scenarioTable, type World } from './helpers/scenarios.js';
import { ADMIN_EMAIL, CUSTOMER, startTestServer } from './helpers/server.js';

const CLAIMS = { sub: 'user-1', email: 'a@example.com', customer_id: 'acme', roles: ['ADMIN_ROLE'], session_version: 0 };
const AUDIENCE = 'https://scanhub.example';
const T0 = Date.UTC(2026, 0, 1, 8, 0, 0);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function tokensAt(clock: () => number, dataDir = mkdtempSync(join(tmpdir(), 'scanhub-idtoken-'))): Promise<IdTokens> {
  dirs.push(dataDir);
  return IdTokens.load(new FileSecrets(dataDir), { audience: () => AUDIENCE, clock });
}

describe('IdTokens.verify', () => {
  it('accepts a token until its expiry second, also once it was verified before (remembered)', async () => {
    let now = T0;
    const tokens = await tokensAt(() => now);
    const token = await tokens.sign(CLAIMS);
    expect(await tokens.verify(token)).toEqual(CLAIMS);
    now = T0 + ID_TOKEN_LIFETIME_SECONDS * 1000 - 1;
    expect(await tokens.verify(token)).toEqual(CLAIMS);
    now = T0 + ID_TOKEN_LIFETIME_SECONDS * 1000;
    await expect(tokens.verify(token)).rejects.toThrow('"exp" claim timestamp check failed');
    await expect(tokens.verify(token)).rejects.toThrow('"exp" claim timestamp check failed');
  });

  it('refuses a token another deployment signed, and an altered one', async () => {
    const ours = await tokensAt(() => T0);
    const theirs = await tokensAt(() => T0);
    await expect(ours.verify(await theirs.sign(CLAIMS))).rejects.toThrow(/^unknown kid "[0-9a-f-]{36}"$/);
    const token = await ours.sign(CLAIMS);
    expect(await ours.verify(token)).toEqual(CLAIMS);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...CLAIMS, roles: ['ADMIN_ROLE', 'X'], iss: 'scanhub', aud: AUDIENCE, exp: T0 / 1000 + 60 })).toString('base64url')}.${signature}`;
    await expect(ours.verify(forged)).rejects.toThrow('signature verification failed');
  });
});

/** A server and a signer holding its real IdToken key (from the server's store). */
interface SigningWorld extends World {
  adminId: string;
  /** A token signed with the deployment's key, with the admin's claims minus the ones named. */
  sign(without: ('exp' | 'iat' | 'sub')[]): Promise<string>;
}

async function signingWorld(): Promise<SigningWorld> {
  const t = await startTestServer();
  // The deployment's key as the store keeps it (SQLite: keys/idtoken.jwk; PostgreSQL: encrypted).
  const jwk = (JSON.parse((await t.server.ctx.store.secrets.get('keys/idtoken.jwk'))!) as { keys: JWK[] }).keys[0]!;
  const key = await importJWK(jwk, 'ES256');
  const adminId = (await t.admin.get<{ id: string }>(`/${CUSTOMER}/me`)).id;
  return {
    url: t.url,
    adminId,
    close: () => t.close(),
    async sign(without) {
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({ email: ADMIN_EMAIL, customer_id: CUSTOMER, roles: ['ADMIN_ROLE'] })
        .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'JWT' })
        .setIssuer('scanhub')
        .setAudience(t.server.publicUrl.url);
      if (!without.includes('sub')) jwt.setSubject(adminId);
      if (!without.includes('iat')) jwt.setIssuedAt(now);
      if (!without.includes('exp')) jwt.setExpirationTime(now + 600);
      return jwt.sign(key);
    },
  };
}

scenarioTable<SigningWorld>('an IdToken needs exp, iat and sub (signed with the deployment key)', signingWorld, [
  { name: 'all claims: 200', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign([])}`, status: 200, fields: (w) => ({ id: w.adminId }) },
  { name: 'no exp: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign(['exp'])}`, status: 401, body: BAD_TOKEN },
  { name: 'no iat: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign(['iat'])}`, status: 401, body: BAD_TOKEN },
  { name: 'no sub: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign(['sub'])}`, status: 401, body: BAD_TOKEN },
  { name: 'no exp, iat or sub: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign(['exp', 'iat', 'sub'])}`, status: 401, body: BAD_TOKEN },
]);
