import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type HttpAnswer } from '../helpers/http.js';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { freshDatabase } from '../helpers/postgres.js';
import { adminOf, connectedGateways, lostOrDuplicated, ScanLoad, storedIdCounts } from '../helpers/scan-load.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { cannotMountSmallFs, mountSmallFs, type SmallFs } from '../helpers/small-fs.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { TEST_MASTER_KEY, TEST_STORE } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';

// DESIGN.md "Full disk", for real: `scanhub serve` as a process with its database on a tmpfs the
// test mounts (SQLite: the data directory; PostgreSQL: a private cluster's data directory), gateways
// publishing over MQTT/TLS, and a filler file that takes the last byte of the file system.

const PASSWORD = 'full-disk-admin-password';
const GATEWAYS = 4;

const cannot = await cannotMountSmallFs();
if (cannot && process.env.CI === 'true') throw new Error(`CI runs the full-disk tests as root, but: ${cannot}`);
if (cannot) console.warn(`full-disk tests skipped: ${cannot}`);

// The server changes state by itself (its storage probe backs off to 2 s): asked until it has.
const HEALTH = { what: 'the health the disk implies', timeoutMs: 60_000 };

(cannot ? describe.skip : describe)(`scanhub serve on ${TEST_STORE} when its disk fills up`, () => {
  let small: SmallFs;
  let cluster: PgCluster | undefined;
  let database: string | undefined;
  let dataDir: string;
  let serve: ServeProcess;
  let url: string;

  beforeAll(async () => {
    // SQLite: room for the data directory and the WAL of a few thousand events. PostgreSQL: for
    // initdb's cluster (about 40 MiB), one database and the WAL segments (16 MiB each).
    small = await mountSmallFs(TEST_STORE === 'postgres' ? 200 : 32);
    if (TEST_STORE === 'postgres') {
      cluster = await startPgCluster({ parentDir: small.dir });
      database = await freshDatabase(cluster.url);
      // A timed checkpoint on a full disk PANICs the checkpointer (PostgreSQL then restarts): not the
      // state this test looks at, so none falls within it.
      await superuser(cluster.url, ["ALTER SYSTEM SET checkpoint_timeout = '1d'", 'SELECT pg_reload_conf()']);
      dataDir = mkdtempSync(join(tmpdir(), 'scanhub-full-disk-'));
    } else dataDir = join(small.dir, 'data');
    const port = await freePort();
    serve = spawnServe(
      ['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0', ...(database ? ['--database', database] : [])],
      { SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_CUSTOMER_ID: 'acme', SCANHUB_LOG_LEVEL: 'warn', ...(database ? { SCANHUB_MASTER_KEY: TEST_MASTER_KEY } : {}) },
    );
    await serve.stderrMatches(/scanhub is serving/);
    url = `http://127.0.0.1:${port}`;
  }, 120_000);

  afterAll(async () => {
    if (serve) await stop(serve);
    await cluster?.destroy();
    await small?.unmount();
    if (TEST_STORE === 'postgres' && dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops acknowledging, answers 507 to writes and 503 on /healthz, keeps reading, and resumes by itself when space returns', async () => {
    const api = await adminOf(url, PASSWORD);
    const gateways = await connectedGateways(api, GATEWAYS, 200);
    // Used first while the disk is full: its `last_used` cannot be written then, and the read goes on.
    const apiKey = await api.admin.post<{ key: string }>('/acme/api-keys', { name: 'full-disk-reader', permissions: ['gateway.read'] });
    const load = new ScanLoad(gateways, { everyMs: 20, max: 20_000, prefix: 'FULL' });
    load.start();
    await load.acknowledgedAtLeast(40);

    // PostgreSQL PANICs when it cannot write a new WAL segment: a fresh segment first, so that only
    // data files run out of space here (docs/postgresql.md "Full disk" tells both cases).
    if (cluster) await superuser(cluster.url, ['SELECT pg_switch_wal()', 'CHECKPOINT']);
    expect(small.fill()).toBeGreaterThan(0);

    const reason =
      TEST_STORE === 'postgres' ? 'PostgreSQL has no space left on its disk (SQLSTATE 53100 disk_full)' : 'the disk of the database is full (SQLITE_FULL)';
    const threads = TEST_STORE === 'postgres' ? 'ingest writer running (1 start)' : 'ingest writer running (1 start), checkpointer running (1 start)';
    const health = await until(
      () => call(url, 'GET', '/healthz'),
      (answer) => answer.status === 503 && /^Not ready yet: mqtt \(.*database \(storage full/.test((answer.body as { details: string }).details),
      HEALTH,
    );
    expect(health.body).toEqual({
      title: 'Service Unavailable',
      details:
        `Not ready yet: mqtt (${reason}: messages wait unacknowledged and are committed once there is space), ` +
        `database (storage full: ${reason}; writes are refused until space is freed). Threads: ${threads}.`,
    });

    // Published while full: no PUBACK until there is space again.
    const [first] = gateways;
    let markerAcknowledged = false;
    const marker = load.publish(first!.gateway, first!.client).then((id) => ((markerAcknowledged = true), id));

    const bulk = { gateways: Array.from({ length: 500 }, (_, i) => ({ name: `full-${i}`, usecase: 'picking', station: `station-${i}` })) };
    const refused = await call(url, 'POST', '/acme/gateways/bulk-create', { token: api.token, json: bulk });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 507,
      body: {
        title: 'Insufficient Storage',
        details: `The database cannot be written: ${reason}. Reads still work; writes succeed again once space is freed.`,
      },
    });
    const acknowledgedWhileFull = load.acknowledged.size;

    const listed = await call(url, 'GET', '/acme/gateways', { token: api.token });
    expect([listed.status, (listed.body as { items: unknown[] }).items.length]).toEqual([200, GATEWAYS]);
    const listedWithKey = await call(url, 'GET', '/acme/gateways', { authorization: apiKey.key });
    expect([listedWithKey.status, (listedWithKey.body as { items: unknown[] }).items.length]).toEqual([200, GATEWAYS]);
    const events = await call(url, 'GET', '/acme/events?limit=10', { token: api.token });
    expect([events.status, (events.body as { items: unknown[] }).items.length]).toEqual([200, 10]);
    expect([markerAcknowledged, load.acknowledged.size]).toEqual([false, acknowledgedWhileFull]);

    small.unfill();
    const markerId = await marker;
    const healthy = await until(
      () => call(url, 'GET', '/healthz'),
      (answer) => answer.status === 200,
      HEALTH,
    );
    expect(healthy.body).toMatchObject({ status: 'ok', mqtt: 'ok', database: 'ok' });
    // No thread was restarted: a full disk is not a crash.
    const started = Object.values((healthy.body as { threads: Record<string, { starts: number; last_cause: string | null }> }).threads);
    expect(started.map(({ starts, last_cause }) => [starts, last_cause])).toEqual(started.map(() => [1, null]));
    const created = await call(url, 'POST', '/acme/gateways/bulk-create', { token: api.token, json: { gateways: bulk.gateways.slice(0, 2) } });
    expect(created.status).toBe(201);

    load.stop();
    await load.allAcknowledged();
    await Promise.all(gateways.map(({ client }) => client.endAsync()));
    expect(load.acknowledged.size).toBeGreaterThan(acknowledgedWhileFull);
    expect(await stop(serve)).toEqual({ code: 0, signal: null });
    const stored = await storedIdCounts(database ? { postgresUrl: database } : { sqliteFile: join(dataDir, 'scanhub.db') });
    expect(stored.get(markerId)).toBe(1);
    expect(lostOrDuplicated(load.acknowledged, stored)).toEqual([]);
  }, 180_000);
});

(cannot ? describe.skip : describe)(`exports on ${TEST_STORE} when the disk of the export files is full`, () => {
  let small: SmallFs;
  let t: TestServer;
  beforeAll(async () => {
    small = await mountSmallFs(4);
    // The database elsewhere, the export files (--blob-dir) on the small file system.
    t = await startTestServer({ blobDir: small.dir });
  });
  afterAll(async () => {
    await t?.close();
    await small?.unmount();
  });

  it('fails the task with the reason, answers 507 to a synchronous export, and exports again once space returns', async () => {
    small.fill();
    const refused = await call(t.url, 'GET', `/${CUSTOMER}/events/export`, { token: t.adminToken });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 507,
      body: { title: 'Insufficient Storage', details: 'The export file could not be written: the disk of the export files is full. Try again once space is freed.' },
    });
    const { task } = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`);
    const failed = await t.server.ctx.exporter.finished((await t.server.ctx.store.exportTasks.byId(CUSTOMER, task))!);
    expect(failed).toMatchObject({ status: 'FAILED', file: null });
    expect(failed.failure).toMatch(new RegExp(`^no space left for the export file ${small.dir}/exports/${task}\\.a1\\.csv\\.partial \\(ENOSPC\\): its file system is full$`));
    expect(await t.admin.get(`/${CUSTOMER}/events/export/tasks/${task}`)).toEqual({ task, completed: true, status: 'FAILED' });

    small.unfill();
    const exported = await call(t.url, 'GET', `/${CUSTOMER}/events/export`, { token: t.adminToken });
    expect(exported.status).toBe(201);
  });
});

/** Runs statements as the cluster's superuser. */
async function superuser(clusterUrl: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
