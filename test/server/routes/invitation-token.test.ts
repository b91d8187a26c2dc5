import { describe, expect, it } from 'vitest';
import { newInvitationToken } from '../../../src/server/routes/auth.js';

describe('invitation tokens', () => {
  it('are 256 random bits in base64url that never begin with "-" (a CLI would read that as an option)', () => {
    const tokens = Array.from({ length: 3000 }, () => newInvitationToken());
    expect(tokens.filter((token) => !/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/.test(token))).toEqual([]);
    expect(new Set(tokens).size).toBe(tokens.length);
  });
});
