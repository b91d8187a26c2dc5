import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { call } from '../helpers/http.js';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { TEST_MASTER_KEY } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';

// Only in vitest's `postgres` project (vitest.config.ts): `scanhub serve --database` as a process
// on a private cluster that the test stops mid-ingest and starts again.

const PASSWORD = 'outage-admin-password';
const MESSAGES = 60;
const EVERY_MS = 40;

describePostgres('scanhub serve --database while PostgreSQL stops and comes back', () => {
  let cluster: PgCluster;
  let database: string;
  let serve: ServeProcess;
  let url: string;
  let dataDir: string;

  beforeAll(async () => {
    cluster = await startPgCluster();
    database = await freshDatabase(cluster.url);
    dataDir = mkdtempSync(join(tmpdir(), 'scanhub-outage-'));
    const port = await freePort();
    serve = spawnServe(['--data-dir', dataDir, '--database', database, '--port', String(port), '--mqtt-port', '0'], {
      SCANHUB_MASTER_KEY: TEST_MASTER_KEY,
      SCANHUB_ADMIN_PASSWORD: PASSWORD,
      SCANHUB_CUSTOMER_ID: 'acme',
      SCANHUB_LOG_LEVEL: 'warn',
    });
    await serve.stderrMatches(/scanhub is serving/);
    url = `http://127.0.0.1:${port}`;
  }, 60_000);
  afterAll(async () => {
    if (serve) await stop(serve);
    await cluster?.destroy();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** The server notices the outage, and the return, by itself: its health is asked until it has. */
  const HEALTH = { what: 'the health the outage implies', timeoutMs: 60_000, everyMs: 1 };

  it('answers 503 while it is down, and stores every acknowledged message exactly once', async () => {
    const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: PASSWORD } });
    const token = (login.body as { id_token: string }).id_token;
    const admin = new ApiClient(url, token);
    const gateway = await provisionGateway({ admin, anonymous: new ApiClient(url) });
    const client: MqttClient = await connectGateway(gateway, { reconnectPeriod: 100, reconnectOnConnackError: true, clean: true });

    const acknowledged: string[] = [];
    const publishes: Promise<void>[] = [];
    let firstAcks!: () => void;
    const someAcknowledged = new Promise<void>((resolve) => (firstAcks = resolve));
    // A steady rate: one message every EVERY_MS, each resolving at its PUBACK (mqtt.js resends unacknowledged ones after reconnecting).
    // Real time on purpose: the gateway keeps publishing while the database goes away and returns.
    const publisher = (async () => {
      for (let i = 0; i < MESSAGES; i++) {
        const id = randomUUID();
        publishes.push(
          client.publishAsync(gateway.topic, JSON.stringify({ id, type: 'scan', scan_code: `OUT-${i}` }), { qos: 1 }).then(() => {
            acknowledged.push(id);
            if (acknowledged.length === 10) firstAcks();
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
      }
    })();

    await someAcknowledged;
    await cluster.stop();
    // The database, and (once its connection has noticed) the LISTEN of signals between instances.
    const health = await until(() => call(url, 'GET', '/healthz'), (answer) => answer.status === 503 && JSON.stringify(answer.body).includes('signals ('), HEALTH);
    expect((health.body as { details: string }).details).toMatch(/^Not ready yet: database \(PostgreSQL is unavailable: .+\), signals \(not hearing other instances \(LISTEN scanhub\): .+; retrying\)\./);
    const refused = await call(url, 'GET', '/acme/gateways', { token });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ title: 'Service Unavailable', details: expect.any(String) });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    // /metrics still answers (within its 2 s bound for the store), without what only the database knows.
    const scrapeDown = await call(url, 'GET', '/metrics');
    expect(scrapeDown.status).toBe(200);
    expect(scrapeDown.text).toMatch(/^scanhub_ingest_events_total \d+$/m);
    expect(scrapeDown.text).not.toMatch(/^scanhub_database_size_bytes /m);
    expect(scrapeDown.text).not.toMatch(/^scanhub_export_tasks\{/m);

    await cluster.start();
    await publisher;
    await Promise.all(publishes);
    await client.endAsync();
    expect(acknowledged).toHaveLength(MESSAGES);

    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string; n: string }>('SELECT id, count(*) AS n FROM events GROUP BY id');
      const stored = new Map(rows.map((row) => [row.id, Number(row.n)]));
      expect(acknowledged.filter((id) => stored.get(id) !== 1)).toEqual([]);
    } finally {
      await db.end();
    }
    expect((await until(() => call(url, 'GET', '/healthz'), (answer) => answer.status === 200, HEALTH)).body).toMatchObject({ database: 'ok', signals: 'ok' });
    const scrapeUp = (await call(url, 'GET', '/metrics')).text;
    expect(scrapeUp).toMatch(/^scanhub_database_size_bytes [1-9]\d*$/m);
    expect(scrapeUp).toMatch(/^scanhub_export_tasks\{state="PENDING"\} 0$/m);
    expect(scrapeUp).toMatch(new RegExp(`^scanhub_ingest_events_total ${MESSAGES}$`, 'm'));
  }, 120_000);

  it('hears signals again after the restart: a gateway deleted then is disconnected at once', async () => {
    const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: PASSWORD } });
    const admin = new ApiClient(url, (login.body as { id_token: string }).id_token);
    const gateway = await provisionGateway({ admin, anonymous: new ApiClient(url) });
    const client = await connectGateway(gateway);
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await admin.delete(`/acme/gateways/${gateway.id}`);
    await closed;
    await expect(connectGateway(gateway)).rejects.toMatchObject({ code: 5 });
  });
});
