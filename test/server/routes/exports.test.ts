import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { countRows, insertEvents } from '../../helpers/store-rows.js';
import { call } from '../../helpers/http.js';
import { hashPassword } from '../../../src/auth/passwords.js';
import { ApiClient, ApiError } from '../../../src/client/api.js';
import { EXPORT_LINK_MS, Exporter } from '../../../src/export/exporter.js';
import { splitRange } from '../../../src/export/parts.js';
import { startServer } from '../../../src/serve/start.js';
import { SqliteExportTasks } from '../../../src/store/sqlite/export-tasks.js';
import { applyMigrations, migrations } from '../../../src/store/sqlite/migrations/index.js';
import { openStore, sqliteLocator } from '../../../src/store/open.js';
import { eventRow, oldestFirst } from '../../helpers/events.js';
import { exportFixture } from '../../helpers/fixtures.js';
import { CUSTOMER, TEST_PASSWORD_COST, startTestServer, type TestServer } from '../../helpers/server.js';
import { ownDatabase } from '../../helpers/test-store.js';

const START = Date.UTC(2024, 4, 2, 0, 0, 0);
const DAY = 24 * 3600 * 1000;
const fixture = exportFixture();

interface Task {
  task: string;
  completed: boolean;
  status: string;
  download_link?: string;
}

let now = START;
let t: TestServer;
let other: ApiClient;

/** Status and body of a refused call. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; body: object }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, body: { title: error.title, details: error.details } };
    throw error;
  }
  throw new Error('the call was accepted');
}

async function download(link: string): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(link);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

beforeAll(async () => {
  t = await startTestServer({ clock: () => now });
  await insertEvents(t.server, CUSTOMER, fixture.rows);
  // A second customer with its own administrator, for the 404 across customers.
  const ctx = t.server.ctx;
  const admin = { id: randomUUID(), customer_id: 'other', email: 'admin@other.example', roles: ['ADMIN_ROLE'], password_hash: await hashPassword('other-password-123', TEST_PASSWORD_COST), created: now };
  await ctx.store.customers.createWithAdmin('other', admin, now);
  other = new ApiClient(t.url, await t.login('admin@other.example', 'other-password-123'));
});
afterAll(async () => t.close());
afterEach(() => {
  now = START;
});

/** A client of the administrator logged in at the current (injected) time: tokens live an hour. */
async function adminNow(): Promise<ApiClient> {
  return new ApiClient(t.url, await t.login('admin@example.com', 'admin-password-123'));
}

/** Where two long texts first differ, with some context; undefined when equal. */
function firstDifference(actual: string, expected: string): object | undefined {
  if (actual === expected) return undefined;
  let at = 0;
  while (at < Math.min(actual.length, expected.length) && actual[at] === expected[at]) at++;
  return { at, lengths: [actual.length, expected.length], actual: actual.slice(at - 40, at + 80), expected: expected.slice(at - 40, at + 80) };
}

const range = { start_time_millis: fixture.start, end_time_millis: fixture.end };

