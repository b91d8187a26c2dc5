// Export tasks claimed with a lease, and clean-ups under a lock (DESIGN.md "Scale-out"), on both
// stores: two Store objects opened on one database stand for two `serve` instances.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXPORT_MAX_ATTEMPTS, Exporter, type ExporterOptions, type ExportLog } from '../../src/export/exporter.js';
import type { ExportTaskRepository, NewExportTask, Store } from '../../src/store/ports/index.js';
import { exportFixture } from '../helpers/fixtures.js';
import { describePostgres } from '../helpers/postgres.js';
import { ownDatabase, type OwnDatabase } from '../helpers/test-store.js';

const CUSTOMER = 'acme';
const T0 = Date.UTC(2024, 4, 2);
const fixture = exportFixture();
/** A lease short enough that a test sees it end, long enough that a running export renews it in time. */
const SHORT_LEASE = { leaseMs: 400, renewMs: 100, pollMs: 25 };

function task(id: string, requested = T0): NewExportTask {
  return { id, customer_id: CUSTOMER, requested_by: 'u', start_time: fixture.start, end_time: fixture.end, cells: 'safe', requested };
}

/** A log that keeps its lines and says when one with a message arrives. */
function recordingLog(): ExportLog & { lines: { msg: string; task?: string }[]; when(msg: string): Promise<void> } {
  const lines: { msg: string; task?: string }[] = [];
  const waiting: { msg: string; resolve: () => void }[] = [];
  const record = (obj: object, msg: string) => {
    lines.push({ msg, ...(obj as { task?: string }) });
    for (const waiter of waiting.filter((w) => w.msg === msg)) waiter.resolve();
  };
  return {
    lines,
    info: record,
    error: record,
    when: (msg) => (lines.some((line) => line.msg === msg) ? Promise.resolve() : new Promise((resolve) => waiting.push({ msg, resolve }))),
  };
}

/** The repository with some methods replaced, the others its own. */
function replacing(tasks: ExportTaskRepository, methods: Partial<ExportTaskRepository>): ExportTaskRepository {
  return new Proxy(tasks, {
    get: (target, key) => (methods as Record<string | symbol, unknown>)[key] ?? (Reflect.get(target, key) as (...args: unknown[]) => unknown).bind(target),
  });
}

