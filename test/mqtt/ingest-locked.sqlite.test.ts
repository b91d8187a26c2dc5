import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { databaseFile } from '../../src/store/sqlite/open.js';
import { messagesSubmitted, provisionGateway, type TestGateway, GatewayClients } from '../helpers/mqtt.js';
import { selectRows } from '../helpers/store-rows.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A commit that SQLite refuses (the write lock held past busy_timeout by another connection), and
// one that waits for the lock held a moment.
// PostgreSQL's counterpart, the server going away mid-ingest, is test/serve/outage.postgres.test.ts.

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

  it('waits for a write lock another connection holds for less than busy_timeout, then commits and acknowledges', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    let closed = false;
    client.once('close', () => (closed = true));
    // An HTTP write of the server's own connection, or a CLI process, holds the write lock a moment.
    const blocker = new Database(databaseFile(t.dataDir));
    blocker.exec('BEGIN IMMEDIATE');
    const acknowledged = client.publishAsync(gateway.topic, JSON.stringify({ id: ID[0], type: 'scan' }), { qos: 1 });
    await messagesSubmitted(t, 1);
    // The point is that nothing happens meanwhile, so there is no event to await: a commit that did
    // not wait for the lock would have failed at once (its transaction began reading, and SQLite
    // calls no busy handler when a read transaction asks to write).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 0, failed: 0 });
    blocker.exec('COMMIT');
    blocker.close();
    await acknowledged;
    expect(closed).toBe(false);
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 1, failed: 0 });
    expect(((await events()) as { id: string }[]).map((e) => e.id)).toEqual([ID[0]]);
  });
});
