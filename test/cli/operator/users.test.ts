import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcome, runCli } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

// `scanhub operator users reset-password`: the way back in for a lost administrator (docs/users.md "A lost password").

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const operator = (args: string[], input?: string) => runCli(['operator', ...args, ...t.operatorArgs], { input, env: t.operatorEnv });
const logIn = (password: string) => call(t.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password } });

describe('scanhub operator users reset-password (while serve runs)', () => {
  it('generates a password, prints it once, ends the old sessions and audits it', async () => {
    const before = await logIn(ADMIN_PASSWORD);
    const oldToken = (before.body as { id_token: string }).id_token;
    const result = await operator(['users', 'reset-password', ADMIN_EMAIL]);
    const password = result.stdout.trimEnd();
    expect(outcome(result)).toEqual({
      code: 0,
      stdout: `${password}\n`,
      stderr: `Set a new password for ${ADMIN_EMAIL} (customer ${CUSTOMER}), printed above once: store it now; their IdTokens no longer work. Log in with \`scanhub login --email ${ADMIN_EMAIL}\`.\n`,
    });
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect((await logIn(ADMIN_PASSWORD)).status).toBe(401);
    const after = await logIn(password);
    expect(after.status).toBe(200);
    expect((await call(t.url, 'GET', `/${CUSTOMER}/me`, { token: oldToken })).status).toBe(401);
    const audit = await call(t.url, 'GET', `/${CUSTOMER}/audit-log?action=user.password_reset`, { token: (after.body as { id_token: string }).id_token });
    expect((audit.body as { items: unknown[] }).items).toEqual([
      expect.objectContaining({ action: 'user.password_reset', actor: expect.objectContaining({ type: 'operator' }), details: { email: ADMIN_EMAIL } }),
    ]);
  });

  it('--password-stdin sets the given password and prints nothing on stdout', async () => {
    const result = await operator(['users', 'reset-password', ADMIN_EMAIL.toUpperCase(), '--password-stdin'], 'chosen-by-the-operator\n');
    expect([result.code, result.stdout]).toEqual([0, '']);
    expect((await logIn('chosen-by-the-operator')).status).toBe(200);
  });

  it.each([
    [['users', 'reset-password', 'nobody@example.com'], '', 1, 'scanhub: no user of this deployment has the e-mail address "nobody@example.com"\n'],
    [['users', 'reset-password', ADMIN_EMAIL, '--password-stdin'], 'short\n', 2, 'scanhub: the password on standard input has 5 characters; it needs at least 12\n'],
  ])('%j: refused with a sentence', async (args, input, code, stderr) => {
    expect(outcome(await operator(args, input))).toEqual({ code, stdout: '', stderr });
  });
});