function leaseSuite(kind: 'sqlite' | 'postgres'): void {
  let database: OwnDatabase;
  let a: Store;
  let b: Store;
  const exporters: Exporter[] = [];

  beforeEach(async () => {
    database = await ownDatabase(kind);
    [a, b] = [await database.open(), await database.open()];
    const admin = { id: randomUUID(), customer_id: CUSTOMER, email: 'admin@example.com', roles: ['ADMIN_ROLE'], created: T0 };
    expect(await a.customers.createWithAdmin(CUSTOMER, admin, T0)).toBe('created');
  });
  afterEach(async () => {
    await Promise.all(exporters.splice(0).map((exporter) => exporter.close()));
    await database.close();
  });

  /** An exporter of one instance, closed after the test. */
  function exporterOn(store: Pick<Store, 'exportTasks' | 'locks' | 'locator'>, options: Partial<ExporterOptions> = {}): Exporter {
    const exporter = new Exporter({ store, dataDir: database.dataDir, clock: () => T0 + 1000, parts: 2, ...options });
    exporters.push(exporter);
    return exporter;
  }

  describe('the repository', () => {
    it('claims the oldest free task (requested, then id), once, and again when its lease ended', async () => {
      await a.exportTasks.create(task('b', T0 + 1));
      await a.exportTasks.create(task('a', T0 + 2));
      await a.exportTasks.create(task('c', T0 + 1));
      const claimed = async (store: Store, owner: string, now: number) => {
        const got = await store.exportTasks.claim(owner, now, 100);
        return got && { id: got.id, attempts: got.attempts, status: got.status };
      };
      expect(await claimed(a, 'A', 1000)).toEqual({ id: 'b', attempts: 1, status: 'PENDING' });
      expect(await claimed(b, 'B', 1000)).toEqual({ id: 'c', attempts: 1, status: 'PENDING' });
      expect(await claimed(a, 'A', 1000)).toEqual({ id: 'a', attempts: 1, status: 'PENDING' });
      expect(await claimed(b, 'B', 1000)).toBeUndefined();
      // A lease ends after its last millisecond.
      expect(await claimed(b, 'B', 1100)).toBeUndefined();
      expect(await claimed(b, 'B', 1101)).toEqual({ id: 'b', attempts: 2, status: 'PENDING' });
      // The claimed record is the task as stored, with nothing of the lease but its attempts.
      expect(await a.exportTasks.byId(CUSTOMER, 'b')).toEqual({ ...task('b', T0 + 1), status: 'PENDING', completed: null, rows: null, file: null, failure: null });
    });

    it('gives each task to one of many claims racing on two instances', async () => {
      for (let i = 0; i < 10; i++) await a.exportTasks.create(task(`t${i}`, T0 + i));
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).exportTasks.claim(`owner-${i}`, 1000, 60_000)));
      const ids = claims.filter((claim) => claim !== undefined).map((claim) => claim.id);
      expect(ids.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
      expect(claims.filter((claim) => claim === undefined)).toHaveLength(10);
    });

    it('lets only the holder of the lease renew it and record an outcome: the loser of a takeover records nothing', async () => {
      await a.exportTasks.create(task('t'));
      expect((await a.exportTasks.claim('A', 0, 10))?.id).toBe('t');
      expect(await a.exportTasks.renew('t', 'A', 20)).toBe(true);
      expect((await b.exportTasks.claim('B', 21, 10))?.id).toBe('t');
      expect(await a.exportTasks.renew('t', 'A', 40)).toBe(false);
      expect(await a.exportTasks.succeed('t', 'A', T0 + 5, 1, 'exports/t.csv')).toBe(false);
      expect(await a.exportTasks.fail('t', 'A', T0 + 5, 'boom')).toBe(false);
      expect(await a.exportTasks.release('t', 'A')).toBe(false);
      expect(await a.exportTasks.byId(CUSTOMER, 't')).toMatchObject({ status: 'PENDING', completed: null });
      expect(await b.exportTasks.renew('t', 'B', 40)).toBe(true);
      expect(await b.exportTasks.succeed('t', 'B', T0 + 6, 7, 'exports/t.csv')).toBe(true);
      // Completed: nobody records again, not even the holder.
      expect(await b.exportTasks.fail('t', 'B', T0 + 7, 'late')).toBe(false);
      expect(await b.exportTasks.renew('t', 'B', 50)).toBe(false);
      expect(await a.exportTasks.byId(CUSTOMER, 't')).toMatchObject({ status: 'SUCCESSFUL', completed: T0 + 6, rows: 7, file: 'exports/t.csv', failure: null });
      expect(await a.exportTasks.claim('A', 1e6, 10)).toBeUndefined();
    });

    it('frees a released task at once, without counting the attempt', async () => {
      await a.exportTasks.create(task('t'));
      expect((await a.exportTasks.claim('A', 0, 60_000))?.attempts).toBe(1);
      expect(await a.exportTasks.release('t', 'A')).toBe(true);
      expect(await b.exportTasks.claim('B', 1, 60_000)).toMatchObject({ id: 't', attempts: 1 });
    });

    it(
      kind === 'sqlite'
        ? 'frees every lease at start-up (one process per data directory: their holder died)'
        : 'frees no lease at start-up (other instances may be running them)',
      async () => {
        await a.exportTasks.create(task('t'));
        await a.exportTasks.claim('a-process-that-died', 0, 1e12);
        expect(await b.exportTasks.releaseOrphaned()).toBe(kind === 'sqlite' ? 1 : 0);
        expect((await b.exportTasks.claim('B', 1, 100))?.id).toBe(kind === 'sqlite' ? 't' : undefined);
      },
    );

    it(kind === 'sqlite' ? 'runs locked work always (one process)' : 'runs locked work on one instance at a time; a lock is released when its work throws', async () => {
      let inner: unknown;
      const outer = await a.locks.tryRun('export-sweep', async () => {
        inner = await b.locks.tryRun('export-sweep', async () => 'b ran');
        return 'a ran';
      });
      expect(outer).toEqual({ ran: true, value: 'a ran' });
      expect(inner).toEqual(kind === 'sqlite' ? { ran: true, value: 'b ran' } : { ran: false });
      await expect(a.locks.tryRun('export-sweep', async () => Promise.reject(new Error('sweep failed')))).rejects.toThrow('sweep failed');
      expect(await b.locks.tryRun('export-sweep', async () => 'after')).toEqual({ ran: true, value: 'after' });
      expect(await a.locks.tryRun('export-sweep', async () => 'again')).toEqual({ ran: true, value: 'again' });
    });
  });

  describe('exporters', () => {
    it('of two instances run each task exactly once, whichever instance received it', async () => {
      await a.events.insert(CUSTOMER, fixture.rows);
      const [logA, logB] = [recordingLog(), recordingLog()];
      const [first, second] = [exporterOn(a, { pollMs: 50 }), exporterOn(b, { pollMs: 50 })];
      await Promise.all([first.start(logA), second.start(logB)]);
      const requested = [];
      for (let i = 0; i < 8; i++) requested.push(await (i % 2 ? first : second).request(CUSTOMER, 'u', { start: fixture.start, end: fixture.end }));
      // Each waits on the other's tasks too: whoever ran them, the waiter hears the outcome.
      const done = await Promise.all(requested.map((one, i) => (i % 3 ? first : second).finished(one)));
      expect(done.map((one) => ({ status: one.status, rows: one.rows, file: one.file }))).toEqual(
        requested.map((one) => ({ status: 'SUCCESSFUL', rows: fixture.rows.length - 2, file: `exports/${one.id}.csv` })),
      );
      const written = [...logA.lines, ...logB.lines].filter((line) => line.msg === 'export written').map((line) => line.task);
      expect(written.sort()).toEqual(requested.map((one) => one.id).sort());
      for (const one of done) expect(readFileSync(join(database.dataDir, one.file!), 'utf8')).toBe(fixture.csv);
      expect(readdirSync(join(database.dataDir, 'exports')).filter((name) => !name.endsWith('.csv'))).toEqual([]);
    });

    it('take over a task whose instance stopped renewing its lease, once the lease ended', async () => {
      await a.events.insert(CUSTOMER, fixture.rows);
      const abandoned = (await a.exportTasks.create(task(randomUUID())))!;
      // The dead instance's claim, and the temporary file of its attempt.
      expect((await a.exportTasks.claim('a-dead-instance', Date.now(), SHORT_LEASE.leaseMs))?.id).toBe(abandoned.id);
      mkdirSync(join(database.dataDir, 'exports'), { recursive: true });
      writeFileSync(join(database.dataDir, 'exports', `${abandoned.id}.a1.csv.partial`), 'id,cl');
      const log = recordingLog();
      const taker = exporterOn(b, SHORT_LEASE);
      await taker.start(log);
      // Another instance that only waits for the outcome (no slot: it claims nothing).
      const done = await exporterOn(a, { ...SHORT_LEASE, concurrency: 0 }).finished(abandoned);
      expect(done).toMatchObject({ status: 'SUCCESSFUL', rows: fixture.rows.length - 2, file: `exports/${abandoned.id}.csv` });
      expect(log.lines.filter((line) => line.msg === 'export written').map((line) => line.task)).toEqual([abandoned.id]);
      expect(readdirSync(join(database.dataDir, 'exports'))).toEqual([`${abandoned.id}.csv`]);
      expect(readFileSync(join(database.dataDir, done.file!), 'utf8')).toBe(fixture.csv);
    });

    it('record nothing for a task whose lease was lost meanwhile, and delete their file', async () => {
      await a.events.insert(CUSTOMER, fixture.rows);
      // The lease is lost just before the file would take the task's name: another instance claimed it.
      const stealing: ExportTaskRepository['renew'] = async (id, owner, until) => {
        await b.exportTasks.claim('thief', Date.now() + 3_600_000, 60_000);
        return a.exportTasks.renew(id, owner, until);
      };
      const log = recordingLog();
      const loser = exporterOn({ exportTasks: replacing(a.exportTasks, { renew: stealing }), locks: a.locks, locator: a.locator }, { ...SHORT_LEASE, renewMs: 3_600_000 });
      await loser.start(log);
      const requested = await loser.request(CUSTOMER, 'u', { start: fixture.start, end: fixture.end });
      await log.when('export lease lost: its outcome is another instance\'s');
      expect(readdirSync(join(database.dataDir, 'exports')).filter((name) => name.startsWith(requested.id))).toEqual([]);
      expect(await a.exportTasks.byId(CUSTOMER, requested.id)).toMatchObject({ status: 'PENDING' });
      expect(await b.exportTasks.succeed(requested.id, 'thief', T0 + 9, 99, `exports/${requested.id}.csv`)).toBe(true);
      expect(await loser.finished(requested)).toMatchObject({ status: 'SUCCESSFUL', rows: 99, completed: T0 + 9 });
      expect(log.lines.filter((line) => line.msg === 'export written')).toEqual([]);
    });

    it(`fail a task claimed ${EXPORT_MAX_ATTEMPTS} times without an outcome instead of running it again`, async () => {
      const crashing = (await a.exportTasks.create(task(randomUUID())))!;
      // Each claim's lease ended before the next: their instances died one after the other.
      for (let i = 0; i < EXPORT_MAX_ATTEMPTS; i++) expect((await a.exportTasks.claim(`dead-${i}`, i * 10, 1))?.attempts).toBe(i + 1);
      const exporter = exporterOn(b, SHORT_LEASE);
      await exporter.start();
      expect(await exporter.finished(crashing)).toMatchObject({
        status: 'FAILED',
        completed: T0 + 1000,
        failure: `the export was started ${EXPORT_MAX_ATTEMPTS} times and its server stopped each time before it finished`,
      });
    });

    it('say once that claiming fails while the database refuses, and when it works again', async () => {
      let refusals = 3;
      const claim: ExportTaskRepository['claim'] = async (...args) => {
        if (refusals-- > 0) throw new Error('PostgreSQL is unavailable: connection refused');
        return a.exportTasks.claim(...args);
      };
      const log = recordingLog();
      await exporterOn({ exportTasks: replacing(a.exportTasks, { claim }), locks: a.locks, locator: a.locator }, SHORT_LEASE).start(log);
      await log.when('claiming export tasks works again');
      expect(log.lines.map((line) => line.msg)).toEqual(['claiming export tasks failed', 'claiming export tasks works again']);
    });

    it('release the running tasks on close, so another instance takes them at once, and reject their waiters', async () => {
      await a.events.insert(CUSTOMER, fixture.rows);
      let claimedOne!: () => void;
      const claimed = new Promise<void>((resolve) => (claimedOne = resolve));
      const tasks = replacing(a.exportTasks, {
        claim: async (...args) => {
          const got = await a.exportTasks.claim(...args);
          if (got) claimedOne();
          return got;
        },
      });
      const stopping = exporterOn({ exportTasks: tasks, locks: a.locks, locator: a.locator });
      const requested = await stopping.request(CUSTOMER, 'u', { start: fixture.start, end: fixture.end });
      const waiter = stopping.finished(requested).then(
        () => 'resolved',
        (error: Error) => error.message,
      );
      await claimed;
      await stopping.close();
      expect(await waiter).toBe(`the server stopped before export task ${requested.id} finished; the task stays PENDING and runs elsewhere or after a restart`);
      expect(await b.exportTasks.claim('B', Date.now(), 60_000)).toMatchObject({ id: requested.id, status: 'PENDING', attempts: 1 });
      expect(existsSync(join(database.dataDir, 'exports')) ? readdirSync(join(database.dataDir, 'exports')) : []).toEqual([]);
    });
  });
}

describe('export leases on SQLite', () => leaseSuite('sqlite'));
describePostgres('export leases on PostgreSQL', () => leaseSuite('postgres'));
