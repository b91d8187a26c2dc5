// `scanhub api-keys create|list|revoke` as processes, and a key used by every client command in
// place of an IdToken: the CI recipe of the README (SCANHUB_URL and SCANHUB_TOKEN only).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshHome, runCli, runOnTerminal } from '../../helpers/cli.js';
import { eventRow } from '../../helpers/events.js';
import { API_KEY } from '../../helpers/patterns.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';


let t: TestServer;
let admin: NodeJS.ProcessEnv;
const row = eventRow({ created: Date.now() - 60_000, scan_code: 'CI-1' });

beforeAll(async () => {
  t = await startTestServer();
  await t.server.ctx.store.events.insert(CUSTOMER, [row]);
  admin = { SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken };
});
afterAll(async () => {
  await t?.close();
});

describe('scanhub api-keys', () => {
  it('create prints the key alone on stdout; SCANHUB_TOKEN=<key> scanhub events list --json lists the events', async () => {
    const created = await runCli(['api-keys', 'create', '--name', 'ci', '--permission', 'event.read', '--no-expiry'], { env: admin });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^shk_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toMatch(/^Created API key ci \([0-9a-f-]{36}\) with event\.read; it does not expire\. This is the only time the key is shown/);
    const key = created.stdout.trim();

    const listed = await runCli(['events', 'list', '--json'], { env: { SCANHUB_URL: t.url, SCANHUB_TOKEN: key } });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(listed.stdout) as { id: string; scan_code: string }[]).map((e) => [e.id, e.scan_code])).toEqual([[row.id, 'CI-1']]);

    // The same with --token, and whoami names the key.
    const whoami = await runCli(['whoami', '--token', key], { env: { SCANHUB_URL: t.url } });
    expect(whoami.code).toBe(0);
    expect(whoami.stdout).toContain(`customer\t${CUSTOMER}\n`);
    expect(whoami.stdout).toMatch(/^api key\tci \([0-9a-f-]{36}\)$/m);
    expect(whoami.stdout).toContain('permissions\tevent.read\n');
    expect(whoami.stdout).toContain('key expires\tnever\n');

    // What the key may not do: exit 4, one line.
    const gateways = await runCli(['gateways', 'create', '--name', 'dock-ci', '--usecase', 'inbound', '--station', 's1'], { env: { SCANHUB_URL: t.url, SCANHUB_TOKEN: key } });
    expect(gateways).toEqual({ code: 4, stdout: '', stderr: 'scanhub: not allowed: The API key "ci" lacks the permission "gateway.write" this call needs; create a key with it\n' });
  });

  it('create --json prints the API object; without --expires a key expires in 90 days', async () => {
    const before = Date.now();
    const created = await runCli(['api-keys', 'create', '--name', 'nightly', '--json'], { env: admin });
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout) as { key: string; expires_at: number; permissions: string[]; last_used: null };
    expect(Object.keys(body)).toEqual(['id', 'name', 'key', 'permissions', 'created', 'expires_at', 'last_used']);
    expect(body.key).toMatch(API_KEY);
    expect(body.expires_at - before).toBeGreaterThanOrEqual(90 * 86_400_000);
    expect(body.expires_at - Date.now()).toBeLessThanOrEqual(90 * 86_400_000);
    expect(body.permissions).toContain('apikey.write');
  });

  it('list prints the keys (no key) tab-separated when piped, and --json the API items', async () => {
    const listed = await runCli(['api-keys', 'list'], { env: admin });
    expect(listed.code).toBe(0);
    const names = listed.stdout.trim().split('\n').map((line) => line.split('\t')[1]);
    expect(names).toEqual(['ci', 'nightly']);
    expect(listed.stdout).not.toContain('shk_');
    const json = JSON.parse((await runCli(['api-keys', 'list', '--json'], { env: admin })).stdout) as { name: string; key?: string }[];
    expect(json.map((k) => [k.name, k.key])).toEqual([
      ['ci', undefined],
      ['nightly', undefined],
    ]);
  });

  it('revoke by name: the key is refused from the next command on (exit 4); an unknown name is exit 1', async () => {
    const key = (await runCli(['api-keys', 'create', '--name', 'doomed', '--permission', 'event.read'], { env: admin })).stdout.trim();
    // Revoking asks first: --yes when not interactive.
    expect(await runCli(['api-keys', 'revoke', 'doomed'], { env: admin })).toEqual({ code: 2, stdout: '', stderr: 'scanhub: --yes required when not running interactively\n' });
    const revoked = await runCli(['api-keys', 'revoke', 'doomed', '--yes'], { env: admin });
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toMatch(/^Revoked API key doomed \([0-9a-f-]{36}\): it is refused from now on\.\n$/);
    const refused = await runCli(['events', 'list', '--json'], { env: { SCANHUB_URL: t.url, SCANHUB_TOKEN: key, SCANHUB_CUSTOMER: CUSTOMER } });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/^scanhub: not authenticated: The API key "doomed" was revoked at \S+: create a new one\n$/);
    expect(await runCli(['api-keys', 'revoke', 'doomed', '--yes'], { env: admin })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'scanhub: no API key with the id or name "doomed" (revoked keys are not listed): `scanhub api-keys list` shows them\n',
    });
  });

  it('revoke by id works; a malformed --expires is exit 2 and creates nothing', async () => {
    const created = JSON.parse((await runCli(['api-keys', 'create', '--name', 'by-id', '--json'], { env: admin })).stdout) as { id: string };
    expect((await runCli(['api-keys', 'revoke', created.id, '--yes'], { env: admin })).code).toBe(0);
    expect(await runCli(['api-keys', 'create', '--name', 'bad', '--expires', 'soon'], { env: admin })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --expires: "soon" is neither a duration from now (90d, 12h) nor a time (2027-01-31, ISO 8601)\n',
    });
    expect(await runCli(['api-keys', 'create', '--name', 'bad', '--expires', '1d', '--no-expiry'], { env: admin })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --expires and --no-expiry exclude each other: choose one\n',
    });
    expect((await runCli(['api-keys', 'list'], { env: admin })).stdout).not.toMatch(/\tbad\t/);
  });

  it('on a terminal, create shows the permissions the key would hold and asks first', async () => {
    const home = freshHome();
    const terminal = runOnTerminal(['api-keys', 'create', '--name', 'asked'], { ...admin, HOME: home.HOME, XDG_CONFIG_HOME: home.XDG_CONFIG_HOME });
    await terminal.shows(/Create it\?/);
    expect(terminal.output()).toMatch(/The key "asked" would hold [a-z.]+(, [a-z.]+)+ \(all of yours: narrow them with --permission\); it would expire \d{4}-\d\d-\d\d /);
    terminal.type('n\r');
    expect(await terminal.exited).toBe(2);
    expect((await runCli(['api-keys', 'list'], { env: admin })).stdout).not.toMatch(/\tasked\t/);
  });

  it('a malformed key in SCANHUB_TOKEN: exit 4, one line', async () => {
    expect(await runCli(['events', 'list'], { env: { SCANHUB_URL: t.url, SCANHUB_TOKEN: 'shk_nope' } })).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: not authenticated: The API key in the Authorization header is malformed: a key is "shk_" and 43 more characters, as POST /{customer_id}/api-keys made it\n',
    });
  });
});
