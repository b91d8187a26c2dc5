// The audit log (DESIGN.md "Trust", issue 15 item 4) as a client sees it: every recorded action
// read back field by field from GET /{customer_id}/audit-log, in pages newest first, filtered by
// time and action; refused changes leave no entry; the CLI prints it. Runs on both stores.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from '../../../src/domain/audit.js';
import { registerAssetFile } from '../../../src/store/operator/asset-files.js';
import { adminEnv, runCli } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { lacks } from '../../helpers/users.js';
import { UUID } from '../../helpers/patterns.js';
import { TestClock } from '../../helpers/world.js';

const T0 = 1_800_000_000_000;
const SECOND = 1000;
const at = (seconds: number) => T0 + seconds * SECOND;
const IP = '127.0.0.1';
const USER_EMAIL = 'tech@example.com';
const USER_PASSWORD = 'tech-password-123';

interface Item {
  id: string;
  time: number;
  action: string;
  actor: { type: string; id: string; email?: string };
  target?: { type: string; id: string };
  ip?: string;
  details?: Record<string, unknown>;
}
interface Page {
  items: Item[];
  links: { next?: string };
  metadata: { description: string; size: number; filters: { name: string; value: unknown }[] };
}

let t: TestServer;
const clock = new TestClock();
let adminId: string;
let userId: string;
let gatewayId: string;
let bulkIds: string[];
let exportId: string;
let assetId: string;
let files: string;

const post = (path: string, json?: unknown, token = t.adminToken) => call(t.url, 'POST', path, { token, ...(json === undefined ? {} : { json }) });
const auditLog = (query: string, token = t.adminToken) => call(t.url, 'GET', `/${CUSTOMER}/audit-log${query}`, { token });
const page = async (query: string) => {
  const answer = await auditLog(query);
  expect(answer.status, answer.text).toBe(200);
  return answer.body as Page;
};
/** Entries of the whole test range, without paging. */
const ALL = `?start_time=${T0}&end_time=${at(100)}`;

beforeAll(async () => {
  clock.freeze(T0);
  t = await startTestServer({ clock: clock.now });
  adminId = ((await t.admin.get<{ id: string }>(`/${CUSTOMER}/me`)) as { id: string }).id;

  clock.freeze(at(1));
  const created = await post(`/${CUSTOMER}/users`, { first_name: 'Tess', last_name: 'Tech', role: 'USER_ROLE', email: USER_EMAIL });
  userId = (created.body as { id: string }).id;
  // Refused: the e-mail is taken (409), so no entry.
  expect((await post(`/${CUSTOMER}/users`, { first_name: 'T', last_name: 'T', role: 'USER_ROLE', email: USER_EMAIL })).status).toBe(409);

  clock.freeze(at(2));
  const invitation = (await post(`/${CUSTOMER}/users/${userId}/invitation`)).body as { invitation_token: string };
  clock.freeze(at(3));
  expect((await post('/auth/accept-invitation', { invitation_token: invitation.invitation_token, password: USER_PASSWORD }, undefined)).status).toBe(200);

  clock.freeze(at(4));
  expect((await post('/auth/login', { email: USER_EMAIL, password: 'wrong-password-1' }, undefined)).status).toBe(401);
  // An unknown address belongs to no customer: no entry anywhere.
  expect((await post('/auth/login', { email: 'nobody@example.com', password: 'wrong-password-1' }, undefined)).status).toBe(401);
  clock.freeze(at(5));
  expect((await post('/auth/login', { email: USER_EMAIL, password: USER_PASSWORD }, undefined)).status).toBe(200);

  clock.freeze(at(6));
  gatewayId = ((await post(`/${CUSTOMER}/gateways`, { name: 'dock-1', usecase: 'inbound', station: 'dock' })).body as { id: string }).id;
  // Refused: the name is taken (409), so no entry.
  expect((await post(`/${CUSTOMER}/gateways`, { name: 'dock-1', usecase: 'inbound', station: 'dock' })).status).toBe(409);

  clock.freeze(at(7));
  const bulk = await post(`/${CUSTOMER}/gateways/bulk-create`, {
    gateways: [
      { name: 'dock-2', usecase: 'inbound', station: 'dock' },
      { name: 'dock-3', usecase: 'inbound', station: 'dock' },
    ],
  });
  bulkIds = (bulk.body as { id: string }[]).map((g) => g.id);
  // Refused as a whole (one name taken): no entry for either.
  expect((await post(`/${CUSTOMER}/gateways/bulk-create`, { gateways: [{ name: 'dock-4', usecase: 'u', station: 's' }, { name: 'dock-1', usecase: 'u', station: 's' }] })).status).toBe(409);

  clock.freeze(at(8));
  const prepared = await post(`/${CUSTOMER}/gateways/${gatewayId}/prepare-provisioning`);
  expect(prepared.status).toBe(200);
  // Refused: prepared once only (403), so no entry.
  expect((await post(`/${CUSTOMER}/gateways/${gatewayId}/prepare-provisioning`)).status).toBe(403);

  clock.freeze(at(9));
  expect((await post('/provisioning', { token: (prepared.body as { token: string }).token }, undefined)).status).toBe(200);

  clock.freeze(at(10));
  expect((await call(t.url, 'DELETE', `/${CUSTOMER}/gateways/${bulkIds[1]}`, { token: t.adminToken })).status).toBe(204);
  // Refused: already deleted (404), so no entry.
  expect((await call(t.url, 'DELETE', `/${CUSTOMER}/gateways/${bulkIds[1]}`, { token: t.adminToken })).status).toBe(404);

  clock.freeze(at(11));
  const task = await post(`/${CUSTOMER}/events/export/tasks?start_time_millis=${at(-3600)}&end_time_millis=${at(0)}`);
  expect(task.status, task.text).toBe(202);
  exportId = (task.body as { task: string }).task;

  clock.freeze(at(12));
  files = mkdtempSync(join(tmpdir(), 'scanhub-audit-assets-'));
  writeFileSync(join(files, 'fw.bin'), 'firmware');
  assetId = (
    await registerAssetFile(t.server.ctx.store.assets, t.dataDir, { assetType: 'MARK_FIRMWARE', assetVersion: '1.0', eulaVersion: 'eula-1', eulaText: 'Be nice.', file: join(files, 'fw.bin') }, clock.now())
  ).id;
  const agreed = await post(`/${CUSTOMER}/generate-download-url`, { eula_version: 'eula-1', asset_type: 'MARK_FIRMWARE', agreed_by: 'tess@example.com' });
  expect(agreed.status, agreed.text).toBe(200);

  clock.freeze(at(13));
  expect((await call(t.url, 'DELETE', `/${CUSTOMER}/users/${userId}`, { token: t.adminToken })).status).toBe(204);
  // Refused: the last administrator (409), so no entry.
  expect((await call(t.url, 'DELETE', `/${CUSTOMER}/users/${adminId}`, { token: t.adminToken })).status).toBe(409);
});

