import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ID_TOKEN_LIFETIME_SECONDS, IdTokens } from '../src/auth/idtoken.js';

const CLAIMS = { sub: 'user-1', email: 'a@example.com', customer_id: 'acme', roles: ['ADMIN_ROLE'] };
const T0 = Date.UTC(2026, 0, 1, 8, 0, 0);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function tokensAt(clock: () => number, dataDir = mkdtempSync(join(tmpdir(), 'scanhub-idtoken-'))): Promise<IdTokens> {
  dirs.push(dataDir);
  return IdTokens.load(dataDir, clock);
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
    await expect(ours.verify(await theirs.sign(CLAIMS))).rejects.toThrow('signature verification failed');
    const token = await ours.sign(CLAIMS);
    expect(await ours.verify(token)).toEqual(CLAIMS);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...CLAIMS, roles: ['ADMIN_ROLE', 'X'], iss: 'scanhub', exp: T0 / 1000 + 60 })).toString('base64url')}.${signature}`;
    await expect(ours.verify(forged)).rejects.toThrow('signature verification failed');
  });
});
