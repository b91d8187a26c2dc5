import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/client/api.js';
import { cli, freshHome, loggedIn, outcome, runOnTerminal } from '../../helpers/cli.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

// `scanhub login`, `whoami`, `logout`, and where the CLI takes its URL, token and customer from.

let w: Foundation;
beforeAll(async () => {
  w = await startFoundation();
});
afterAll(() => w.close());

const iso = (ms: number) => new Date(ms).toISOString();

/** GET /me with a token (checks a token works). */
async function call(token: string): Promise<{ email: string }> {
  return new ApiClient(w.url, token).get<{ email: string }>(`/${CUSTOMER}/me`);
}

describe('scanhub login / whoami / logout', () => {
  it('login --invitation on a terminal checks the new password here and asks for it twice', async () => {
    const user = await w.t.admin.post<{ id: string; email: string }>(`/${CUSTOMER}/users`, { first_name: 'New', last_name: 'Comer', role: 'USER_ROLE', email: `newcomer-${Date.now()}@example.com` });
    const { invitation_token } = await w.t.admin.post<{ invitation_token: string }>(`/${CUSTOMER}/users/${user.id}/invitation`);
    const home = freshHome();
    const terminal = runOnTerminal(['login', '--url', w.url, '--invitation', invitation_token], { HOME: home.HOME, XDG_CONFIG_HOME: home.XDG_CONFIG_HOME });
    await terminal.shows(/New password \(at least 12 characters\)/);
    terminal.type('short\r');
    // Each answer is typed once the next prompt shows.
    await terminal.shows(/The password has 5 characters; it needs at least 12; try again\.[\s\S]*New password \(at least 12 characters\)/);
    terminal.type('long-enough-password\r');
    await terminal.shows(/The new password again/);
    terminal.type('long-enough-passwort\r');
    await terminal.shows(/The two passwords differ; try again\.[\s\S]*New password \(at least 12 characters\)/);
    terminal.type('long-enough-password\r');
    await terminal.shows(/differ; try again\.[\s\S]*✔ New password[\s\S]*The new password again:/);
    terminal.type('long-enough-password\r');
    expect(await terminal.exited).toBe(0);
    expect(terminal.output()).toContain(`Logged in to ${w.url} as ${user.email}`);
  });

  it('login --password-stdin saves a 0600 profile under XDG_CONFIG_HOME and says so on stderr', async () => {
    const env = freshHome();
    const result = await cli(env, ['login', '--url', `${w.url}/`, '--email', ADMIN_EMAIL, '--password-stdin'], `${ADMIN_PASSWORD}\n`);
    expect(outcome(result)).toEqual({
      code: 0,
      stdout: '',
      stderr: `Logged in to ${w.url} as ${ADMIN_EMAIL} (customer ${CUSTOMER}); profile saved to ${env.profile}.\n`,
    });
    expect(statSync(env.profile).mode & 0o777).toBe(0o600);
    expect(statSync(join(env.XDG_CONFIG_HOME, 'scanhub')).mode & 0o777).toBe(0o700);
    const profile = JSON.parse(readFileSync(env.profile, 'utf8')) as Record<string, unknown>;
    expect(profile).toEqual({ url: w.url, token: expect.any(String), customer: CUSTOMER, email: ADMIN_EMAIL, expires_at: expect.any(Number) });
    const me = await call(profile.token as string);
    expect(me.email).toBe(ADMIN_EMAIL);
  });

  it('login over an older profile with loose permissions leaves a 0600 file', async () => {
    const env = freshHome();
    mkdirSync(join(env.XDG_CONFIG_HOME, 'scanhub'), { recursive: true });
    writeFileSync(env.profile, '{"url":"http://old.example","token":"old","customer":"old"}', { mode: 0o644 });
    const result = await cli(env, ['login', '--url', w.url, '--email', ADMIN_EMAIL, '--password-stdin'], `${ADMIN_PASSWORD}\n`);
    expect(result.code).toBe(0);
    expect(statSync(env.profile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(env.profile, 'utf8'))).toMatchObject({ url: w.url, customer: CUSTOMER });
    expect(readdirSync(join(env.XDG_CONFIG_HOME, 'scanhub'))).toEqual(['profile.json']);
  });

  it('login with a wrong password: exit 4, one sentence, no profile', async () => {
    const env = freshHome();
    const result = await cli(env, ['login', '--url', w.url, '--email', ADMIN_EMAIL, '--password-stdin'], 'wrong-password\n');
    expect(outcome(result)).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: not authenticated: The e-mail address or password is wrong\n',
    });
    expect(() => statSync(env.profile)).toThrow();
  });

  it('login without --email when not interactive: exit 2 naming the flag', async () => {
    const result = await cli(freshHome(), ['login', '--url', w.url, '--password-stdin'], 'x\n');
    expect(outcome(result)).toEqual({ code: 2, stdout: '', stderr: 'scanhub: --email required when not running interactively\n' });
  });

  it('whoami prints field<TAB>value lines when piped, and --json the API object', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const token = (JSON.parse(readFileSync(env.profile, 'utf8')) as { token: string }).token;
    const exp = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;
    expect(outcome(await cli(env, ['whoami']))).toEqual({
      code: 0,
      stdout: `email\t${ADMIN_EMAIL}\nid\t${w.admin.id}\ncustomer\t${CUSTOMER}\nroles\tADMIN_ROLE\nurl\t${w.url}\ntoken expires\t${iso(exp * 1000)}\n`,
      stderr: '',
    });
    const json = await cli(env, ['whoami', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await w.t.admin.get(`/${CUSTOMER}/me`));
  });

  it('logout removes the profile; afterwards a command says to log in (exit 4)', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(outcome(await cli(env, ['logout']))).toEqual({ code: 0, stdout: '', stderr: `Logged out: removed ${env.profile}.\n` });
    expect(() => statSync(env.profile)).toThrow();
    expect(outcome(await cli(env, ['whoami']))).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: no deployment configured: run `scanhub login --url URL` or set SCANHUB_URL\n',
    });
    expect(outcome(await cli(env, ['logout']))).toEqual({ code: 0, stdout: '', stderr: 'Not logged in: there was no saved profile.\n' });
  });

  it('a URL but no token: exit 4 telling to run scanhub login', async () => {
    expect(outcome(await cli({ ...freshHome(), SCANHUB_URL: w.url }, ['users', 'list']))).toEqual({
      code: 4,
      stdout: '',
      stderr: `scanhub: not logged in to ${w.url}: run \`scanhub login\` or set SCANHUB_TOKEN\n`,
    });
  });

  it('a URL that is not http(s): exit 2 in a sentence, before any request', async () => {
    expect(outcome(await cli(freshHome(), ['users', 'list', '--url', 'notaurl', '--token', 'x']))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: "notaurl" is not a deployment URL: use one such as http://127.0.0.1:8080 (--url, SCANHUB_URL or the profile)\n',
    });
    expect(outcome(await cli({ ...freshHome(), SCANHUB_URL: 'ftp://files.example.com' }, ['login', '--email', 'a@b.c', '--password-stdin'], 'x\n'))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: "ftp://files.example.com" is not an http or https URL (--url, SCANHUB_URL or the profile)\n',
    });
  });

  it('an invalid token: exit 4 with the next step', async () => {
    expect(outcome(await cli({ ...freshHome(), SCANHUB_URL: w.url, SCANHUB_TOKEN: 'garbage', SCANHUB_CUSTOMER: CUSTOMER }, ['whoami']))).toEqual({
      code: 4,
      stdout: '',
      stderr:
        'scanhub: not authenticated: The token in the Authorization header is invalid or expired: log in again for a new one; run `scanhub login`\n',
    });
  });
});