afterAll(async () => {
  await t?.close();
  if (files) rmSync(files, { recursive: true, force: true });
});

describe('GET /{customer_id}/audit-log', () => {
  it('records every action with actor, target, address, details and the time of the change, newest first', async () => {
    const admin = { type: 'user', id: adminId, email: ADMIN_EMAIL };
    const user = { type: 'user', id: userId, email: USER_EMAIL };
    const { items, links, metadata } = await page(ALL);
    expect(links).toEqual({});
    expect(metadata).toEqual({
      description: `Audit entries with ${new Date(T0).toISOString()} <= time < ${new Date(at(100)).toISOString()}, newest first`,
      size: items.length,
      filters: [
        { name: 'start_time', value: T0 },
        { name: 'end_time', value: at(100) },
      ],
    });
    for (const item of items) expect(item.id).toMatch(UUID);
    const serial = (prepared: Item | undefined) => prepared?.details?.certificate_serial;
    const preparedSerial = serial(items.find((i) => i.action === 'gateway.prepared'));
    expect(preparedSerial).toMatch(/^[0-9a-f]+$/);
    const entries = items.map(({ id: _id, ...rest }) => rest);
    const expected = [
      { time: at(13), action: 'user.deleted', actor: admin, target: { type: 'user', id: userId }, ip: IP },
      {
        time: at(12),
        action: 'eula.agreed',
        actor: admin,
        target: { type: 'asset', id: assetId },
        ip: IP,
        details: { asset_type: 'MARK_FIRMWARE', asset_version: '1.0', eula_version: 'eula-1', agreed_by: 'tess@example.com' },
      },
      { time: at(11), action: 'export.created', actor: admin, target: { type: 'export', id: exportId }, ip: IP, details: { start_time: at(-3600), end_time: T0, cells: 'safe' } },
      { time: at(10), action: 'gateway.deleted', actor: admin, target: { type: 'gateway', id: bulkIds[1] }, ip: IP },
      {
        time: at(9),
        action: 'gateway.provisioned',
        actor: { type: 'device', id: gatewayId },
        target: { type: 'gateway', id: gatewayId },
        ip: IP,
        details: { name: 'dock-1', certificate_serial: preparedSerial },
      },
      {
        time: at(8),
        action: 'gateway.prepared',
        actor: admin,
        target: { type: 'gateway', id: gatewayId },
        ip: IP,
        details: { name: 'dock-1', certificate_serial: preparedSerial, key_type: 'ec-p256' },
      },
      // Two entries of one change, in the same millisecond: ordered by id, newest first.
      ...bulkIds
        .map((id, i) => ({ time: at(7), action: 'gateway.created', actor: admin, target: { type: 'gateway', id }, ip: IP, details: { name: `dock-${i + 2}` } }))
        .sort((a, b) => entryId(items, b.target.id).localeCompare(entryId(items, a.target.id))),
      { time: at(6), action: 'gateway.created', actor: admin, target: { type: 'gateway', id: gatewayId }, ip: IP, details: { name: 'dock-1' } },
      { time: at(5), action: 'auth.login', actor: user, target: { type: 'user', id: userId }, ip: IP },
      { time: at(4), action: 'auth.login_refused', actor: user, target: { type: 'user', id: userId }, ip: IP },
      { time: at(3), action: 'user.invitation_accepted', actor: user, target: { type: 'user', id: userId }, ip: IP },
      { time: at(2), action: 'user.invited', actor: admin, target: { type: 'user', id: userId }, ip: IP, details: { email: USER_EMAIL, expires_at: at(2) + 24 * 3600 * SECOND } },
      { time: at(1), action: 'user.created', actor: admin, target: { type: 'user', id: userId }, ip: IP, details: { email: USER_EMAIL, roles: ['USER_ROLE'] } },
      { time: T0, action: 'auth.login', actor: admin, target: { type: 'user', id: adminId }, ip: IP },
      // The first administrator, created by `serve` on the empty deployment: the operator's doing.
      { time: T0, action: 'user.created', actor: { type: 'operator', id: 'operator' }, target: { type: 'user', id: adminId }, details: { email: ADMIN_EMAIL, roles: ['ADMIN_ROLE'], bootstrap: true } },
    ];
    expect(entries.slice(0, -2)).toEqual(expected.slice(0, -2));
    // The first two came in the same millisecond (serve's start): their order is that of their ids.
    const byAction = (list: typeof entries) => [...list].sort((x, y) => x.action.localeCompare(y.action));
    expect(byAction(entries.slice(-2))).toEqual(byAction(expected.slice(-2)));
  });

  it('walks pages newest first with links.next, none skipped or repeated, the limit kept', async () => {
    const everything = (await page(ALL)).items.map((i) => i.id);
    const seen: string[] = [];
    let current = await page(`${ALL}&limit=4`);
    const sizes = [current.items.length];
    seen.push(...current.items.map((i) => i.id));
    while (current.links.next) {
      const answer = await call(t.url, 'GET', current.links.next, { token: t.adminToken });
      expect(answer.status).toBe(200);
      current = answer.body as Page;
      sizes.push(current.items.length);
      seen.push(...current.items.map((i) => i.id));
    }
    expect(seen).toEqual(everything);
    expect(sizes).toEqual([4, 4, 4, 4].slice(0, Math.floor(everything.length / 4)).concat(everything.length % 4 ? [everything.length % 4] : []));
  });

  it('keeps to the time range (start included, end excluded), one day back from now by default', async () => {
    const range = await page(`?start_time=${at(7)}&end_time=${at(9)}`);
    expect(range.items.map((i) => [i.time, i.action])).toEqual([
      [at(8), 'gateway.prepared'],
      [at(7), 'gateway.created'],
      [at(7), 'gateway.created'],
    ]);
    clock.freeze(at(10) + 24 * 3600 * SECOND);
    let lastDay: Page;
    try {
      // A day on, the tokens of T0 have expired.
      const token = await t.login(ADMIN_EMAIL, ADMIN_PASSWORD);
      lastDay = (await auditLog('', token)).body as Page;
    } finally {
      clock.freeze(at(14));
    }
    // The log-in just now is at the end of the range, which is excluded.
    expect(lastDay.items.map((i) => [i.time, i.action])).toEqual([
      [at(13), 'user.deleted'],
      [at(12), 'eula.agreed'],
      [at(11), 'export.created'],
      [at(10), 'gateway.deleted'],
    ]);
  });

  it('filters by action, across pages', async () => {
    const first = await page(`${ALL}&action=gateway.created&limit=2`);
    expect(first.items.map((i) => [i.time, i.action])).toEqual([
      [at(7), 'gateway.created'],
      [at(7), 'gateway.created'],
    ]);
    expect(first.metadata.filters).toContainEqual({ name: 'action', value: 'gateway.created' });
    const next = await call(t.url, 'GET', first.links.next!, { token: t.adminToken });
    expect((next.body as Page).items.map((i) => [i.time, i.action, i.target?.id])).toEqual([[at(6), 'gateway.created', gatewayId]]);
    expect((next.body as Page).links).toEqual({});
    // A token continues its own query: another action with it is refused.
    const mixed = await auditLog(`?next_token=${new URL(first.links.next!, t.url).searchParams.get('next_token')}&action=user.created`);
    expect([mixed.status, mixed.body]).toEqual([
      400,
      { title: 'Bad Request', details: 'Query parameter "action" (user.created) differs from the query of "next_token" (gateway.created): a token continues the query it came from.' },
    ]);
  });

  it('is for administrators of the customer only', async () => {
    const token = await t.login(ADMIN_EMAIL, ADMIN_PASSWORD);
    const user = await t.createUser('USER_ROLE');
    const asUser = await auditLog('', user.token);
    expect([asUser.status, asUser.body]).toEqual([403, lacks('audit.read')]);
    const other = await call(t.url, 'GET', '/globex/audit-log', { token });
    expect([other.status, other.body]).toEqual([
      403,
      { title: 'Forbidden', details: `Your account belongs to customer "${CUSTOMER}" and has no access to customer "globex".` },
    ]);
    expect((await call(t.url, 'GET', `/${CUSTOMER}/audit-log`)).status).toBe(401);
  });

  it.each([
    ['limit=0', 'Query parameter "limit" must be >= 1.'],
    ['limit=501', 'Query parameter "limit" must be <= 500.'],
    ['start_time=yesterday', 'Query parameter "start_time" must be integer.'],
    [`start_time=${at(2)}&end_time=${at(1)}`, `Query parameter "start_time" (${at(2)}) is after "end_time" (${at(1)}): the range must not end before it starts.`],
    ['action=gateway.renamed', `Query parameter "action" must be one of ${AUDIT_ACTIONS.join(', ')}.`],
    ['next_token=bm9wZQ', 'Query parameter "next_token" is not a page token of this customer\'s audit log: use links.next of the previous page as it is.'],
    ['colour=red', 'Unknown query parameter "colour": it is not part of this call.'],
  ])('refuses %s with a 400 that says why', async (query, details) => {
    const answer = await auditLog(`?${query}`);
    expect([answer.status, answer.body]).toEqual([400, { title: 'Bad Request', details }]);
  });
});

