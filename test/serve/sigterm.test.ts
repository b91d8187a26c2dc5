import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, connectedGateways, lostOrDuplicated, ScanLoad, storedIdCounts } from '../helpers/scan-load.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { TEST_STORE, testDatabase, type TestDatabase } from '../helpers/test-store.js';

// Graceful shutdown under load: `scanhub serve` as a process, QoS 1 scans from many gateways over
// MQTT/TLS, `kill -TERM` in the middle, then a second `serve` on the same data. Every message that
// got a PUBACK must be stored exactly once; the others may or may not be (README "SIGTERM or SIGINT").

const PASSWORD = 'sigterm-admin-password';
const GATEWAYS = 12;

describe(`kill -TERM of scanhub serve on ${TEST_STORE} while gateways publish`, () => {
  let database: TestDatabase;
  let dataDir: string;
  let serve: ServeProcess | undefined;
  const start = async () => {
    const port = await freePort();
    const process = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0'], { SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_CUSTOMER_ID: 'acme', SCANHUB_LOG_LEVEL: 'info' }, database);
    await process.stderrMatches(/scanhub is serving/);
    return { process, url: `http://127.0.0.1:${port}` };
  };

  beforeAll(async () => {
    database = await testDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'scanhub-sigterm-'));
  });
  afterAll(async () => {
    if (serve) await stop(serve);
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits 0, and every acknowledged message is stored exactly once when serve starts again', async () => {
    const first = await start();
    serve = first.process;
    const gateways = await connectedGateways(await adminOf(first.url, PASSWORD), GATEWAYS);
    const load = new ScanLoad(gateways, { everyMs: 10, perTick: 4, max: 100_000, prefix: 'TERM' });
    load.start();
    await load.acknowledgedAtLeast(500);

    const acknowledgedBefore = load.acknowledged.size;
    const inFlight = load.published.length - acknowledgedBefore;
    const closed = Promise.all(gateways.map(({ client }) => new Promise<void>((resolve) => client.once('close', () => resolve()))));
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    await closed;
    load.stop();
    const drainLog = serve.stdout();
    serve = undefined;
    await Promise.all(gateways.map(({ client }) => client.endAsync(true)));
    // Load indeed: messages were on their way when the signal came.
    expect(inFlight).toBeGreaterThan(0);
    expect(drainLog).toMatch(/"msg":"ingest closed"/);

    const second = await start();
    serve = second.process;
    const stored = await storedIdCounts(TEST_STORE === 'postgres' ? { postgresUrl: database.args[1]! } : { sqliteFile: join(dataDir, 'scanhub.db') });
    expect(lostOrDuplicated(load.acknowledged, stored)).toEqual([]);
    // Nothing stored that was not published; and the drain acknowledged everything it committed
    // (PUBACKs written and read before the connections closed), so the gateways resend only
    // what was never stored.
    const published = new Set(load.published);
    expect([...stored.keys()].filter((id) => !published.has(id))).toEqual([]);
    expect([...stored.keys()].filter((id) => !load.acknowledged.has(id))).toEqual([]);
    expect(await stop(serve)).toEqual({ code: 0, signal: null });
    serve = undefined;
  }, 120_000);
});
