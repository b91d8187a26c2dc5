import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { OTHER_CUSTOMER, USER_PASSWORD, startFoundation, type Foundation } from '../../helpers/world.js';

interface User {
  id: string;
  email: string;
  first_name?: string;
  last_name?: string;
  roles: string[];
  created: number;
}

let w: Foundation;
let homes: string[] = [];

beforeAll(async () => {
  w = await startFoundation();
});
afterAll(() => w.close());
afterEach(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  homes = [];
});

/** A fresh home and config directory: nothing saved yet. */
function freshHome(): { HOME: string; XDG_CONFIG_HOME: string; profile: string } {
  const home = mkdtempSync(join(tmpdir(), 'scanhub-cli-'));
  homes.push(home);
  return { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), profile: join(home, 'config', 'scanhub', 'profile.json') };
}

type Env = Record<string, string>;
const cli = (env: Env, args: string[], input?: string) => runCli(args, { env, input });
const outcome = (result: CliResult) => ({ code: result.code, stdout: result.stdout, stderr: result.stderr });

/** A home where the administrator is logged in to the test server. */
async function loggedIn(email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<Env & { profile: string }> {
  const env = freshHome();
  const result = await cli(env, ['login', '--url', w.url, '--email', email, '--password-stdin'], `${password}\n`);
  expect(outcome(result)).toMatchObject({ code: 0 });
  return env;
}

const iso = (ms: number) => new Date(ms).toISOString();
const userRow = (u: User) => [u.id, u.email, [u.first_name, u.last_name].filter(Boolean).join(' '), u.roles.join(','), iso(u.created)].join('\t');
const allUsers = async () => (await w.t.admin.get<{ items: User[] }>(`/${CUSTOMER}/users`)).items;

describe('scanhub login / whoami / logout', () => {
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
    const env = await loggedIn();
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
    const env = await loggedIn();
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

/** GET /me with a token (checks a token works). */
async function call(token: string): Promise<{ email: string }> {
  const { ApiClient } = await import('../../../src/client/api.js');
  return new ApiClient(w.url, token).get<{ email: string }>(`/${CUSTOMER}/me`);
}

describe('scanhub users', () => {
  it('users list prints tab-separated rows without a header when piped', async () => {
    const env = await loggedIn();
    const result = await cli(env, ['users', 'list']);
    const users = await allUsers();
    expect(users.length).toBeGreaterThanOrEqual(2);
    expect(outcome(result)).toEqual({ code: 0, stdout: users.map(userRow).join('\n') + '\n', stderr: '' });
  });

  it('users list --json prints the API items as one JSON array, following every page', async () => {
    const env = await loggedIn();
    const result = await cli(env, ['users', 'list', '--json']);
    expect(outcome(result)).toEqual({ code: 0, stdout: JSON.stringify(await allUsers(), null, 2) + '\n', stderr: '' });
  });

  it('users create, get, invite; the invitee logs in with login --invitation; users delete --yes', async () => {
    const admin = await loggedIn();
    const email = `cli-${Date.now()}@example.com`;
    const created = await cli(admin, ['users', 'create', '--email', email, '--first-name', 'Cli', '--last-name', 'User', '--json']);
    expect(created.code).toBe(0);
    const user = JSON.parse(created.stdout) as User & { permissions: string[] };
    expect(user).toMatchObject({ email, first_name: 'Cli', last_name: 'User', roles: ['USER_ROLE'] });
    expect(created.stderr).toBe(`Created user ${email} (${user.id}); invite them with \`scanhub users invite ${user.id}\`.\n`);

    expect(outcome(await cli(admin, ['users', 'get', user.id]))).toEqual({
      code: 0,
      stdout: `id\t${user.id}\nemail\t${email}\nname\tCli User\nroles\tUSER_ROLE\ncreated\t${iso(user.created)}\npermissions\t${user.permissions.join(',')}\n`,
      stderr: '',
    });

    const invite = await cli(admin, ['users', 'invite', user.id]);
    expect(invite.code).toBe(0);
    const [tokenLine, expiresLine] = invite.stdout.split('\n');
    const invitationToken = tokenLine!.split('\t')[1]!;
    expect(tokenLine).toMatch(/^invitation_token\t[A-Za-z0-9_-]{43}$/);
    expect(expiresLine).toMatch(/^expires_at\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(invite.stderr).toBe(`Invitation created; the user runs: scanhub login --url ${w.url} --invitation ${invitationToken}\n`);

    const invitee = freshHome();
    const accepted = await cli(invitee, ['login', '--url', w.url, '--invitation', invitationToken, '--password-stdin'], 'my-own-password-1\n');
    expect(outcome(accepted)).toEqual({
      code: 0,
      stdout: '',
      stderr: `Logged in to ${w.url} as ${email} (customer ${CUSTOMER}); profile saved to ${invitee.profile}.\n`,
    });
    expect((await cli(invitee, ['whoami'])).stdout).toContain(`email\t${email}\n`);
    // The invitation was single use.
    const again = await cli(freshHome(), ['login', '--url', w.url, '--invitation', invitationToken, '--password-stdin'], 'my-own-password-2\n');
    expect(outcome(again)).toEqual({
      code: 4,
      stdout: '',
      stderr:
        'scanhub: not authenticated: The invitation token is unknown, already used or expired: ask an administrator for a new invitation\n',
    });

    expect(outcome(await cli(admin, ['users', 'delete', user.id]))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --yes required when not running interactively\n',
    });
    expect(outcome(await cli(admin, ['users', 'delete', user.id, '--yes']))).toEqual({ code: 0, stdout: '', stderr: `Deleted user ${user.id}.\n` });
    expect(outcome(await cli(admin, ['users', 'get', user.id]))).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: not found: User "${user.id}" does not exist\n`,
    });
  });

  it('a USER_ROLE user listing users: exit 4 with the API sentence', async () => {
    const env = await loggedIn(w.user.email, USER_PASSWORD);
    expect(outcome(await cli(env, ['users', 'list']))).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: not allowed: Your role USER_ROLE lacks the permission "user.read" this call needs; ask an administrator\n',
    });
  });

  it('an e-mail that exists: exit 1 with the API sentence', async () => {
    const env = await loggedIn();
    const result = await cli(env, ['users', 'create', '--email', ADMIN_EMAIL, '--first-name', 'A', '--last-name', 'B']);
    expect(outcome(result)).toEqual({ code: 1, stdout: '', stderr: `scanhub: conflict: A user with the e-mail address "${ADMIN_EMAIL}" already exists\n` });
  });

  it.each([
    [['users', 'create', '--first-name', 'A', '--last-name', 'B'], "error: required option '--email <email>' not specified\n"],
    [['users', 'create', '--email', 'x@example.com', '--first-name', 'A', '--last-name', 'B', '--role', 'ROOT'], "error: option '--role <role>' argument 'ROOT' is invalid. Allowed choices are USER_ROLE, ADMIN_ROLE.\n"],
    [['users', 'get'], "error: missing required argument 'user-id'\n"],
    [['users', 'frobnicate'], "error: unknown command 'frobnicate'\n"],
  ])('usage error %j: exit 2 before any request', async (args, message) => {
    const env = { ...freshHome(), SCANHUB_URL: w.url, SCANHUB_TOKEN: w.admin.token };
    expect(outcome(await cli(env, args))).toEqual({ code: 2, stdout: '', stderr: `${message}(run with --help for usage)\n` });
  });
});

describe('scanhub features list', () => {
  it('prints the flags as rows when piped, and the API items with --json', async () => {
    await w.t.server.ctx.store.features.set(CUSTOMER, 'beta-ui', true, { level: 2 }, Date.now());
    await w.t.server.ctx.store.features.set(CUSTOMER, 'alpha', false, undefined, Date.now());
    const env = await loggedIn();
    expect(outcome(await cli(env, ['features', 'list']))).toEqual({ code: 0, stdout: 'alpha\tno\t\nbeta-ui\tyes\t{"level":2}\n', stderr: '' });
    const json = await cli(env, ['features', 'list', '--json']);
    expect(outcome(json)).toEqual({
      code: 0,
      stdout: JSON.stringify([{ feature: 'alpha', enabled: false }, { feature: 'beta-ui', enabled: true, additional_properties: { level: 2 } }], null, 2) + '\n',
      stderr: '',
    });
  });
});

describe('configuration precedence: flag > env > profile', () => {
  it('token: --token beats SCANHUB_TOKEN beats the profile', async () => {
    const env = await loggedIn(); // profile: the administrator
    const whoami = async (extra: Env, args: string[] = []) => (await cli({ ...env, ...extra }, [...args, 'whoami'])).stdout.split('\n')[0];
    expect(await whoami({})).toBe(`email\t${ADMIN_EMAIL}`);
    expect(await whoami({ SCANHUB_TOKEN: w.user.token })).toBe(`email\t${w.user.email}`);
    expect(await whoami({ SCANHUB_TOKEN: w.user.token }, ['--token', w.admin.token])).toBe(`email\t${ADMIN_EMAIL}`);
  });

  it('url: --url beats SCANHUB_URL beats the profile', async () => {
    const env = { ...(await loggedIn()), SCANHUB_TOKEN: w.admin.token };
    const unreachable = 'http://127.0.0.1:9';
    expect(outcome(await cli({ ...env, SCANHUB_URL: unreachable }, ['whoami']))).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: cannot reach ${unreachable}: ECONNREFUSED: is the URL right and is \`scanhub serve\` running there?\n`,
    });
    expect((await cli({ ...env, SCANHUB_URL: unreachable }, ['--url', w.url, 'whoami'])).code).toBe(0);
  });

  it('customer: --customer beats SCANHUB_CUSTOMER beats the token and the profile', async () => {
    const env = await loggedIn();
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
    const env = await loggedIn();
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