describe('GET /{customer_id}/events/export', () => {
  it('writes the CSV of the range, oldest first, and links to it for 5 minutes', async () => {
    const response = await t.admin.request<{ download_link: string }>('GET', `/${CUSTOMER}/events/export`, { query: range });
    expect(response.status).toBe(201);
    const link = new URL(response.body.download_link);
    expect(link.origin).toBe(t.url);
    expect(link.pathname).toMatch(/^\/downloads\/exports\/[0-9a-f-]{36}\.csv$/);
    expect(link.searchParams.get('expires')).toBe(String(now + 5 * 60 * 1000));

    const file = await download(response.body.download_link);
    expect(file.status).toBe(200);
    expect(file.text).toBe(fixture.csv);
    const name = link.pathname.split('/').pop()!;
    expect(file.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(file.headers.get('content-length')).toBe(String(Buffer.byteLength(fixture.csv)));
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="${name}"; filename*=UTF-8''${name}`);
    // Written under a temporary name and renamed: nothing partial is left behind.
    expect(readdirSync(join(t.dataDir, 'exports')).filter((f) => !f.endsWith('.csv'))).toEqual([]);
  });

  it('exports the last 24 hours by default', async () => {
    // Now is the end of the fixture range: the event at now is out, the one a millisecond before the range is in.
    now = fixture.end;
    const { download_link } = await (await adminNow()).get<{ download_link: string }>(`/${CUSTOMER}/events/export`);
    const [header, ...records] = fixture.csv.split(/\r\n(?=00000000-)/);
    const before = '00000000-0000-4000-8000-000000000010,event,scan,1714557599999,before the start of the range: outside it,,,,,,,,,,';
    expect((await download(download_link)).text).toBe([header, before, ...records].join('\r\n'));
  });

  it('writes cells as stored with cells=raw, and safe ones with cells=safe', async () => {
    const raw = await t.admin.get<{ download_link: string }>(`/${CUSTOMER}/events/export`, { ...range, cells: 'raw' });
    expect((await download(raw.download_link)).text).toBe(fixture.rawCsv);
    const safe = await t.admin.get<{ download_link: string }>(`/${CUSTOMER}/events/export`, { ...range, cells: 'safe' });
    expect((await download(safe.download_link)).text).toBe(fixture.csv);
  });

  it.each(['RAW', 'unsafe', ''])('refuses cells=%j with 400 naming the parameter', async (cells) => {
    expect(await refusal(t.admin.get(`/${CUSTOMER}/events/export`, { ...range, cells }))).toEqual({
      status: 400,
      body: { title: 'Bad Request', details: 'Query parameter "cells" must be one of safe, raw.' },
    });
  });

  it.each([
    [{ start_time_millis: 10, end_time_millis: 5 }, 'Query parameter "start_time_millis" (10) is after "end_time_millis" (5): the range must not end before it starts.'],
    [{ start_time_millis: 'soon' }, 'Query parameter "start_time_millis" must be integer.'],
    [{ limit: 5 }, 'Unknown query parameter "limit": it is not part of this call.'],
  ])('refuses %j with 400', async (query, details) => {
    expect(await refusal(t.admin.get(`/${CUSTOMER}/events/export`, query))).toEqual({ status: 400, body: { title: 'Bad Request', details } });
    expect(await refusal(t.admin.post(`/${CUSTOMER}/events/export/tasks`, undefined, query))).toEqual({ status: 400, body: { title: 'Bad Request', details } });
  });
});

describe('export tasks', () => {
  it('move from PENDING to SUCCESSFUL and link to the file, with a new link on every call', async () => {
    // Enough events that the export is still running when the first poll arrives.
    const bulk = Array.from({ length: 100_000 }, (_, i) => eventRow({ created: fixture.end + 1000 + i, scan_code: `bulk ${i}` }));
    await insertEvents(t.server, CUSTOMER, bulk);
    const query = { start_time_millis: fixture.end + 1000, end_time_millis: fixture.end + 1000 + bulk.length };
    const accepted = await t.admin.request<{ task: string; requested: string }>('POST', `/${CUSTOMER}/events/export/tasks`, { query });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ task: expect.stringMatching(/^[0-9a-f-]{36}$/), requested: new Date(now).toISOString() });
    expect(accepted.headers.location).toBe(`/${CUSTOMER}/events/export/tasks/${accepted.body.task}`);
    const path = `/${CUSTOMER}/events/export/tasks/${accepted.body.task}`;

    expect(await t.admin.get<Task>(path)).toEqual({ task: accepted.body.task, completed: false, status: 'PENDING' });
    await t.server.ctx.exporter.finished((await t.server.ctx.store.exportTasks.byId(CUSTOMER, accepted.body.task))!);

    const done = await t.admin.get<Task>(path);
    expect(done).toEqual({ task: accepted.body.task, completed: true, status: 'SUCCESSFUL', download_link: expect.any(String) });
    now += 1000;
    const again = await (await adminNow()).get<Task>(path);
    expect(again.download_link).not.toBe(done.download_link);
    expect(new URL(again.download_link!).searchParams.get('expires')).toBe(String(now + 5 * 60 * 1000));

    const text = (await download(again.download_link!)).text;
    const header = fixture.csv.split('\r\n')[0] + '\r\n';
    const bulkCsv = bulk.map((row) => `${row.id},event,scan,${row.created},bulk ${row.created - fixture.end - 1000},,,,,,,,,,\r\n`).join('');
    expect(firstDifference(text, header + bulkCsv)).toBeUndefined();
  });

  it('are 404 to another customer, and an unknown task is 404', async () => {
    const { task } = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`, undefined, range);
    const notFound = (id: string) => ({ status: 404, body: { title: 'Not Found', details: `Export task "${id}" does not exist.` } });
    expect(await refusal(other.get(`/other/events/export/tasks/${task}`))).toEqual(notFound(task));
    expect(await refusal(t.admin.get(`/${CUSTOMER}/events/export/tasks/no-such-task`))).toEqual(notFound('no-such-task'));
    const { task: theirs } = await other.post<{ task: string }>(`/other/events/export/tasks`);
    expect(await refusal(t.admin.get(`/${CUSTOMER}/events/export/tasks/${theirs}`))).toEqual(notFound(theirs));
    expect(await refusal(other.get(`/${CUSTOMER}/events/export/tasks/${task}`))).toMatchObject({ status: 403 });
  });

  it('write cells as stored with a body of cells "raw", safe ones with "safe", {} or no body', async () => {
    const exported = async (body: object | undefined) => {
      const { task } = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`, body, range);
      const record = await t.server.ctx.exporter.finished((await t.server.ctx.store.exportTasks.byId(CUSTOMER, task))!);
      // The task's representation is that of spec 2.8: its parameters are not part of it.
      expect(await t.admin.get<Task>(`/${CUSTOMER}/events/export/tasks/${task}`)).toEqual({ task, completed: true, status: 'SUCCESSFUL', download_link: expect.any(String) });
      return { cells: record.cells, csv: readFileSync(join(t.dataDir, record.file!), 'utf8') };
    };
    expect(await exported({ cells: 'raw' })).toEqual({ cells: 'raw', csv: fixture.rawCsv });
    expect(await exported({ cells: 'safe' })).toEqual({ cells: 'safe', csv: fixture.csv });
    expect(await exported({})).toEqual({ cells: 'safe', csv: fixture.csv });
    expect(await exported(undefined)).toEqual({ cells: 'safe', csv: fixture.csv });
  });

  it.each([
    [{ cells: 'RAW' }, 'Body field "cells" must be one of safe, raw.'],
    [{ cells: true }, 'Body field "cells" must be string.'],
    [{ cells: null }, 'Body field "cells" must be string.'],
    // The range goes in the query: one sent in the body would otherwise silently export the default day.
    [{ start_time_millis: 1 }, 'Unknown body field "start_time_millis": it is not part of this call.'],
    [['raw'], 'The request body must be a JSON object.'],
  ])('refuse the body %j with 400 naming the field', async (body, details) => {
    const tasks = () => countRows(t, 'export_tasks');
    const before = await tasks();
    expect(await refusal(t.admin.post(`/${CUSTOMER}/events/export/tasks`, body, range))).toEqual({ status: 400, body: { title: 'Bad Request', details } });
    expect(await tasks()).toBe(before);
  });

  it('refuse cells in the query: it is a field of the body', async () => {
    expect(await refusal(t.admin.post(`/${CUSTOMER}/events/export/tasks`, undefined, { ...range, cells: 'raw' }))).toEqual({
      status: 400,
      body: { title: 'Bad Request', details: 'Unknown query parameter "cells": it is not part of this call.' },
    });
  });

  it('hand out links for 24 hours; once the last link expired, the sweeper deletes the file and the task', async () => {
    const { task } = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`, undefined, range);
    const record = await t.server.ctx.exporter.finished((await t.server.ctx.store.exportTasks.byId(CUSTOMER, task))!);
    const file = join(t.dataDir, 'exports', `${task}.csv`);
    expect(readFileSync(file, 'utf8')).toBe(fixture.csv);
    const completed = record.completed!;
    const path = `/${CUSTOMER}/events/export/tasks/${task}`;
    now = completed + DAY - 1;
    await t.server.ctx.exporter.sweep();
    expect(existsSync(file)).toBe(true);
    // The last link: valid 5 minutes from now, so the file stays until then.
    const lastLink = (await (await adminNow()).get<Task>(path)).download_link!;
    expect(lastLink).toEqual(expect.any(String));
    now = completed + DAY;
    expect(await (await adminNow()).get<Task>(path)).toEqual({ task, completed: true, status: 'SUCCESSFUL' });
    now = completed + DAY + EXPORT_LINK_MS - 2;
    expect((await download(lastLink)).text).toBe(fixture.csv);
    now = completed + DAY + EXPORT_LINK_MS - 1;
    expect((await download(lastLink)).status).toBe(403);
    await t.server.ctx.exporter.sweep();
    expect(existsSync(file)).toBe(true);
    now = completed + DAY + EXPORT_LINK_MS;
    await t.server.ctx.exporter.sweep();
    expect(existsSync(file)).toBe(false);
    expect(await refusal((await adminNow()).get<Task>(path))).toEqual({ status: 404, body: { title: 'Not Found', details: `Export task "${task}" does not exist.` } });
  });

  it('a FAILED task is deleted a day and five minutes after it completed; a PENDING one never', async () => {
    // A database of its own with an exporter that claims nothing: the test completes the tasks itself.
    const database = await ownDatabase();
    try {
      const store = await database.open();
      await store.customers.createWithAdmin(CUSTOMER, { id: randomUUID(), customer_id: CUSTOMER, email: 'admin@example.com', roles: ['ADMIN_ROLE'], created: 0 }, 0);
      const exporter = new Exporter({ store, dataDir: database.dataDir, clock: () => now, concurrency: 0 });
      const task = (id: string) => ({ id, customer_id: CUSTOMER, requested_by: 'u', start_time: 0, end_time: 1, cells: 'safe' as const, requested: now });
      await store.exportTasks.create(task('failed'));
      await store.exportTasks.create(task('pending'));
      expect((await store.exportTasks.claim('the-test', Date.now(), 60_000))?.id).toBe('failed');
      expect(await store.exportTasks.fail('failed', 'the-test', now, 'it failed')).toBe(true);
      now += DAY + EXPORT_LINK_MS - 1;
      expect(await exporter.sweep()).toBe(0);
      expect(await store.exportTasks.byId(CUSTOMER, 'failed')).toMatchObject({ status: 'FAILED' });
      now += 1;
      expect(await exporter.sweep()).toBe(1);
      expect(await store.exportTasks.byId(CUSTOMER, 'failed')).toBeUndefined();
      now += 365 * DAY;
      expect(await exporter.sweep()).toBe(0);
      expect(await store.exportTasks.byId(CUSTOMER, 'pending')).toMatchObject({ status: 'PENDING' });
      await exporter.close();
    } finally {
      await database.close();
    }
  });
});

