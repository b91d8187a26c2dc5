// A webhook's next batch queued by the deliverer (SqliteWebhooks.enqueue) does not sleep the
// server's thread in SQLite's busy handler while the ingest writer holds the write lock: it goes
// in between two commits (src/store/sqlite/between-commits.ts), as the successes do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { SecretRepository } from '../../../src/store/ports/index.js';
import { LocalSignals } from '../../../src/store/shared/local-signals.js';
import { WebhookSecretBox } from '../../../src/store/shared/sealing.js';
import { openDatabase, type Db } from '../../../src/store/sqlite/open.js';
import { SqliteWebhooks } from '../../../src/store/sqlite/webhooks.js';

const dirs: string[] = [];
const open: Db[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('queues a batch once the write lock is free and a commit is heard of, the thread turning meanwhile', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-webhook-enqueue-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'db.sqlite'));
  const writer = openDatabase(join(dir, 'db.sqlite'));
  open.push(db, writer);
  // The delivery alone, without its customer and webhook rows.
  db.pragma('foreign_keys = OFF');
  const signals = new LocalSignals();
  const webhooks = new SqliteWebhooks(db, new WebhookSecretBox({} as SecretRepository), signals);
  writer.prepare('BEGIN IMMEDIATE').run();
  const started = performance.now();
  let queued = false;
  const enqueue = webhooks
    .enqueue({ id: 'd1', webhook_id: 'w1', customer_id: 'c1', type: 'event.batch', created: 1, from: [0], upto: [5], payload: null })
    .then(() => (queued = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  // A busy handler would have held the thread for the whole busy_timeout (5 s) before this timer.
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(queued).toBe(false);
  writer.prepare('COMMIT').run();
  await signals.publish({ kind: 'events-committed', customers: [] });
  await enqueue;
  expect(await webhooks.head('w1')).toMatchObject({ id: 'd1', status: 'PENDING', from: [0], upto: [5] });
});
