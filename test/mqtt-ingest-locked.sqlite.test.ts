import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { databaseFile } from '../src/server/serve.js';
import { provisionGateway, type TestGateway, GatewayClients } from './helpers/mqtt.js';
import { selectRows } from './helpers/store-rows.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// A commit that SQLite refuses (the write lock held past busy_timeout by another connection).
// PostgreSQL's counterpart, the server going away mid-ingest, is test/serve-outage.test.ts.

let t: TestServer;
const clients = new GatewayClients();
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(async () => {
  await clients.endAll();
  await t.close();
});

const connect = (gateway: TestGateway) => clients.connect(gateway);

const events = async () => (await selectRows(t.server, 'SELECT id FROM events ORDER BY id'));
const ID = ['5d1c2f0e-8a4b-4c3d-9e2f-1a2b3c4d5e01'];

describe('durability on SQLite', () => {
  it('sends no PUBACK when the commit fails, and stores the redelivered message once', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    // Another connection holds the write lock past busy_timeout: the ingest commit fails.
    const blocker = new Database(databaseFile(t.dataDir));
    blocker.exec('BEGIN IMMEDIATE');
    const outcome = await new Promise<string>((resolve) => {
      client.once('close', () => resolve('closed'));
      client.publish(gateway.topic, JSON.stringify({ id: ID[0], type: 'scan' }), { qos: 1 }, (error) => !error && resolve('acknowledged'));
    });
    blocker.exec('ROLLBACK');
    blocker.close();
    expect(outcome).toBe('closed');
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 0, failed: 1 });
    expect((await events())).toEqual([]);

    const again = await connect(gateway);
    await again.publishAsync(gateway.topic, JSON.stringify({ id: ID[0], type: 'scan' }), { qos: 1 });
    expect(((await events()) as { id: string }[]).map((e) => e.id)).toEqual([ID[0]]);
  }, 20_000);

});