describe('exports in flight per customer', () => {
  let held: TestServer;
  beforeAll(async () => {
    // No export runs on this server: every task stays PENDING.
    held = await startTestServer({ exportConcurrency: 0 });
  });
  afterAll(() => held?.close());

  it('4 at once, counted across concurrent requests: the others are 429 with Retry-After, nothing stored or audited for them', async () => {
    const answers = await Promise.all(
      Array.from({ length: 7 }, () => call(held.url, 'POST', `/${CUSTOMER}/events/export/tasks`, { token: held.adminToken })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 202, 202, 202, 429, 429, 429]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect({ body: refused.body, retryAfter: refused.headers['retry-after'] }).toEqual({
      body: { title: 'Too Many Requests', details: `Customer "${CUSTOMER}" has 4 exports in flight, as many as it may: retry once one of them has finished.` },
      retryAfter: '5',
    });
    // The synchronous export is a task too.
    expect((await call(held.url, 'GET', `/${CUSTOMER}/events/export`, { token: held.adminToken })).status).toBe(429);
    expect(await countRows(held, 'export_tasks')).toBe(4);
    const audit = await held.admin.get<{ items: { action: string }[] }>(`/${CUSTOMER}/audit-log?action=export.created`);
    expect(audit.items).toHaveLength(4);
  });
});

describe('exports written in parts', () => {
  it('cut the range into spans that cover it exactly', () => {
    expect(splitRange({ start: 100, end: 110 }, 3)).toEqual([
      { start: 100, end: 103 },
      { start: 103, end: 106 },
      { start: 106, end: 110 },
    ]);
    expect(splitRange({ start: 5, end: 5 }, 2)).toEqual([
      { start: 5, end: 5 },
      { start: 5, end: 5 },
    ]);
    expect(splitRange({ start: 0, end: 8_640_000_000_000_000 }, 2)).toEqual([
      { start: 0, end: 4_320_000_000_000_000 },
      { start: 4_320_000_000_000_000, end: 8_640_000_000_000_000 },
    ]);
  });

  it('give the same file in 1, 2 or 3 parts: one header, every event once, oldest first, across the cuts', async () => {
    // Events on both sides of each cut of [0, 3000) into three, many in the cut's millisecond, and an empty middle part.
    const rows = [0, 999, 1000, 1000, 1000, 1999, 2000, 2000, 2999].map((created, i) => eventRow({ created: START + created, scan_code: `code ${i}, "${created}"` }));
    rows.push(...Array.from({ length: 40 }, (_, i) => eventRow({ created: START + 2000, device_id: `same-ms-${i}` })));
    const noon = rows.filter((row) => row.created !== START + 1999 && row.created !== START + 1000).map((row) => ({ ...row, id: randomUUID() }));
    // A database of its own: the server's exporter claims every task of its database.
    const database = await ownDatabase();
    try {
      const store = await database.open();
      for (const customer of ['parts', 'noon']) {
        await store.customers.createWithAdmin(customer, { id: randomUUID(), customer_id: customer, email: `admin@${customer}.example`, roles: ['ADMIN_ROLE'], created: 0 }, 0);
      }
      await store.events.insert('parts', rows);
      await store.events.insert('noon', noon);
      const exported = async (customer: string, parts: number) => {
        const exporter = new Exporter({ store, dataDir: database.dataDir, clock: () => now, parts });
        const task = await exporter.finished(await exporter.request(customer, 'user', { start: START, end: START + 3000 }));
        await exporter.close();
        expect(task).toMatchObject({ status: 'SUCCESSFUL' });
        expect(readdirSync(join(database.dataDir, 'exports')).filter((f) => f.includes('partial'))).toEqual([]);
        return { rows: task.rows, csv: readFileSync(join(database.dataDir, task.file!), 'utf8') };
      };
      const whole = await exported('parts', 1);
      expect(whole.rows).toBe(49);
      const lines = whole.csv.split(/\r\n(?=[0-9a-f]{8}-)/);
      expect(lines).toHaveLength(50);
      expect(lines.slice(1).map((line) => line.slice(0, 36))).toEqual(oldestFirst(rows).map((row) => row.id));
      expect(await exported('parts', 2)).toEqual(whole);
      expect(await exported('parts', 3)).toEqual(whole);
      // A part with no events at all (the middle third here) adds nothing.
      const sparse = (await exported('noon', 3)).csv;
      const sparseIds = sparse.split(/\r\n(?=[0-9a-f]{8}-)/).slice(1).map((line) => line.slice(0, 36));
      expect(sparseIds).toEqual(oldestFirst(noon).map((row) => row.id));
    } finally {
      await database.close();
    }
  });
});

describe('a failed export part', () => {
  it('fails the task, removes every part file, and the exporter goes on with the next task', async () => {
    const database = await ownDatabase();
    try {
      const store = await database.open();
      await store.customers.createWithAdmin(CUSTOMER, { id: randomUUID(), customer_id: CUSTOMER, email: 'admin@example.com', roles: ['ADMIN_ROLE'], created: 0 }, 0);
      const options = { dataDir: database.dataDir, clock: () => now, parts: 2, concurrency: 1 };
      // The workers open the store by its locator: this database file does not exist.
      const locator = { kind: 'sqlite' as const, file: join(database.dataDir, 'no-such.db'), dataDir: database.dataDir };
      const broken = new Exporter({ ...options, store: { exportTasks: store.exportTasks, locks: store.locks, locator } });
      // Two tasks, one at a time: the second runs (and fails) after the first failed.
      const first = await broken.request(CUSTOMER, 'user', { start: fixture.start, end: fixture.end });
      const second = await broken.request(CUSTOMER, 'user', { start: fixture.start, end: fixture.end });
      const [task, next] = await Promise.all([broken.finished(first), broken.finished(second)]);
      await broken.close();
      expect(task).toMatchObject({ status: 'FAILED', file: null });
      expect(task.failure).toMatch(/^writing .*\.csv\.partial failed: SQLITE_CANTOPEN: unable to open database file$/);
      expect(next).toMatchObject({ status: 'FAILED', file: null });
      expect(readdirSync(join(database.dataDir, 'exports'))).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

describe('export tasks across a restart (SQLite: one process per data directory)', () => {
  it('run again from the beginning when left PENDING, lose the partial files of the dead run, and have old files swept at start-up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-test-'));
    let clock = START;
    const options = {
      dataDir,
      host: '127.0.0.1',
      port: 0,
      mqttPort: 0,
      customerId: CUSTOMER,
      adminEmail: 'admin@example.com',
      adminPassword: 'admin-password-123',
      clock: () => clock,
    };
    try {
      const first = await startServer(options);
      const admin = (await first.ctx.store.users.byEmail('admin@example.com'))!;
      const finished = await first.ctx.exporter.request(CUSTOMER, admin.id, { start: 0, end: 1 });
      await first.ctx.exporter.finished(finished);
      await first.close();

      // What a process killed while exporting leaves: a task PENDING under its lease, and its partial file.
      const store = await openStore(sqliteLocator(dataDir), 'server');
      const abandoned = (await store.exportTasks.create({ id: 'abandoned', customer_id: CUSTOMER, requested_by: admin.id, start_time: 0, end_time: 1, cells: 'safe', requested: clock }))!;
      expect(await store.exportTasks.claim('a-process-that-was-killed', Date.now(), 3_600_000)).toMatchObject({ id: 'abandoned', attempts: 1 });
      await store.close();
      writeFileSync(join(dataDir, 'exports', 'abandoned.a1.csv.partial'), 'id,cl');

      clock = START + DAY + EXPORT_LINK_MS + 1;
      const second = await startServer(options);
      try {
        expect(await second.ctx.exporter.finished(abandoned)).toMatchObject({ status: 'SUCCESSFUL', rows: 0, completed: clock, file: 'exports/abandoned.csv' });
        expect(await second.ctx.store.exportTasks.byId(CUSTOMER, finished.id)).toBeUndefined();
        expect(readdirSync(join(dataDir, 'exports'))).toEqual(['abandoned.csv']);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('migration 0006_export_cells', () => {
  it('says raw for the tasks of earlier versions (their files were written as stored) and keeps the mode of new ones', async () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)');
      for (const migration of migrations.filter((m) => m.name < '0006')) {
        migration.up(db);
        db.prepare('INSERT INTO schema_migrations VALUES (?, 0)').run(migration.name);
      }
      db.exec(`INSERT INTO customers (id, created) VALUES ('c', 0)`);
      db.exec(`INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, status, requested) VALUES ('old', 'c', 'u', 0, 1, 'SUCCESSFUL', 0)`);
      expect(applyMigrations(db)).toEqual(migrations.filter((m) => m.name >= '0006').map((m) => m.name));
      expect(db.prepare(`SELECT cells FROM export_tasks WHERE id = 'old'`).pluck().get()).toBe('raw');
      const tasks = new SqliteExportTasks(db);
      const task = { customer_id: 'c', requested_by: 'u', start_time: 0, end_time: 1, requested: 0 };
      expect((await tasks.create({ ...task, id: 'new', cells: 'safe' }))?.cells).toBe('safe');
      await expect(tasks.create({ ...task, id: 'bad', cells: 'unsafe' as 'safe' })).rejects.toThrow(/CHECK constraint failed/);
    } finally {
      db.close();
    }
  });
});
