import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, freshHome, loggedIn, outcome } from '../../helpers/cli.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { USER_PASSWORD, startFoundation, type Foundation } from '../../helpers/world.js';

interface User {
  id: string;
  email: string;
  first_name?: string;
  last_name?: string;
  roles: string[];
  created: number;
}

let w: Foundation;
beforeAll(async () => {
  w = await startFoundation();
});
afterAll(() => w.close());

const iso = (ms: number) => new Date(ms).toISOString();
const userRow = (u: User) => [u.id, u.email, [u.first_name, u.last_name].filter(Boolean).join(' '), u.roles.join(','), iso(u.created)].join('\t');
const allUsers = async () => (await w.t.admin.get<{ items: User[] }>(`/${CUSTOMER}/users`)).items;

describe('scanhub users', () => {
  it('users list prints tab-separated rows without a header when piped', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const result = await cli(env, ['users', 'list']);
    const users = await allUsers();
    expect(users.length).toBeGreaterThanOrEqual(2);
    expect(outcome(result)).toEqual({ code: 0, stdout: users.map(userRow).join('\n') + '\n', stderr: '' });
  });

  it('users list --json prints the API items as one JSON array, following every page', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const result = await cli(env, ['users', 'list', '--json']);
    expect(outcome(result)).toEqual({ code: 0, stdout: JSON.stringify(await allUsers(), null, 2) + '\n', stderr: '' });
  });

  it('users create, get, invite; the invitee logs in with login --invitation; users delete --yes', { timeout: 90_000 }, async () => {
    const admin = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const email = `cli-${Date.now()}@example.com`;
    const created = await cli(admin, ['users', 'create', '--email', email, '--first-name', 'Cli', '--last-name', 'User', '--json']);
    expect(created.code).toBe(0);
    const user = JSON.parse(created.stdout) as User & { permissions: string[] };
    expect(user).toMatchObject({ email, first_name: 'Cli', last_name: 'User', roles: ['USER_ROLE'] });
    expect(created.stderr).toBe(`Created user ${email}; invite them with \`scanhub users invite ${email}\`.\n`);

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
    expect(invite.stderr).toBe(`Invitation for ${email} created; the user runs: scanhub login --url ${w.url} --invitation ${invitationToken}\n`);

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
    expect(outcome(await cli(admin, ['users', 'delete', user.id, '--yes']))).toEqual({ code: 0, stdout: '', stderr: `Deleted user ${email}.\n` });
    expect(outcome(await cli(admin, ['users', 'get', user.id]))).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: not found: User "${user.id}" does not exist\n`,
    });
  });

  it('names users by e-mail: get, invite, update --role, reset-password, delete', { timeout: 120_000 }, async () => {
    const admin = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const email = `ada-${Date.now()}@example.com`;
    expect((await cli(admin, ['users', 'create', '--email', email, '--first-name', 'Ada', '--last-name', 'L'])).code).toBe(0);
    const got = await cli(admin, ['users', 'get', email.toUpperCase(), '--json']);
    const user = JSON.parse(got.stdout) as User;
    expect([got.code, user.email]).toEqual([0, email]);

    const invite = await cli(admin, ['users', 'invite', email]);
    const invitationToken = invite.stdout.split('\n')[0]!.split('\t')[1]!;
    expect([invite.code, invite.stderr]).toEqual([0, `Invitation for ${email} created; the user runs: scanhub login --url ${w.url} --invitation ${invitationToken}\n`]);
    expect((await cli(freshHome(), ['login', '--url', w.url, '--invitation', invitationToken, '--password-stdin'], 'first-password-1\n')).code).toBe(0);

    const updated = await cli(admin, ['users', 'update', email, '--role', 'ADMIN_ROLE', '--last-name', 'Lovelace', '--json']);
    expect([updated.code, updated.stderr]).toEqual([0, `Updated user ${email}.\n`]);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: user.id, last_name: 'Lovelace', roles: ['ADMIN_ROLE'] });
    expect(outcome(await cli(admin, ['users', 'update', email]))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: nothing to change: give --role, --first-name, --last-name or --language\n',
    });

    const reset = await cli(admin, ['users', 'reset-password', email]);
    const resetToken = reset.stdout.split('\n')[0]!.split('\t')[1]!;
    expect([reset.code, reset.stderr]).toEqual([0, `Password reset for ${email} created; the user runs: scanhub login --url ${w.url} --invitation ${resetToken}\n`]);
    const home = freshHome();
    expect((await cli(home, ['login', '--url', w.url, '--invitation', resetToken, '--password-stdin'], 'second-password-2\n')).code).toBe(0);
    expect((await cli(freshHome(), ['login', '--url', w.url, '--email', email, '--password-stdin'], 'second-password-2\n')).code).toBe(0);

    expect(outcome(await cli(admin, ['users', 'delete', email, '--yes']))).toEqual({ code: 0, stdout: '', stderr: `Deleted user ${email}.\n` });
    expect(outcome(await cli(admin, ['users', 'invite', email]))).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: no user has the e-mail address "${email}": see \`scanhub users list\`, or \`scanhub users create --email ${email}\`\n`,
    });
  });

  it('refuses what it can check itself before asking the server (exit 2)', async () => {
    const admin = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(outcome(await cli(admin, ['users', 'create', '--email', 'ada.example.com', '--first-name', 'A', '--last-name', 'B']))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --email: "ada.example.com" is not an e-mail address such as ada@example.com\n',
    });
    expect(outcome(await cli(freshHome(), ['login', '--url', w.url, '--invitation', 'whatever', '--password-stdin'], 'short\n'))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: the new password on standard input has 5 characters; it needs at least 12\n',
    });
  });

  it('a USER_ROLE user listing users: exit 4 with the API sentence', async () => {
    const env = await loggedIn(w.url, w.user.email, USER_PASSWORD);
    expect(outcome(await cli(env, ['users', 'list']))).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: not allowed: Your role USER_ROLE lacks the permission "user.read" this call needs; ask an administrator\n',
    });
  });

  it('an e-mail that exists: exit 1 with the API sentence', async () => {
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const result = await cli(env, ['users', 'create', '--email', ADMIN_EMAIL, '--first-name', 'A', '--last-name', 'B']);
    expect(outcome(result)).toEqual({ code: 1, stdout: '', stderr: `scanhub: conflict: A user with the e-mail address "${ADMIN_EMAIL}" already exists\n` });
  });

  it.each([
    [['users', 'create', '--first-name', 'A', '--last-name', 'B'], "error: required option '--email <email>' not specified\n"],
    [['users', 'create', '--email', 'x@example.com', '--first-name', 'A', '--last-name', 'B', '--role', 'ROOT'], "error: option '--role <role>' argument 'ROOT' is invalid. Allowed choices are USER_ROLE, ADMIN_ROLE.\n"],
    [['users', 'get'], "error: missing required argument 'user'\n"],
    [['users', 'frobnicate'], "error: unknown command 'frobnicate'\n"],
  ])('usage error %j: exit 2 before any request', async (args, message) => {
    const env = { ...freshHome(), SCANHUB_URL: w.url, SCANHUB_TOKEN: w.admin.token };
    expect(outcome(await cli(env, args))).toEqual({ code: 2, stdout: '', stderr: `${message}(run with --help for usage)\n` });
  });
});

