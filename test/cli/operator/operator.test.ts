import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcome, runCli, runOnTerminal } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { ADMIN_EMAIL, CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

/** `scanhub operator ...` on the test server's store (its data directory, and its database on PostgreSQL). */
const operator = (args: string[], input?: string, env: Record<string, string> = {}) =>
  runCli(['operator', ...args, ...(env.SCANHUB_DATA_DIR ? t.operatorArgs.slice(2) : t.operatorArgs)], { input, env: { ...t.operatorEnv, ...env } });

describe('scanhub operator customers add (while serve runs)', () => {
  it('creates the customer and its administrator, who can then log in', async () => {
    const result = await operator(['customers', 'add', 'initech', '--admin-email', 'lumbergh@initech.example', '--password-stdin'], 'yeah-if-you-could\n');
    expect(outcome(result)).toEqual({ code: 0, stdout: '', stderr: 'Created customer "initech" with administrator lumbergh@initech.example.\n' });
    const login = await call(t.url, 'POST', '/auth/login', { json: { email: 'lumbergh@initech.example', password: 'yeah-if-you-could' } });
    expect(login).toMatchObject({ status: 200, body: { customer_id: 'initech', token_type: 'Bearer' } });
    const users = await call(t.url, 'GET', '/initech/users', { token: (login.body as { id_token: string }).id_token });
    expect((users.body as { items: { email: string; roles: string[] }[] }).items.map((u) => [u.email, u.roles])).toEqual([
      ['lumbergh@initech.example', ['ADMIN_ROLE']],
    ]);
  });

  it('on a terminal, checks the password there and asks for it twice', async () => {
    const terminal = runOnTerminal(['operator', 'customers', 'add', 'globex', '--admin-email', 'hank@globex.example', ...t.operatorArgs], t.operatorEnv);
    await terminal.shows(/New administrator password \(at least 12 characters\)/);
    terminal.type('short\r');
    await terminal.shows(/The administrator password has 5 characters; it needs at least 12; try again\.[\s\S]*New administrator password/);
    terminal.type('hammocks-for-all\r');
    await terminal.shows(/The new administrator password again/);
    terminal.type('hammocks-for-all\r');
    expect(await terminal.exited).toBe(0);
    expect((await call(t.url, 'POST', '/auth/login', { json: { email: 'hank@globex.example', password: 'hammocks-for-all' } })).status).toBe(200);
  });

  it('--json prints what was created', async () => {
    const result = await operator(['customers', 'add', 'hooli', '--admin-email', 'gavin@hooli.example', '--password-stdin', '--json'], 'tethics-matter-1\n');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ customer_id: 'hooli', admin: { id: expect.any(String), email: 'gavin@hooli.example' } });
  });

  it('a customer that exists: exit 1', async () => {
    const result = await operator(['customers', 'add', CUSTOMER, '--admin-email', 'second@acme.example', '--password-stdin'], 'long-enough-pass\n');
    expect(outcome(result)).toEqual({ code: 1, stdout: '', stderr: `scanhub: customer "${CUSTOMER}" already exists\n` });
  });

  it('an administrator e-mail that exists: exit 1, and no customer is left half-made', async () => {
    const result = await operator(['customers', 'add', 'umbrella', '--admin-email', ADMIN_EMAIL.toUpperCase(), '--password-stdin'], 'long-enough-pass\n');
    expect(outcome(result)).toEqual({
      code: 1,
      stdout: '',
      stderr: `scanhub: a user with the e-mail address ${ADMIN_EMAIL.toUpperCase()} already exists\n`,
    });
    expect(await t.server.ctx.store.customers.exists('umbrella')).toBe(false);
  });

  it.each([
    [['customers', 'add', 'shortpw', '--admin-email', 'a@shortpw.example', '--password-stdin'], 'too-short\n', 'scanhub: the password must have at least 12 characters\n'],
    [['customers', 'add', 'bad/id', '--admin-email', 'a@x.example', '--password-stdin'], 'long-enough-pass\n', 'scanhub: "bad/id" is not a valid customer id: use 1-64 letters, digits, ".", "_" or "-"\n'],
    [['customers', 'add', 'assets', '--admin-email', 'a@x.example', '--password-stdin'], 'long-enough-pass\n', 'scanhub: "assets" is a path of the service itself and cannot be a customer id: choose another name (reserved: api-keys, assets, auth, downloads, healthz, metrics, openapi.json, provisioning)\n'],
    [['customers', 'add', 'noemail', '--admin-email', 'not-an-address', '--password-stdin'], 'long-enough-pass\n', 'scanhub: "not-an-address" is not an e-mail address\n'],
    [['customers', 'add', 'nopw', '--admin-email', 'a@nopw.example'], '', 'scanhub: --password-stdin required when not running interactively\n'],
    [['customers', 'add', 'noadmin', '--password-stdin'], 'long-enough-pass\n', "error: required option '--admin-email <email>' not specified\n(run with --help for usage)\n"],
  ])('usage error %j: exit 2', async (args, input, stderr) => {
    expect(outcome(await operator(args, input))).toEqual({ code: 2, stdout: '', stderr });
  });

  it('a data directory without a database: exit 2 saying how to create one', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'scanhub-empty-'));
    try {
      const result = await runCli(['operator', 'customers', 'add', 'x', '--admin-email', 'a@x.example', '--password-stdin', '--data-dir', empty], {
        input: 'long-enough-pass\n',
      });
      expect(outcome(result)).toEqual({
        code: 2,
        stdout: '',
        stderr: `scanhub: no scanhub database in ${empty}: start \`scanhub serve --data-dir ${empty}\` once to create it\n`,
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('scanhub operator features set', () => {
  const features = async () => (await call(t.url, 'GET', `/${CUSTOMER}/features`, { token: t.adminToken })).body;

  it('--enable with --properties: GET /features shows it at once', async () => {
    const result = await operator(['features', 'set', CUSTOMER, 'beacons', '--enable', '--properties', '{"a":1}']);
    expect(outcome(result)).toEqual({
      code: 0,
      stdout: 'feature\tbeacons\nenabled\ttrue\nadditional_properties\t{"a":1}\n',
      stderr: `Enabled feature "beacons" for customer "${CUSTOMER}".\n`,
    });
    expect(await features()).toEqual({ features: [{ feature: 'beacons', enabled: true, additional_properties: { a: 1 } }] });
  });

  it('--disable keeps the properties; --properties null clears them; SCANHUB_DATA_DIR names the directory', async () => {
    await operator(['features', 'set', CUSTOMER, 'night-mode', '--enable', '--properties', '{"until":"06:00"}']);
    const disabled = await operator(['features', 'set', CUSTOMER, 'night-mode', '--disable'], undefined, { SCANHUB_DATA_DIR: t.dataDir });
    expect(outcome(disabled)).toEqual({
      code: 0,
      stdout: 'feature\tnight-mode\nenabled\tfalse\nadditional_properties\t{"until":"06:00"}\n',
      stderr: `Disabled feature "night-mode" for customer "${CUSTOMER}".\n`,
    });
    await operator(['features', 'set', CUSTOMER, 'night-mode', '--disable', '--properties', 'null']);
    expect(await features()).toMatchObject({ features: expect.arrayContaining([{ feature: 'night-mode', enabled: false }]) });
  });

  it.each([
    [['--enable', '--disable'], 'scanhub: give exactly one of --enable and --disable\n'],
    [[], 'scanhub: give exactly one of --enable and --disable\n'],
    [['--enable', '--properties', '{a:1}'], "scanhub: --properties is not valid JSON: Expected property name or '}' in JSON at position 1\n"],
    [['--enable', '--properties', '[1,2]'], 'scanhub: --properties must be a JSON object or null\n'],
  ])('flags %j: exit 2', async (flags, stderr) => {
    const result = await operator(['features', 'set', CUSTOMER, 'odd', ...flags]);
    expect(outcome(result)).toEqual({ code: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^${escape(stderr.split(' at position')[0]!)}`)) });
    if (!stderr.includes('at position')) expect(result.stderr).toBe(stderr);
  });

  it('a customer that does not exist: exit 1', async () => {
    expect(outcome(await operator(['features', 'set', 'nobody-inc', 'x', '--enable']))).toEqual({
      code: 1,
      stdout: '',
      stderr: 'scanhub: customer "nobody-inc" does not exist\n',
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
