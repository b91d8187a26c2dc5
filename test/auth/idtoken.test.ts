import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ID_TOKEN_LIFETIME_SECONDS, IdTokens, SUPERSEDED_KEY_KEEP_MS } from '../../src/auth/idtoken.js';
import { SIGNING_KEY_SECRET, newSigningKey, rotateSigningKeys, rotateStoredSigningKeys } from '../../src/auth/signing-keys.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import { FileSecrets } from '../../src/store/sqlite/secrets.js';
import { BAD_TOKEN, scenarioTable, unauthorizedBody, type World } from '../helpers/scenarios.js';
import { ADMIN_EMAIL, CUSTOMER, startTestServer } from '../helpers/server.js';

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

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

describe('signing keys', () => {
  it('reads the key a deployment stored before rotation existed (one JWK, not a set)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-idtoken-'));
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    mkdirSync(join(dataDir, 'keys'));
    writeFileSync(join(dataDir, SIGNING_KEY_SECRET), JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'legacy-kid', alg: 'ES256' }));
    const tokens = await tokensAt(() => T0, dataDir);
    const token = await tokens.sign(CLAIMS);
    expect(kidOf(token)).toBe('legacy-kid');
    expect(await tokens.verify(token)).toEqual(CLAIMS);
    expect((await tokens.jwks()).keys.map((key) => [key.kid, key.d])).toEqual([['legacy-kid', undefined]]);
  });

  it('after a rotation, signs with the new key, verifies the old one\'s tokens and lists both; another instance learns the new key from its kid', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-idtoken-'));
    dirs.push(dataDir);
    const store = await openStore(sqliteLocator(dataDir), 'server');
    try {
      const options = { audience: () => AUDIENCE, rereadMs: 0 };
      const [a, b] = [await IdTokens.load(store.secrets, options), await IdTokens.load(store.secrets, options)];
      const old = await a.sign(CLAIMS);
      const rotation = await rotateStoredSigningKeys(store.secrets, Date.now(), SUPERSEDED_KEY_KEEP_MS);
      expect(rotation.keys.map((key) => key.jwk.kid)).toEqual([kidOf(old), rotation.added.jwk.kid]);
      const fresh = await a.sign(CLAIMS);
      expect(kidOf(fresh)).toBe(rotation.added.jwk.kid);
      expect(await a.verify(old)).toEqual(CLAIMS);
      // B never signs nor serves the JWKS: only the unknown kid makes it read the keys.
      expect(await b.verify(fresh)).toEqual(CLAIMS);
      expect((await a.jwks()).keys.map((key) => key.kid)).toEqual([kidOf(old), kidOf(fresh)]);
    } finally {
      await store.close();
    }
  });

  it('a rotation keeps each older key until its successor is older than the token lifetime and a margin', () => {
    const first = newSigningKey(T0);
    const second = rotateSigningKeys([first], T0 + 1000, SUPERSEDED_KEY_KEEP_MS);
    const kids = (keys: { jwk: { kid: string } }[]) => keys.map((key) => key.jwk.kid);
    expect([kids(second.keys), second.dropped]).toEqual([[first.jwk.kid, second.added.jwk.kid], []]);
    // Soon after: the first key may still have valid tokens.
    const third = rotateSigningKeys(second.keys, T0 + 1000 + SUPERSEDED_KEY_KEEP_MS - 1, SUPERSEDED_KEY_KEEP_MS);
    expect([kids(third.keys), third.dropped]).toEqual([[first.jwk.kid, second.added.jwk.kid, third.added.jwk.kid], []]);
    const fourth = rotateSigningKeys(third.keys, T0 + 1000 + SUPERSEDED_KEY_KEEP_MS, SUPERSEDED_KEY_KEEP_MS);
    expect([kids(fourth.keys), fourth.dropped]).toEqual([[second.added.jwk.kid, third.added.jwk.kid, fourth.added.jwk.kid], [first.jwk.kid]]);
    expect(SUPERSEDED_KEY_KEEP_MS).toBe((ID_TOKEN_LIFETIME_SECONDS + 300) * 1000);
  });
});

/** A server and a signer holding its real IdToken key (from the server's store). */
interface SigningWorld extends World {
  adminId: string;
  /** A token signed with the deployment's key, with the admin's claims minus the ones named, and `aud`, `iat` or `session_version` as given. */
  sign(without: ('exp' | 'iat' | 'sub')[], claims?: { aud?: string | string[] | null; iat?: number; session_version?: number }): Promise<string>;
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
    async sign(without, claims = {}) {
      const now = claims.iat ?? Math.floor(Date.now() / 1000);
      const payload = { email: ADMIN_EMAIL, customer_id: CUSTOMER, roles: ['ADMIN_ROLE'], ...(claims.session_version !== undefined ? { session_version: claims.session_version } : {}) };
      const jwt = new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'JWT' }).setIssuer('scanhub');
      if (claims.aud !== null) jwt.setAudience(claims.aud ?? t.server.publicUrl.url);
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

const STALE_TOKEN = unauthorizedBody("The token was issued before its user's password or roles changed: log in again for a new one.");
const BEFORE_START = () => Math.floor(Date.now() / 1000) - 300;

scenarioTable<SigningWorld>("an IdToken's audience is the deployment's public URL; its session version the user's", signingWorld, [
  { name: 'aud another deployment: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign([], { aud: 'https://elsewhere.example' })}`, status: 401, body: BAD_TOKEN },
  {
    name: 'aud a list naming this deployment: 200',
    method: 'GET',
    path: `/${CUSTOMER}/me`,
    auth: async (w) => `Bearer ${await w.sign([], { aud: ['https://elsewhere.example', w.url] })}`,
    status: 200,
    fields: (w) => ({ id: w.adminId }),
  },
  { name: 'no aud, issued after the server started: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign([], { aud: null })}`, status: 401, body: BAD_TOKEN },
  {
    name: 'no aud and no session version, issued before the server started (by the version before): 200 until it expires',
    method: 'GET',
    path: `/${CUSTOMER}/me`,
    auth: async (w) => `Bearer ${await w.sign([], { aud: null, iat: BEFORE_START() })}`,
    status: 200,
    fields: (w) => ({ id: w.adminId }),
  },
  { name: 'session version 0, as the user: 200', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign([], { session_version: 0 })}`, status: 200 },
  { name: 'session version 1, not the user\'s: 401', method: 'GET', path: `/${CUSTOMER}/me`, auth: async (w) => `Bearer ${await w.sign([], { session_version: 1 })}`, status: 401, body: STALE_TOKEN },
]);