describe('the lockout, audited', () => {
  it('records each refused log-in of a known address, and once the lock it starts; the 429s that follow are not entries', async () => {
    const user = await t.createUser('USER_ROLE', 'locked@example.com');
    clock.freeze(at(30));
    for (let i = 0; i < 10; i++) expect((await post('/auth/login', { email: 'locked@example.com', password: 'wrong-password-1' }, undefined)).status).toBe(401);
    expect((await post('/auth/login', { email: 'locked@example.com', password: 'user-password-123' }, undefined)).status).toBe(429);
    const { items } = await page(`?start_time=${at(30)}&end_time=${at(31)}`);
    const actor = { type: 'user', id: user.id, email: 'locked@example.com' };
    const target = { type: 'user', id: user.id };
    expect(items.filter((i) => i.action === 'auth.login_refused').map(({ id: _id, ...rest }) => rest)).toEqual(
      Array.from({ length: 10 }, () => ({ time: at(30), action: 'auth.login_refused', actor, target, ip: IP })),
    );
    expect(items.filter((i) => i.action !== 'auth.login_refused').map(({ id: _id, ...rest }) => rest)).toEqual([
      { time: at(30), action: 'auth.locked_out', actor, target, ip: IP, details: { refusals: 10, until: at(30) + 15 * 60 * SECOND } },
    ]);
    clock.freeze(at(40));
  });
});

