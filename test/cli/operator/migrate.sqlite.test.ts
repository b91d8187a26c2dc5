import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../../../src/client/api.js';
import { COPIED_TABLES, SQLITE_ONLY_TABLES } from '../../../src/store/shared/copied-tables.js';
import { openStore } from '../../../src/store/open.js';
import { runCli } from '../../helpers/cli.js';
import { call, type HttpAnswer } from '../../helpers/http.js';
import { connectGateway, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { describePostgres, freshDatabase, TEST_DATABASE_URL, withDatabase } from '../../helpers/postgres.js';
import { serveOnFreePorts, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { TEST_MASTER_KEY } from '../../helpers/test-store.js';
import { until } from '../../helpers/until.js';

/**
 * `scanhub operator migrate` (DESIGN.md "From one box to a cluster"), all as a user does it: a
 * single-box deployment built by a real `serve` over HTTP, MQTT and the operator CLI, stopped,
 * migrated by the CLI, and served again from PostgreSQL by a `serve` with another (empty) data
 * directory, whose answers must be the old ones byte for byte.
 */

const KEY_ENV = { SCANHUB_MASTER_KEY: TEST_MASTER_KEY };
const USER_EMAIL = 'picker@example.com';
const USER_PASSWORD = 'picker-password-123';
const FIRST_START = { SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD, SCANHUB_ADMIN_EMAIL: ADMIN_EMAIL, SCANHUB_CUSTOMER_ID: CUSTOMER };

let root: string;
/** The single-box deployment's data directory (built once, stopped; the tests only read it). */
let dataDir: string;
const running: ServeProcess[] = [];

afterAll(async () => {
  await Promise.all(running.splice(0).map(stop));
  if (root) rmSync(root, { recursive: true, force: true });
});

const serve = (args: string[], env: Record<string, string> = {}, port?: number) => serveOnFreePorts(running, args, env, port);

const migrate = (args: string[], env: Record<string, string> = KEY_ENV) => runCli(['operator', 'migrate', ...args], { env });

async function pgQuery<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Rows per table of a PostgreSQL database (0 for a table it does not have). */
async function pgCounts(url: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [...COPIED_TABLES.map((t) => t.name), 'secrets']) {
    const [exists] = await pgQuery<{ present: boolean }>(url, `SELECT to_regclass('${table}') IS NOT NULL AS present`);
    counts[table] = exists!.present ? Number((await pgQuery<{ n: string }>(url, `SELECT count(*) AS n FROM "${table}"`))[0]!.n) : 0;
  }
  return counts;
}

function sqliteCounts(dir: string): Record<string, number> {
  const db = new Database(join(dir, 'scanhub.db'), { readonly: true });
  try {
    return Object.fromEntries(COPIED_TABLES.map((t) => [t.name, db.prepare(`SELECT count(*) FROM "${t.name}"`).pluck().get() as number]));
  } finally {
    db.close();
  }
}

const EMPTY = Object.fromEntries([...COPIED_TABLES.map((t) => t.name), 'secrets'].map((name) => [name, 0]));

/** The export task once it has completed (its exporter runs by itself: asked every 50 ms, for at most 10 s). */
function waitForExport(client: ApiClient, task: string): Promise<{ status: string; download_link?: string }> {
  const state = () => client.get<{ completed: boolean; status: string; download_link?: string }>(`/${CUSTOMER}/events/export/tasks/${task}`);
  return until(state, (answer) => answer.completed, { what: `export ${task} to complete`, timeoutMs: 10_000, everyMs: 50 });
}

/** What a user saw of the deployment: answers that must come back byte for byte from PostgreSQL. */
interface Seen {
  adminToken: string;
  gateway: TestGateway;
  deletedGatewayId: string;
  answers: Record<string, { status: number; etag: unknown; text: string }>;
  exportTask: string;
  pendingExport: string;
  exportCsv: string;
  asset: Buffer;
  deadLetters: string;
  eventCount: number;
  /** An API key created before the migration (only its hash is stored). */
  apiKey: string;
  /** The single box's HTTP port: the cluster's instance takes it over, and with it the public URL. */
  port: number;
}
let seen: Seen;

const BASE = Date.now() - 10 * 60_000;
const RANGE = `start_time_millis=${BASE}&end_time_millis=${BASE + 60_000}`;
/** The reads compared before and after. */
const READS: Record<string, string> = {
  'events page 1': `/${CUSTOMER}/events?${RANGE}&limit=2`,
  users: `/${CUSTOMER}/users`,
  gateways: `/${CUSTOMER}/gateways`,
  devices: `/${CUSTOMER}/devices`,
  'job configs': `/${CUSTOMER}/job-configs`,
  features: `/${CUSTOMER}/features`,
  assets: `/${CUSTOMER}/assets`,
  me: `/${CUSTOMER}/me`,
};

async function read(url: string, token: string, path: string): Promise<{ status: number; etag: unknown; text: string }> {
  const answer: HttpAnswer = await call(url, 'GET', path, { token });
  return { status: answer.status, etag: answer.headers.etag, text: answer.text };
}

/** Reads every page of the event list from page 1 on, following links.next. */
async function eventPages(url: string, token: string): Promise<string[]> {
  const pages: string[] = [];
  let path: string | undefined = READS['events page 1'];
  while (path) {
    const answer = await read(url, token, path);
    expect(answer.status).toBe(200);
    pages.push(answer.text);
    path = (JSON.parse(answer.text) as { links: { next?: string } }).links.next;
  }
  return pages;
}

describePostgres('scanhub operator migrate', () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'scanhub-migrate-'));
    dataDir = join(root, 'data');
    const old = await serve(['--data-dir', dataDir], FIRST_START);
    const anonymous = new ApiClient(old.url);
    const adminToken = (await anonymous.post<{ id_token: string }>('/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).id_token;
    const admin = new ApiClient(old.url, adminToken);

    // Users: one who set a password through an invitation, one whose invitation is still open.
    const picker = await admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'Pia', last_name: 'Picker', role: 'USER_ROLE', email: USER_EMAIL });
    const { invitation_token } = await admin.post<{ invitation_token: string }>(`/${CUSTOMER}/users/${picker.id}/invitation`);
    await anonymous.post('/auth/accept-invitation', { invitation_token, password: USER_PASSWORD });
    const invitee = await admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'Ivo', last_name: 'Invited', role: 'USER_ROLE', email: 'ivo@example.com' });
    await admin.post(`/${CUSTOMER}/users/${invitee.id}/invitation`);

    // A provisioned gateway, its events over MQTT (text that COPY must escape, reals SQLite
    // writes its own way, a NUL that PostgreSQL cannot store), a deleted gateway whose name a
    // live one took again.
    const gateway = await provisionGateway({ admin, anonymous }, { name: 'dock-1' });
    const events = [
      { id: randomUUID(), type: 'scan', created: BASE + 1, scan_code: 'START-1', device_id: 'ring-1', device_battery: 0.1 + 0.2 },
      { id: randomUUID(), type: 'scan', created: BASE + 1, scan_code: 'tab\there\nnew "line" \\ back\r', device_temperature: 74 },
      { id: randomUUID(), type: 'telemetry', created: BASE + 2, device_battery: 1e-7, metrics_worker_steps: 12345.5 },
      { id: randomUUID(), type: 'scan', created: BASE + 3, scan_code: 'END-1', scan_duration: 0.25, scan_decode_symbology: 'EAN13' },
      { id: randomUUID(), type: 'scan', created: BASE + 4, scan_code: 'ünïcødé ✓ 😀' },
      { id: randomUUID(), type: 'scan', created: BASE + 4, scan_code: 'nul\u0000inside' },
    ];
    const mqtt = await connectGateway(gateway);
    await mqtt.publishAsync(gateway.topic, JSON.stringify(events), { qos: 1 });
    await mqtt.endAsync();
    const spare = await admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'spare', usecase: 'packing', station: 'station-2' });
    await admin.delete(`/${CUSTOMER}/gateways/${spare.id}`);
    await admin.post(`/${CUSTOMER}/gateways`, { name: 'spare', usecase: 'packing', station: 'station-3' });

    // A job configuration changed once (version 2, list revision 2), an export, a feature, an asset agreed to.
    const job = await admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, {
      job_name: 'picking',
      start_barcode: 'START',
      end_barcode: 'END',
      gateway_ids: [gateway.id],
    });
    await admin.patch(`/${CUSTOMER}/job-configs/${job.job_config_id}`, { job_name: 'picking-2' });
    const { task } = await admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks?${RANGE}`, {});
    const exported = await waitForExport(admin, task);
    expect(exported.status).toBe('SUCCESSFUL');
    const exportCsv = (await call(exported.download_link!, 'GET', '')).text;
    const operator = ['operator', '--data-dir', dataDir];
    expect((await runCli([...operator, 'features', 'set', CUSTOMER, 'scan-insights', '--enable', '--properties', '{"tier":2}'])).code).toBe(0);
    const assetFile = join(root, 'connect.apk');
    const eulaFile = join(root, 'eula.txt');
    writeFileSync(assetFile, Buffer.from([0x50, 0x4b, 3, 4, 0, 0xff]));
    writeFileSync(eulaFile, 'Use it well.\n');
    const added = await runCli([...operator, 'assets', 'add', '--type', 'CONNECT_ANDROID_APP', '--version', '1.0.0', '--eula-version', '1', '--eula-file', eulaFile, assetFile]);
    expect(added.code).toBe(0);
    const { download_url } = await admin.post<{ download_url: string }>(`/${CUSTOMER}/generate-download-url`, {
      eula_version: '1',
      asset_type: 'CONNECT_ANDROID_APP',
      agreed_by: ADMIN_EMAIL,
    });
    const asset = Buffer.from(await (await fetch(download_url)).arrayBuffer());
    const { key: apiKey } = await admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: 'ci', permissions: ['event.read'] });
    // Two commands for the gateway, one of them canceled: queued ones must survive the move.
    await admin.post(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'feedback', parameters: { sequence: 'OK' }, device_id: 'ring-1' });
    const canceled = await admin.post<{ command_id: string }>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'reboot' });
    await admin.post(`/${CUSTOMER}/commands/${canceled.command_id}/cancel`);
    // A retention period, and the (empty) deletion pass it starts: both come along.
    await admin.put(`/${CUSTOMER}/retention`, { events_days: 365 });
    await until(() => admin.get<{ last_deletion: unknown }>(`/${CUSTOMER}/retention`), (retention) => retention.last_deletion !== null, {
      what: 'a deletion pass after setting the retention',
      timeoutMs: 10_000,
      everyMs: 50,
    });

    const answers: Seen['answers'] = {};
    for (const [name, path] of Object.entries(READS)) answers[name] = await read(old.url, adminToken, path);
    answers['event pages'] = { status: 200, etag: undefined, text: (await eventPages(old.url, adminToken)).join('\n') };
    answers.gateway = await read(old.url, adminToken, `/${CUSTOMER}/gateways/${gateway.id}`);
    answers['gateway events'] = await read(old.url, adminToken, `/${CUSTOMER}/events?${RANGE}&gateway_id=${gateway.id}`);
    answers['deleted gateway'] = await read(old.url, adminToken, `/${CUSTOMER}/gateways/${spare.id}`);
    answers['gateway commands'] = await read(old.url, adminToken, `/${CUSTOMER}/gateways/${gateway.id}/commands`);
    expect(await stop(old.process)).toEqual({ code: 0, signal: null });

    // A quarantined message (the writer thread dies with it alone in hand: not something a test
    // provokes through the broker), kept by the operator: its seq and bytes must survive.
    const db = new Database(join(dataDir, 'scanhub.db'));
    db.prepare('INSERT INTO dead_letters (gateway_id, customer_id, received, quarantined, reason, payload) VALUES (?, ?, ?, ?, ?, ?)').run(
      gateway.id,
      CUSTOMER,
      BASE + 5,
      BASE + 6,
      'the ingest writer died with this message alone',
      Buffer.from([0, 1, 2, 0xff]),
    );
    // An export the box accepted and had not finished when it stopped: its lease died with it.
    const pendingExport = randomUUID();
    db.prepare(
      `INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, status, requested, cells, lease_owner, lease_until, attempts)
       VALUES (?, ?, ?, ?, ?, 'PENDING', ?, 'safe', 'the-stopped-box', ?, 1)`,
    ).run(pendingExport, CUSTOMER, ADMIN_EMAIL, BASE, BASE + 60_000, Date.now(), Date.now() + 3_600_000);
    db.close();
    const deadLetters = await runCli([...operator, 'dead-letters', 'list']);
    expect(deadLetters.code).toBe(0);
    seen = { adminToken, gateway, deletedGatewayId: spare.id, answers, exportTask: task, pendingExport, exportCsv, asset, deadLetters: deadLetters.stdout, eventCount: events.length, apiKey, port: Number(new URL(old.url).port) };
  }, 120_000);

  it('copies the stopped deployment: counts verified, old tokens, passwords and gateway certificates work, answers are byte-identical', async () => {
    const database = await freshDatabase();
    const blobDir = join(root, 'blobs');
    const result = await migrate(['--data-dir', dataDir, '--database', database, '--blob-dir', blobDir]);
    const exportFile = readdirSync(join(dataDir, 'exports'));
    expect(result).toEqual({
      code: 0,
      stdout: [
        'customers\t1\t1',
        'users\t3\t3',
        'invitations\t2\t2',
        'login_failures\t0\t0',
        'audit_log\t21\t21',
        'api_keys\t1\t1',
        'features\t1\t1',
        'gateways\t3\t3',
        'gateway_certificates\t1\t1',
        'provisioning_tokens\t1\t1',
        'events\t6\t6',
        'devices\t1\t1',
        'commands\t2\t2',
        'command_subscriptions\t0\t0',
        'export_tasks\t2\t2',
        'retention\t1\t1',
        'job_configs\t1\t1',
        'job_config_revisions\t1\t1',
        'assets\t1\t1',
        'asset_agreements\t1\t1',
        'dead_letters\t1\t1',
        'webhooks\t0\t0',
        'webhook_deliveries\t0\t0',
        'alert_rules\t0\t0',
        'alerts\t0\t0',
        'alert_trackers\t0\t0',
        'gateway_connectivity\t0\t0',
        'secrets\t4\t4',
        '',
      ].join('\n'),
      stderr:
        '1 text value held NUL characters, which PostgreSQL cannot store: it holds U+FFFD there instead.\n' +
        `Copied 2 files (exports/, assets/, packages/) from ${dataDir} to ${blobDir}.\n` +
        `Migrated ${dataDir} into PostgreSQL, counts verified: start every instance with this --database, the same master key and --blob-dir ${blobDir}.\n`,
    });
    expect(exportFile).toHaveLength(1);
    expect(existsSync(join(blobDir, 'exports', exportFile[0]!))).toBe(true);
    // Counted independently of the command: every table, on both sides.
    const { secrets, ...copied } = await pgCounts(database);
    expect(copied).toEqual(sqliteCounts(dataDir));
    expect(secrets).toBe(4);
    // A deleted gateway keeps its name, as PostgreSQL's store keeps it (SQLite had appended NUL and its id).
    expect(await pgQuery(database, 'SELECT name, deleted IS NOT NULL AS deleted FROM gateways ORDER BY created, id')).toEqual([
      { name: 'dock-1', deleted: false },
      { name: 'spare', deleted: true },
      { name: 'spare', deleted: false },
    ]);
    // The data directory is free again.
    expect(existsSync(join(dataDir, 'scanhub.pid'))).toBe(false);

    // A cluster instance: nothing local but a new, empty data directory; the files in the blob directory.
    // On the old address: the deployment's public URL, which the IdTokens name as their audience, stays.
    const cluster = await serve(['--data-dir', join(root, 'instance-1'), '--database', database, '--blob-dir', blobDir], KEY_ENV, seen.port);
    // No first-start bootstrap: the customer came along.
    expect(cluster.process.stderr()).toMatch(/^scanhub is serving http:\/\/127\.0\.0\.1:\d+ \(MQTT over TLS on port \d+\); Ctrl-C stops it\.\n$/);

    // The IdToken issued before the migration is still valid (same signing key); both passwords log in.
    const me = await read(cluster.url, seen.adminToken, `/${CUSTOMER}/me`);
    expect(me).toEqual(seen.answers.me);
    expect(me.status).toBe(200);
    for (const [email, password] of [[ADMIN_EMAIL, ADMIN_PASSWORD], [USER_EMAIL, USER_PASSWORD]]) {
      expect((await call(cluster.url, 'POST', '/auth/login', { json: { email, password } })).status).toBe(200);
    }

    // The API key made before the migration authenticates: its hash came along.
    expect((await call(cluster.url, 'GET', `/${CUSTOMER}/events?${RANGE}`, { token: seen.apiKey })).status).toBe(200);

    // Byte for byte: lists, ETags (gateway version, job list revision), page tokens.
    for (const name of Object.keys(READS).filter((n) => n !== 'events page 1')) {
      expect({ name, ...(await read(cluster.url, seen.adminToken, READS[name]!)) }).toEqual({ name, ...seen.answers[name] });
    }
    expect(seen.answers['job configs']!.etag).toBe('2');
    expect(await read(cluster.url, seen.adminToken, `/${CUSTOMER}/gateways/${seen.gateway.id}`)).toEqual(seen.answers.gateway);
    expect(await read(cluster.url, seen.adminToken, `/${CUSTOMER}/gateways/${seen.deletedGatewayId}`)).toEqual(seen.answers['deleted gateway']);
    expect(seen.answers['deleted gateway']!.status).toBe(404);
    // The gateway's commands: one still QUEUED (its gateway gets it from the cluster), one CANCELED.
    const commands = await read(cluster.url, seen.adminToken, `/${CUSTOMER}/gateways/${seen.gateway.id}/commands`);
    expect(commands).toEqual(seen.answers['gateway commands']);
    expect((JSON.parse(commands.text) as { items: { status: string }[] }).items.map((c) => c.status)).toEqual(['CANCELED', 'QUEUED']);
    // Events: the same pages and tokens, except the one NUL that PostgreSQL holds as U+FFFD.
    const pages = (await eventPages(cluster.url, seen.adminToken)).join('\n');
    expect(seen.answers['event pages']!.text).toContain('nul\\u0000inside');
    expect(pages).toBe(seen.answers['event pages']!.text.replace('nul\\u0000inside', 'nul\uFFFDinside'));
    expect(pages.split('\n')).toHaveLength(3);
    const gatewayEvents = await read(cluster.url, seen.adminToken, `/${CUSTOMER}/events?${RANGE}&gateway_id=${seen.gateway.id}`);
    expect(gatewayEvents).toEqual({ ...seen.answers['gateway events']!, text: seen.answers['gateway events']!.text.replace('nul\\u0000inside', 'nul\uFFFDinside') });

    // The export's file and the asset's file come from the blob directory through new links.
    const admin = new ApiClient(cluster.url, seen.adminToken);
    // The retention period came along (the instance's first pass has since recorded a deletion of its own).
    expect(await admin.get(`/${CUSTOMER}/retention`)).toMatchObject({ events_days: 365, last_deletion: { deleted: 0 } });
    const task = await admin.get<{ status: string; download_link: string }>(`/${CUSTOMER}/events/export/tasks/${seen.exportTask}`);
    expect(task.status).toBe('SUCCESSFUL');
    expect((await call(task.download_link, 'GET', '')).text).toBe(seen.exportCsv);
    const { download_url } = await admin.post<{ download_url: string }>(`/${CUSTOMER}/generate-download-url`, {
      eula_version: '1',
      asset_type: 'CONNECT_ANDROID_APP',
      agreed_by: ADMIN_EMAIL,
    });
    expect(Buffer.from(await (await fetch(download_url)).arrayBuffer())).toEqual(seen.asset);
    // The export the stopped box left PENDING is not held by its lease: the cluster runs it, with the same rows.
    const pending = await waitForExport(admin, seen.pendingExport);
    expect(pending.status).toBe('SUCCESSFUL');
    expect((await call(pending.download_link!, 'GET', '')).text).toBe(seen.exportCsv.replace('nul\u0000inside', 'nul\uFFFDinside'));

    // The dead letter kept its seq and bytes.
    const clusterOperator = ['operator', '--data-dir', join(root, 'instance-1'), '--database', database, '--blob-dir', blobDir];
    const deadLetters = await runCli([...clusterOperator, 'dead-letters', 'list'], { env: KEY_ENV });
    expect(deadLetters).toEqual({ code: 0, stdout: seen.deadLetters, stderr: '' });
    // Numbering goes on after the copied rows: a new asset version is registered (seq 2) and becomes the default.
    const eulaFile = join(root, 'eula.txt');
    const next = await runCli([...clusterOperator, 'assets', 'add', '--type', 'CONNECT_ANDROID_APP', '--version', '1.1.0', '--eula-version', '1', '--eula-file', eulaFile, eulaFile], {
      env: KEY_ENV,
    });
    expect(next.code).toBe(0);
    const { items: assets } = await admin.get<{ items: { asset_version: string; default: boolean }[] }>(`/${CUSTOMER}/assets`);
    expect(assets.map((a) => [a.asset_version, a.default])).toEqual([['1.1.0', true], ['1.0.0', false]]);

    // The gateway's old certificate (same CA) connects to the new instance, and what it publishes is stored.
    const moved = { ...seen.gateway, endpoint: `mqtts://127.0.0.1:${cluster.mqttPort}` };
    const mqtt = await connectGateway(moved);
    const id = randomUUID();
    await mqtt.publishAsync(moved.topic, JSON.stringify({ id, type: 'scan', created: BASE + 7, scan_code: 'after the move' }), { qos: 1 });
    await mqtt.endAsync();
    const after = JSON.parse((await read(cluster.url, seen.adminToken, `/${CUSTOMER}/events?${RANGE}&limit=500`)).text) as { items: { id: string }[] };
    expect(after.items.map((item) => item.id)[0]).toBe(id);
    expect(after.items).toHaveLength(seen.eventCount + 1);
  }, 60_000);

  it('copies every table and column that both stores keep (a new one fails here until migrate copies it)', async () => {
    const database = await freshDatabase();
    const store = await openStore({ kind: 'postgres', url: database, masterKey: new Uint8Array(Buffer.from(TEST_MASTER_KEY, 'base64')) }, 'server');
    await store.close();
    const columns = await pgQuery<{ table_name: string; column_name: string }>(
      database,
      // leases, gateway_presence: which instance holds what and has which gateways connected now, nothing a stopped SQLite deployment has.
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT IN ('schema_migrations', 'secrets', 'leases', 'gateway_presence')",
    );
    const copied = Object.fromEntries(COPIED_TABLES.map((t) => [t.name, [...t.columns].sort()]));
    const inPostgres: Record<string, string[]> = {};
    for (const { table_name, column_name } of columns) (inPostgres[table_name] ??= []).push(column_name);
    // PostgreSQL numbers events in commit order as they are written (tx, seq: migration 0008); copied rows get new ones.
    expect(Object.fromEntries(Object.entries(inPostgres).map(([table, names]) => [table, names.sort()]))).toEqual({ ...copied, events: [...copied.events!, 'seq', 'tx'].sort() });
    const db = new Database(join(dataDir, 'scanhub.db'), { readonly: true });
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> 'schema_migrations'").pluck().all() as string[];
    const inSqlite = Object.fromEntries(tables.map((table) => [table, (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name).sort()]));
    db.close();
    // SQLite numbers events by their rowid (seq), kept above the largest deleted (event_seq_mark, migration 0013): its own bookkeeping.
    expect(inSqlite).toEqual({ ...copied, events: [...copied.events!, 'seq'].sort(), ...Object.fromEntries(SQLITE_ONLY_TABLES.map((table) => [table, ['id', 'seq']])) });
  });

  it('refuses a target that is not empty: exit 2, one line, the target unchanged', async () => {
    const database = await freshDatabase();
    const added = await runCli(['operator', '--database', database, 'customers', 'add', 'other', '--admin-email', 'ops@other.example', '--password-stdin'], {
      env: KEY_ENV,
      input: 'other-password-123\n',
    });
    expect(added.code).toBe(0);
    const before = await pgCounts(database);
    expect(await migrate(['--data-dir', dataDir, '--database', database])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: the PostgreSQL database is not empty (rows in customers, users, audit_log): migrate into a new, empty database\n',
    });
    expect(await pgCounts(database)).toEqual(before);
    // The customer and its administrator, and the audit entry of that creation.
    expect(before).toEqual({ ...EMPTY, customers: 1, users: 1, audit_log: 1 });
  });

  it('refuses a database it cannot reach or that does not exist: exit 2, one line', async () => {
    const missing = withDatabase(TEST_DATABASE_URL!, 'scanhub_no_such_database');
    expect(await migrate(['--data-dir', dataDir, '--database', missing])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: cannot connect to the PostgreSQL database of --database: database "scanhub_no_such_database" does not exist\n',
    });
    const refused = await migrate(['--data-dir', dataDir, '--database', 'postgresql://scanhub@127.0.0.1:1/scanhub']);
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: cannot connect to the PostgreSQL database of --database: connect ECONNREFUSED 127.0.0.1:1\n',
    });
    expect(await migrate(['--data-dir', dataDir, '--database', 'mysql://db.example.com/scanhub'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --database: "mysql://db.example.com/scanhub" is not a PostgreSQL connection string (postgres://... or postgresql://...).\n',
    });
  });

  it('refuses while serve runs on the data directory: exit 2, one line, nothing written', async () => {
    const database = await freshDatabase();
    const live = await serve(['--data-dir', dataDir]);
    expect(await migrate(['--data-dir', dataDir, '--database', database])).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: the data directory ${dataDir} is in use by scanhub serve (pid ${live.process.child.pid}): stop it first, migrate copies a stopped deployment\n`,
    });
    expect(await pgCounts(database)).toEqual(EMPTY);
    expect(await pgQuery(database, "SELECT to_regclass('schema_migrations') AS t")).toEqual([{ t: null }]);
    expect(await stop(live.process)).toEqual({ code: 0, signal: null });
  });

  it('refuses without a master key or without --database: exit 2, one line', async () => {
    const database = await freshDatabase();
    expect(await migrate(['--data-dir', dataDir, '--database', database], {})).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'scanhub: PostgreSQL mode needs a master key to encrypt the secrets it stores: make one with `scanhub operator master-key` and pass it as SCANHUB_MASTER_KEY or in a file with --master-key-file.\n',
    });
    expect(await migrate(['--data-dir', dataDir])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: operator migrate needs --database URL (or SCANHUB_DATABASE_URL): the empty PostgreSQL database to copy into\n',
    });
    expect(await pgCounts(database)).toEqual(EMPTY);
  });

  it('refuses a data directory without a scanhub database, and one that does not exist (not creating it): exit 2, one line', async () => {
    const database = await freshDatabase();
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const missing = join(root, 'missing');
    for (const dir of [empty, missing]) {
      expect(await migrate(['--data-dir', dir, '--database', database])).toEqual({
        code: 2,
        stdout: '',
        stderr: `scanhub: no scanhub database in ${dir} (no scanhub.db): give --data-dir of the deployment to migrate\n`,
      });
    }
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
    expect(await pgCounts(database)).toEqual(EMPTY);
  });

  it('refuses a --blob-dir that holds another file under the name of one to copy: exit 2, one line, nothing written', async () => {
    const database = await freshDatabase();
    const blobDir = join(root, 'blobs-taken');
    const [exportFile] = readdirSync(join(dataDir, 'exports'));
    mkdirSync(join(blobDir, 'exports'), { recursive: true });
    writeFileSync(join(blobDir, 'exports', exportFile!), 'another file\n');
    expect(await migrate(['--data-dir', dataDir, '--database', database, '--blob-dir', blobDir])).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: --blob-dir ${blobDir} holds exports/${exportFile} with other content than ${join(dataDir, 'exports', exportFile!)}: give an empty blob directory\n`,
    });
    expect(readdirSync(join(blobDir))).toEqual(['exports']);
    expect(await pgCounts(database)).toEqual(EMPTY);
  });

  it('a failure in the middle of the copy leaves the database empty and the blob directory as it was; a second run then succeeds', async () => {
    const database = await freshDatabase();
    // The schema first, then a trigger that refuses the rows of a table copied late (after events).
    const store = await openStore({ kind: 'postgres', url: database, masterKey: new Uint8Array(Buffer.from(TEST_MASTER_KEY, 'base64')) }, 'server');
    await store.close();
    await pgQuery(
      database,
      `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
       CREATE TRIGGER refuse BEFORE INSERT ON dead_letters FOR EACH ROW EXECUTE FUNCTION refuse();`,
    );
    const blobDir = join(root, 'blobs-failed');
    expect(await migrate(['--data-dir', dataDir, '--database', database, '--blob-dir', blobDir])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'scanhub: the migration failed and nothing was stored in PostgreSQL: refused by the test\n',
    });
    expect(await pgCounts(database)).toEqual(EMPTY);
    expect(existsSync(join(blobDir, 'exports')) ? readdirSync(join(blobDir, 'exports')) : []).toEqual([]);

    await pgQuery(database, 'DROP TRIGGER refuse ON dead_letters');
    const second = await migrate(['--data-dir', dataDir, '--database', database]);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`The export, asset and package files stay in ${dataDir} (exports/, assets/, packages/)`);
    const { secrets, ...copied } = await pgCounts(database);
    expect(copied).toEqual(sqliteCounts(dataDir));
    expect(secrets).toBe(4);
  });
});