describe('configuration precedence: flag > env > profile', () => {
  it('token: --token beats SCANHUB_TOKEN beats the profile', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD); // profile: the administrator
    const whoami = async (extra: Record<string, string>, args: string[] = []) => (await cli({ ...env, ...extra }, [...args, 'whoami'])).stdout.split('\n')[0];
    expect(await whoami({})).toBe(`email\t${ADMIN_EMAIL}`);
    expect(await whoami({ SCANHUB_TOKEN: w.user.token })).toBe(`email\t${w.user.email}`);
    expect(await whoami({ SCANHUB_TOKEN: w.user.token }, ['--token', w.admin.token])).toBe(`email\t${ADMIN_EMAIL}`);
  });

  it('url: --url beats SCANHUB_URL beats the profile', async () => {
    const env = { ...(await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD)), SCANHUB_TOKEN: w.admin.token };
    const unreachable = 'http://127.0.0.1:9';
    expect(outcome(await cli({ ...env, SCANHUB_URL: unreachable }, ['whoami']))).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: cannot reach ${unreachable}: ECONNREFUSED: is the URL right and is \`scanhub serve\` running there?\n`,
    });
    expect((await cli({ ...env, SCANHUB_URL: unreachable }, ['--url', w.url, 'whoami'])).code).toBe(0);
  });

  it('customer: --customer beats SCANHUB_CUSTOMER beats the token and the profile', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const foreign = await cli({ ...env, SCANHUB_CUSTOMER: OTHER_CUSTOMER }, ['features', 'list']);
    expect(outcome(foreign)).toEqual({
      code: 4,
      stdout: '',
      stderr: `scanhub: not allowed: Your account belongs to customer "${CUSTOMER}" and has no access to customer "${OTHER_CUSTOMER}"\n`,
    });
    expect((await cli({ ...env, SCANHUB_CUSTOMER: OTHER_CUSTOMER }, ['--customer', CUSTOMER, 'features', 'list'])).code).toBe(0);
  });

  it('SCANHUB_URL and SCANHUB_TOKEN alone suffice: the customer comes from the token', async () => {
    const result = await cli({ ...freshHome(), SCANHUB_URL: w.url, SCANHUB_TOKEN: w.otherAdmin.token }, ['whoami']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`customer\t${OTHER_CUSTOMER}\n`);
  });

  it("the profile's token is never sent to another deployment named by SCANHUB_URL or --url", async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const seen: IncomingHttpHeaders[] = [];
    const elsewhere = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"title":"Unauthorized","details":"who are you"}');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const other = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}`;
    try {
      for (const result of [await cli({ ...env, SCANHUB_URL: other }, ['whoami']), await cli(env, ['--url', other, 'whoami'])]) {
        expect(outcome(result)).toEqual({ code: 4, stdout: '', stderr: `scanhub: not logged in to ${other}: run \`scanhub login\` or set SCANHUB_TOKEN\n` });
      }
      expect(seen).toEqual([]);
    } finally {
      elsewhere.close();
    }
  });
});