describe('changes of the operator', () => {
  const operator = (args: string[], input?: string) => runCli(['operator', ...args, ...t.operatorArgs], { input, env: t.operatorEnv });
  /** Every entry of the customer, whenever (the operator's clock is the real one). */
  const everything = async (customer: string, token: string, action?: string) => {
    const answer = await call(t.url, 'GET', `/${customer}/audit-log?start_time=0&end_time=${at(100)}${action ? `&action=${action}` : ''}`, { token });
    expect(answer.status, answer.text).toBe(200);
    return (answer.body as Page).items.map(({ id: _id, ...rest }) => rest);
  };

  it('`operator features set` records feature.set with the operator as actor and no address', async () => {
    const before = Date.now();
    const result = await operator(['features', 'set', CUSTOMER, 'scanner-v2', '--enable', '--properties', '{"max":3}']);
    expect(result.code, result.stderr).toBe(0);
    const [entry, ...others] = await everything(CUSTOMER, await t.login(ADMIN_EMAIL, ADMIN_PASSWORD), 'feature.set');
    expect(others).toEqual([]);
    expect(entry).toEqual({
      time: expect.any(Number),
      action: 'feature.set',
      actor: { type: 'operator', id: 'operator' },
      target: { type: 'feature', id: 'scanner-v2' },
      details: { enabled: true, additional_properties: { max: 3 } },
    });
    expect(entry!.time).toBeGreaterThanOrEqual(before);
    expect(entry!.time).toBeLessThanOrEqual(Date.now());
  });

  it('`operator customers add` records the new administrator in the new customer, and a refused one records nothing', async () => {
    const added = await operator(['customers', 'add', 'initech', '--admin-email', 'lumbergh@initech.example', '--password-stdin'], 'yeah-if-you-could\n');
    expect(added.code, added.stderr).toBe(0);
    const again = await operator(['customers', 'add', 'initech', '--admin-email', 'other@initech.example', '--password-stdin'], 'yeah-if-you-could\n');
    expect(again.code).toBe(1);
    const token = await t.login('lumbergh@initech.example', 'yeah-if-you-could');
    const adminOf = (await call(t.url, 'GET', '/initech/me', { token })).body as { id: string };
    expect(await everything('initech', token)).toEqual([
      { time: clock.now(), action: 'auth.login', actor: { type: 'user', id: adminOf.id, email: 'lumbergh@initech.example' }, target: { type: 'user', id: adminOf.id }, ip: IP },
      {
        time: expect.any(Number),
        action: 'user.created',
        actor: { type: 'operator', id: 'operator' },
        target: { type: 'user', id: adminOf.id },
        details: { email: 'lumbergh@initech.example', roles: ['ADMIN_ROLE'] },
      },
    ]);
  });
});

describe('scanhub audit', () => {
  const env = () => adminEnv(t);

  it('prints the entries of the range as tab-separated rows, newest first, and --json the API items', async () => {
    const range = ['--since', String(at(7)), '--until', String(at(9))];
    const text = await runCli(['audit', ...range], { env: env() });
    expect([text.code, text.stderr]).toEqual([0, '']);
    const [newest, ...rest] = text.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(newest).toEqual([new Date(at(8)).toISOString(), 'gateway.prepared', `user ${ADMIN_EMAIL}`, `gateway dock-1 (${gatewayId.slice(0, 8)})`, IP, expect.stringMatching(/^\{"name":"dock-1","certificate_serial":"[0-9a-f]+","key_type":"ec-p256"\}$/)]);
    expect(rest.map((row) => row.slice(0, 2))).toEqual([
      [new Date(at(7)).toISOString(), 'gateway.created'],
      [new Date(at(7)).toISOString(), 'gateway.created'],
    ]);
    const json = await runCli(['--json', 'audit', ...range, '--action', 'gateway.created', '--limit', '1'], { env: env() });
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as Item[]).map((i) => [i.time, i.action])).toEqual([[at(7), 'gateway.created']]);
    expect(json.stderr).toBe('Printed the newest 1 entries of the range; without --limit every one is printed.\n');
  });

  it('exits 2 on a bad time or action, 4 for a user without audit.read', async () => {
    const badTime = await runCli(['audit', '--since', 'last tuesday'], { env: env() });
    expect([badTime.code, badTime.stdout]).toEqual([2, '']);
    expect(badTime.stderr).toContain('--since: "last tuesday" is not a time');
    const badAction = await runCli(['audit', '--action', 'gateway.renamed'], { env: env() });
    expect(badAction.code).toBe(2);
    expect(badAction.stderr).toContain("argument 'gateway.renamed' is invalid");
    const user = await t.createUser('USER_ROLE');
    const refused = await runCli(['audit'], { env: { ...env(), SCANHUB_TOKEN: user.token } });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('audit.read');
  });
});

function entryId(items: Item[], targetId: string): string {
  return items.find((i) => i.action === 'gateway.created' && i.target?.id === targetId)!.id;
}
